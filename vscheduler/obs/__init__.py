"""Observability: metrics on an injected registry, logging, the HTTP endpoints."""

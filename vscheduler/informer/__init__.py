"""Ingest: list + watch per kind, relist after 410, typed events to a sink, a ready gate."""

"""Integration-test support: a real local Kubernetes control plane (see README.md here)."""

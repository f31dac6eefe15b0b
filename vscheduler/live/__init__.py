"""The live-cluster tools: `snapshot`, `explain`, `queues`, `compare-decisions`.

Each reads the cluster through a read-only client (`kube.client.KubeApi(read_only=True)`: any
write is refused before it is sent) and runs the same code `simulate` runs on files. Docs:
docs/live-tools.md.
"""

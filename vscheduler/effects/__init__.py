"""Out to the cluster: a cycle's decisions become API calls, off the cycle thread.

`executor.Effects` carries a `CycleResult` out through the `ports.ClusterWriter` on a bounded
worker pool; `status` decides what to write (conditions and PodGroup statuses as differences, the
Events they call for); `sent` remembers writes in flight; `retry` holds the only retry rules.
"""

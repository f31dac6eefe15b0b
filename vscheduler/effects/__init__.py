"""Out to the cluster: a cycle's decisions become API calls, off the cycle thread.

`executor.EffectsExecutor` carries a `CycleResult` out through the `ports.ClusterWriter` on
bounded worker pools (`workers`), composed of one part per kind of write (`binds`, `evictions`,
`pod_writes`, `podgroup_writes`, `releases`, `queue_writes`, `events`; `outcomes` tells
metrics of them); `status` decides what to write (conditions and PodGroup statuses as
differences, the Events they call for); `sent` remembers writes in flight; `terms` knows which
queued writes may still be sent (leadership terms, binds queued per node, the check of the
decision a worker is sending); `retry` holds the only retry rules.
"""

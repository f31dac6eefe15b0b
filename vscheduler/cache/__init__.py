"""The truth between cycles: watch events in, cheap consistent snapshots out.

`cache.SchedulerCache` is the informers' Sink and the loop's snapshot source; `tables` stores each
kind's raw objects and facts; `entries` picks each kind's converter and what a malformed object
becomes; `malformed` builds the minimal facts of a pod or PodGroup the converters reject;
`assumed` holds binds and evictions sent but not yet seen by the watch. Nothing here talks to the
API server.
"""

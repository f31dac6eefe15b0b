"""vscheduler: a Volcano-compatible batch scheduler for Kubernetes.

The map of the package (data flows one way, and import-linter checks it)::

    kube-apiserver -> informer/ -> cache/ --snapshot--> framework.Session
                                                          |  actions/ call the extension
                                                          |  points that plugins/ registered
                                                          v
                                   committed Statements = commands -> effects/ -> kube-apiserver

Every subpackage and top-level module (tests/unit/docs/test_front_doors.py keeps this true)::

    model/         pure, frozen vocabulary: Resources, TaskStatus, facts, ClusterSnapshot
    errors.py      the exception tree
    clock.py       time, injected: the only module that reads the system clock
    conf/          the policy: strict Volcano-compatible parse and validation
    convert/       raw Kubernetes objects (dicts) -> model facts
    informer/      list + watch per kind, typed events to a sink, a ready gate
    cache/         the truth between cycles: watch events in, consistent snapshots out
    effects/       a cycle's decisions carried out as API calls, off the cycle thread
    framework/     Session, Ledger, Statement, the extension points: table, Protocols, combinators
    plugin_api.py  the one module plugins import
    actions/       enqueue, allocate, backfill, preempt, reclaim, shuffle, gangpreempt,
                   gangreclaim
    plugins/       one module (or package) per plugin
    catalog.py     the built-in registry: every action and plugin by its Volcano name
    cycle.py       one scheduling cycle: snapshot + policy -> CycleResult
    obs/           metrics, logging, the HTTP endpoints, node usage from Prometheus
    testing/       the shipped test kit: builders, scenarios, sessions, strategies
    runtime/       the long-running scheduler: settings, the policy holder, the cycle loop
    kube/          the adapter to the API server: the only importer of `kubernetes`
    simulate.py    the what-if tool: snapshot files in, decisions out
    live/          the live-cluster tools behind snapshot, explain, queues, compare-decisions
    election.py    leader election on a Lease
    app.py         the composition root of `vscheduler run`
    cli.py         argv -> the commands run, simulate, validate-config, version, snapshot,
                   explain, queues, compare-decisions
    __main__.py    `python -m vscheduler`

Layers, top to bottom: a module imports only from layers below it, and the peers in one layer
(`|`) not from each other. This is the import-linter `layers` contract in pyproject.toml::

    cli
    app | live
    kube | simulate
    runtime
    obs | testing
    cycle
    catalog
    actions | plugins
    plugin_api
    framework
    effects
    cache
    informer
    conf | convert
    model | clock
    errors
"""

from __future__ import annotations

__version__ = "0.1.0"

"""vscheduler: a Volcano-compatible batch scheduler for Kubernetes.

The map of the package (data flows one way, and import-linter checks it)::

    kube-apiserver -> informer/ -> cache/ --snapshot--> framework.Session
                                                          |  actions/ call the extension
                                                          |  points that plugins/ registered
                                                          v
                                   committed Statements = commands -> effects/ -> kube-apiserver

    model/      pure, frozen vocabulary: Resources, TaskStatus, facts, ClusterSnapshot
    conf/       the policy: strict Volcano-compatible parse and validation
    framework/  Session, Ledger, Statement, the extension-point table and its combinators
    plugin_api  the one module plugins import
    actions/    enqueue, allocate, backfill
    plugins/    one module per plugin plus an explicit builtin registry
    cycle.py    one scheduling cycle: snapshot + policy -> CycleResult
    simulate.py the what-if tool: snapshot files in, decisions out
    cli.py      argv -> the commands `simulate` and `validate-config`

Layers, top to bottom (a module imports only from layers below it): cli, simulate, testing,
cycle, actions | plugins, plugin_api, framework, conf, model | obs | clock | errors.
"""

from __future__ import annotations

__version__ = "0.1.0"

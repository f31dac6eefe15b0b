"""Volcano's and klog's flags that have no counterpart in vscheduler: accepted, and why.

Volcano's `vc-scheduler` (cmd/scheduler/app/options, plus kube's leader-election flags, klog's and
`--log-flush-frequency`) takes flags that steer what vscheduler does differently or not at all.
Each is accepted so a Volcano Deployment's arguments start vscheduler; each one given draws one
warning with the reason below, unless its value asks for what vscheduler does anyway (`harmless`:
`--enable-healthz=true`, `--percentage-nodes-to-find=100`, `--default-queue=default`, ...).
klog's flags are accepted in both spellings pflag accepts (`--log-dir`, `--log_dir`).

Owns the table only; `flags` parses and reports.
"""

from __future__ import annotations

import dataclasses
from typing import Final


@dataclasses.dataclass(frozen=True, slots=True)
class ForeignFlag:
    """A flag accepted without effect."""

    names: tuple[str, ...]
    """Without the leading `--`; the first is the one warnings name."""
    reason: str
    """Why it has no effect here, as the warning ends."""
    volcano_default: str
    boolean: bool = False
    harmless: tuple[object, ...] = ()
    """Values that ask for what vscheduler does anyway: no warning."""

    @property
    def dest(self) -> str:
        """The argparse destination."""
        return "foreign_" + self.names[0].replace("-", "_")

    @property
    def metavar(self) -> str:
        """How `--help` shows the value."""
        return "VALUE"

    @property
    def help(self) -> str:
        """The `--help` text."""
        default = f"(default: {self.volcano_default} in Volcano)"
        return f"Volcano's flag, no effect here: {self.reason} {default}"


_HTTP = "/metrics, /healthz, /livez and /readyz are always served on --listen-address"
_LOGS = "logs go to stderr, formatted by --log-format"
_EVERY_NODE = "every feasible node is scored"
_NO_VOLUMES = "this version does not schedule by volumes or storage capacity"

FOREIGN_FLAGS: Final[tuple[ForeignFlag, ...]] = (
    ForeignFlag(("enable-healthz",), _HTTP, "false", boolean=True, harmless=(True,)),
    ForeignFlag(("enable-metrics",), _HTTP, "false", boolean=True, harmless=(True,)),
    ForeignFlag(("healthz-address",), _HTTP, ":11251"),
    ForeignFlag(("enable-pprof",), "there is no pprof endpoint", "false", True, (False,)),
    ForeignFlag(
        ("node-worker-threads",), "node events are applied by the node informer's thread", "20"
    ),
    ForeignFlag(("percentage-nodes-to-find",), _EVERY_NODE, "0", harmless=("100",)),
    ForeignFlag(("minimum-feasible-nodes",), _EVERY_NODE, "100"),
    ForeignFlag(("minimum-percentage-nodes-to-find",), _EVERY_NODE, "5"),
    ForeignFlag(
        ("default-queue",),
        "a pod without a PodGroup or a queue annotation is in the queue 'default'",
        "default",
        harmless=("default",),
    ),
    ForeignFlag(
        ("priority-class",), "PriorityClasses are always read", "true", True, harmless=(True,)
    ),
    ForeignFlag(
        ("resync-period",), "the informers never resync on a timer", "0", harmless=("0", "0s")
    ),
    ForeignFlag(
        ("resource-sync-timeout",), "scheduling waits until every informer has synced", "60s"
    ),
    ForeignFlag(("plugins-dir",), "plugins are built in", '""', harmless=("",)),
    ForeignFlag(("csi-storage",), _NO_VOLUMES, "true", boolean=True),
    ForeignFlag(("ignored-provisioners",), _NO_VOLUMES, "none"),
    ForeignFlag(("node-selector",), "every node is considered", "none"),
    ForeignFlag(("cache-dumper",), "there is no cache dumper", "true", True, (False,)),
    ForeignFlag(("cache-dump-dir",), "there is no cache dumper", "/tmp"),
    ForeignFlag(("gate-removal-worker-num",), "scheduling gates are not removed", "5"),
    ForeignFlag(
        ("disable-default-scheduler-config",),
        "a policy that does not load leaves the last good one in force",
        "false",
        boolean=True,
    ),
    ForeignFlag(("scheduler-sharding-mode",), "nodes are not sharded", "none", harmless=("none",)),
    ForeignFlag(("scheduler-sharding-name",), "nodes are not sharded", "volcano"),
    ForeignFlag(("feature-gates",), "vscheduler has no feature gates", "none"),
    ForeignFlag(
        ("master",), "the API server is the one --kubeconfig (or the pod's account) names", '""'
    ),
    ForeignFlag(("ca-cert-file",), "the endpoints are served over plain HTTP", '""'),
    ForeignFlag(("tls-cert-file",), "the endpoints are served over plain HTTP", '""'),
    ForeignFlag(("tls-private-key-file",), "the endpoints are served over plain HTTP", '""'),
    ForeignFlag(
        ("leader-elect-resource-lock",),
        "the lock is always a coordination.k8s.io Lease",
        "leases",
        harmless=("leases",),
    ),
    ForeignFlag(
        ("log-flush-frequency",),
        "log lines are written as they come (warnings and errors before the call returns)",
        "5s",
    ),
    ForeignFlag(("logtostderr",), _LOGS, "true", boolean=True, harmless=(True,)),
    ForeignFlag(("alsologtostderr",), _LOGS, "false", boolean=True, harmless=(False,)),
    ForeignFlag(("log-dir", "log_dir"), _LOGS, '""', harmless=("",)),
    ForeignFlag(("log-file", "log_file"), _LOGS, '""', harmless=("",)),
    ForeignFlag(("log-file-max-size", "log_file_max_size"), _LOGS, "1800"),
    ForeignFlag(("stderrthreshold",), _LOGS, "2"),
    ForeignFlag(("vmodule",), "verbosity is set for the whole process (-v)", '""', harmless=("",)),
    ForeignFlag(("log-backtrace-at", "log_backtrace_at"), _LOGS, '""', harmless=("",)),
    ForeignFlag(("skip-headers", "skip_headers"), _LOGS, "false", True, (False,)),
    ForeignFlag(("skip-log-headers", "skip_log_headers"), _LOGS, "false", True, (False,)),
    ForeignFlag(("add-dir-header", "add_dir_header"), _LOGS, "false", True, (False,)),
    ForeignFlag(("one-output", "one_output"), _LOGS, "false", True, (False,)),
)

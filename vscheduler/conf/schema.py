"""The shape of a scheduler policy, as Volcano's `pkg/scheduler/conf/scheduler_conf.go` defines it.

Owns the frozen values a parsed policy is made of and the keys Volcano accepts at each level.
Must not parse text or know which actions and plugins exist (the registries live elsewhere).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from vscheduler.conf.suggest import did_you_mean

# Every `PluginOption` flag, spelled exactly as Volcano's yaml tags spell them ("enable..." and
# "enabled..." both occur), in the struct's order. `enableNamespaceOrder` was removed from Volcano's
# struct later; it is kept so older policies that set it still load (it switches nothing here).
ENABLE_FLAGS: Final[tuple[str, ...]] = (
    "enableJobOrder",
    "enableNamespaceOrder",
    "enableHierarchy",
    "enableJobReady",
    "enableJobPipelined",
    "enableTaskOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enablePreemptive",
    "enableQueueOrder",
    "enabledClusterOrder",
    "enablePredicate",
    "enableBestNode",
    "enableNodeOrder",
    "enableTargetJob",
    "enableReservedNodes",
    "enableJobEnqueued",
    "enabledVictim",
    "enableJobStarving",
    "enabledOverused",
    "enabledAllocatable",
    "enabledHyperNodeOrder",
    "enabledSubJobReady",
    "enabledSubJobPipelined",
    "enabledSubJobOrder",
    "enabledHyperNodeGradient",
)

# Other accepted spellings. `enabledVictim` is Volcano's yaml tag; `enableVictim` is what most
# other flags would suggest (and what some policies write). Volcano once tagged the cluster-order
# flag `EnabledClusterOrder`.
FLAG_ALIASES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "enableVictim": "enabledVictim",
        "EnabledClusterOrder": "enabledClusterOrder",
    }
)

# Omitted flags mean "enabled" (Volcano's ApplyPluginConfDefaults), except these two.
OFF_BY_DEFAULT: Final[frozenset[str]] = frozenset({"enableHierarchy", "enabledClusterOrder"})

VOLCANO_ACTIONS: Final[frozenset[str]] = frozenset(
    {
        "enqueue", "allocate", "backfill", "preempt", "reclaim", "shuffle",
        "gangpreempt", "gangreclaim",
    }
)  # fmt: skip
"""Every action Volcano's scheduler knows (pkg/scheduler/actions/factory.go)."""
VOLCANO_PLUGINS: Final[frozenset[str]] = frozenset(
    {
        "binpack", "capacity", "cdp", "conformance", "deviceshare", "drf", "extender", "gang",
        "nodegroup", "nodeorder", "numaaware", "network-topology-aware", "overcommit", "pdb",
        "predicates", "priority", "proportion", "rescheduling", "resource-strategy-fit",
        "resourcequota", "sla", "task-topology", "tdm", "usage",
    }
)  # fmt: skip
"""Every plugin Volcano's scheduler knows (pkg/scheduler/plugins/factory.go)."""
TOP_LEVEL_KEYS: Final[tuple[str, ...]] = ("actions", "tiers", "configurations", "metrics")
TIER_KEYS: Final[tuple[str, ...]] = ("plugins",)
PLUGIN_KEYS: Final[tuple[str, ...]] = ("name", *ENABLE_FLAGS, "arguments")
CONFIGURATION_KEYS: Final[tuple[str, ...]] = ("name", "arguments")

# The `metrics` block is a flat string map in Volcano; these are the keys its metrics clients read.
METRICS_KEYS: Final[tuple[str, ...]] = (
    "type",
    "address",
    "interval",
    "tls.insecureSkipVerify",
    # vscheduler's node-usage collector (docs/usage.md); Volcano's clients do not read these.
    "period",
    "nodeLabel",
    "timeout",
    "tls.caFile",
    "tls.certFile",
    "tls.keyFile",
    "bearerToken",
    "bearerTokenFile",
    "queries.cpu",
    "queries.memory",
    "elasticsearch.index",
    "elasticsearch.username",
    "elasticsearch.password",
    "elasticsearch.hostnameFieldName",
)
METRICS_TYPES: Final[tuple[str, ...]] = ("prometheus", "prometheus_adaptor", "elasticsearch")

DEFAULT_USAGE_PERIOD: Final = "10m"
"""The averaging window Volcano's metrics clients query (`NODE_METRICS_PERIOD`)."""
DEFAULT_CPU_QUERY: Final = (
    "avg_over_time((100 * (1 - "
    'sum by ({label}) (rate(node_cpu_seconds_total{mode="idle"}[5m])) / '
    "sum by ({label}) (rate(node_cpu_seconds_total[5m]))))[{period}:30s])"
)
"""Volcano's CPU question (percent busy: a 5-minute rate, sampled every 30 s over the period,
averaged) as one vector query for every node, written as idle time over all CPU time: the two
rates share their window, so a series younger than 5 minutes reads right (Volcano's
`100 - avg(rate(idle)) * 100` divides a young series' increase by the whole window and reads it
as busy: 92 % for an idle node 45 s after node_exporter started)."""
DEFAULT_MEMORY_QUERY: Final = (
    "avg by ({label}) (100 * avg_over_time("
    "(1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)[{period}:30s]))"
)
"""Volcano's per-node memory query, as one vector query for every node: percent used, averaged."""
QUERY_PLACEHOLDERS: Final[tuple[str, ...]] = ("period", "label")
"""What a `queries.*` template may name: `{period}` (a PromQL duration) and `{label}`."""

_KNOWN_FLAGS: Final[frozenset[str]] = frozenset(ENABLE_FLAGS)
_NO_ARGUMENTS: Final[Mapping[str, object]] = MappingProxyType({})


def _empty_mapping() -> Mapping[str, object]:
    return _NO_ARGUMENTS


def _no_flags() -> Mapping[str, bool]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginOption:
    """One `tiers[].plugins[]` entry: the plugin's name, the flags given, and its arguments."""

    name: str
    flags: Mapping[str, bool] = field(default_factory=_no_flags)
    arguments: Mapping[str, object] = field(default_factory=_empty_mapping)

    def is_enabled(self, flag: str) -> bool:
        """Whether an extension point is switched on; an omitted flag takes Volcano's default."""
        canonical = FLAG_ALIASES.get(flag, flag)
        if canonical not in _KNOWN_FLAGS:
            raise KeyError(f"unknown plugin option flag {flag!r}{did_you_mean(flag, ENABLE_FLAGS)}")
        given = self.flags.get(canonical)
        if given is not None:
            return given
        return canonical not in OFF_BY_DEFAULT


@dataclass(frozen=True, slots=True, kw_only=True)
class Tier:
    """An ordered group of plugins; earlier tiers win where callbacks combine tier by tier."""

    plugins: tuple[PluginOption, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionConfiguration:
    """One `configurations[]` entry: arguments for the action named `name`."""

    name: str
    arguments: Mapping[str, object] = field(default_factory=_empty_mapping)


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricsConfig:
    """The `metrics` block: where node-usage metrics come from.

    Typed fields hold the effective values (the defaults when a key is omitted); `raw` is the
    block as given, flattened to Volcano's dotted keys, every value as text. Neither `raw`, the
    password nor the bearer token shows in `repr`. `cpu_query` and `memory_query` are templates
    with `{period}` and `{label}` placeholders (see `QUERY_PLACEHOLDERS`).
    """

    type: str = "prometheus"
    address: str = ""
    interval: str = ""
    interval_seconds: float = 30.0
    period: str = DEFAULT_USAGE_PERIOD
    node_label: str = "instance"
    timeout_seconds: float = 10.0
    tls_insecure_skip_verify: bool = False
    tls_ca_file: str = ""
    tls_cert_file: str = ""
    tls_key_file: str = ""
    bearer_token: str = field(default="", repr=False)
    bearer_token_file: str = ""
    cpu_query: str = DEFAULT_CPU_QUERY
    memory_query: str = DEFAULT_MEMORY_QUERY
    elasticsearch_index: str = "metricbeat-*"
    elasticsearch_username: str = ""
    elasticsearch_password: str = field(default="", repr=False)
    elasticsearch_hostname_field_name: str = "host.hostname"
    raw: Mapping[str, object] = field(default_factory=_empty_mapping, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """A whole scheduler policy: actions in run order, plugin tiers, action arguments, metrics."""

    actions: tuple[str, ...] = ()
    tiers: tuple[Tier, ...] = ()
    configurations: tuple[ActionConfiguration, ...] = ()
    metrics: MetricsConfig | None = None

    def configured_actions(self) -> tuple[str, ...]:
        """The actions named in `configurations`, in order."""
        return tuple(c.name for c in self.configurations)

    def action_arguments(self, action: str) -> Mapping[str, object]:
        """The `arguments` configured for `action`, or an empty mapping."""
        for configuration in self.configurations:
            if configuration.name == action:
                return configuration.arguments
        return _NO_ARGUMENTS

    def plugins(self) -> tuple[PluginOption, ...]:
        """Every configured plugin, tiers flattened in order."""
        return tuple(plugin for tier in self.tiers for plugin in tier.plugins)

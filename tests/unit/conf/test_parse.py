from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from vscheduler import catalog
from vscheduler.actions.gangevict import Arguments
from vscheduler.conf.default import DEFAULT_POLICY_TEXT
from vscheduler.conf.parse import parse_policy
from vscheduler.conf.schema import (
    ENABLE_FLAGS,
    FLAG_ALIASES,
    OFF_BY_DEFAULT,
    TOP_LEVEL_KEYS,
    ActionConfiguration,
    PluginOption,
    Policy,
)
from vscheduler.errors import PolicyError

REPO = Path(__file__).resolve().parents[3]
POLICIES = REPO / "tests" / "fixtures" / "policies"

KNOWN_ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "shuffle")
# Volcano's plugin registry (pkg/scheduler/plugins/factory.go), plus vscheduler's reservation.
KNOWN_PLUGINS = (
    "drf",
    "gang",
    "deviceshare",
    "predicates",
    "priority",
    "nodeorder",
    "conformance",
    "binpack",
    "resource-strategy-fit",
    "tdm",
    "overcommit",
    "sla",
    "task-topology",
    "numaaware",
    "cdp",
    "rescheduling",
    "usage",
    "pdb",
    "nodegroup",
    "network-topology-aware",
    "proportion",
    "capacity",
    "extender",
    "resourcequota",
    "reservation",
)
# The yaml tags of Volcano's PluginOption (pkg/scheduler/conf/scheduler_conf.go).
VOLCANO_FLAG_TAGS = (
    "enableJobOrder",
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


def parse(text: str) -> Policy:
    return parse_policy(text, known_actions=KNOWN_ACTIONS, known_plugins=KNOWN_PLUGINS)


def errors_of(text: str) -> tuple[str, ...]:
    with pytest.raises(PolicyError) as caught:
        parse(text)
    return caught.value.errors


def errors_or_none(text: str) -> tuple[str, ...] | None:
    """The errors a policy text is rejected with, or None when it parses."""
    try:
        parse(text)
    except PolicyError as error:
        return error.errors
    return None


def fixture(name: str) -> Policy:
    return parse((POLICIES / name).read_text())


def one_plugin(options: str) -> PluginOption:
    text = f"actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n{options}"
    return parse(text).plugins()[0]


@pytest.mark.parametrize("path", sorted(POLICIES.glob("*.yaml")), ids=lambda path: path.stem)
def test_every_volcano_policy_in_the_fixtures_parses(path: Path) -> None:
    policy = parse_policy(
        path.read_text(),
        known_actions=KNOWN_ACTIONS,
        known_plugins=KNOWN_PLUGINS,
        source=str(path),
    )
    assert policy.actions
    assert policy.plugins()


def test_volcanos_built_in_default_policy_parses_into_its_actions_and_tiers() -> None:
    policy = fixture("volcano-default.yaml")
    assert policy.actions == ("enqueue", "allocate", "backfill")
    assert [[plugin.name for plugin in tier.plugins] for tier in policy.tiers] == [
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder"],
    ]
    assert all(plugin.flags == {} and plugin.arguments == {} for plugin in policy.plugins())
    assert policy.configurations == ()
    assert policy.metrics is None


def test_our_default_policy_is_volcanos_default_with_binpack_last() -> None:
    ours = parse(DEFAULT_POLICY_TEXT)
    volcano = fixture("volcano-default.yaml")
    assert ours.actions == volcano.actions
    assert ours.tiers[0] == volcano.tiers[0]
    assert ours.tiers[1].plugins[:-1] == volcano.tiers[1].plugins
    assert ours.tiers[1].plugins[-1] == PluginOption(name="binpack")


def test_the_shipped_default_policy_file_holds_the_built_in_text() -> None:
    assert (REPO / "config" / "default-policy.yaml").read_text() == DEFAULT_POLICY_TEXT


def test_the_helm_chart_policy_switches_preemptable_off_for_gang_and_drf() -> None:
    policy = fixture("volcano-helm.yaml")
    by_name = {plugin.name: plugin for plugin in policy.plugins()}
    assert by_name["gang"].flags == {"enablePreemptable": False}
    assert not by_name["gang"].is_enabled("enablePreemptable")
    assert not by_name["drf"].is_enabled("enablePreemptable")
    assert by_name["drf"].is_enabled("enableQueueOrder")
    assert "capacity" in by_name
    assert "proportion" not in by_name


@pytest.mark.parametrize(
    "actions",
    [
        pytest.param('"enqueue, allocate, backfill"', id="string-with-spaces"),
        pytest.param('"enqueue,allocate,backfill"', id="string-without-spaces"),
        pytest.param("enqueue ,  allocate,backfill", id="plain-scalar"),
        pytest.param("[enqueue, allocate, backfill]", id="flow-list"),
        pytest.param("\n- enqueue\n- allocate\n- backfill", id="block-list"),
    ],
)
def test_actions_as_a_string_or_a_list_give_the_same_policy(actions: str) -> None:
    tiers = "tiers:\n- plugins:\n  - name: gang\n"
    assert parse(f"actions: {actions}\n{tiers}") == parse(
        f'actions: "enqueue, allocate, backfill"\n{tiers}'
    )


@pytest.mark.parametrize(
    "actions",
    [
        pytest.param('""', id="empty-string"),
        pytest.param('" , "', id="only-commas-and-spaces"),
        pytest.param("[]", id="empty-list"),
    ],
)
def test_an_empty_actions_value_means_a_session_that_runs_no_action(actions: str) -> None:
    assert parse(f"actions: {actions}\n").actions == ()


def test_tiers_may_be_omitted_or_empty_as_in_volcano() -> None:
    assert parse("actions: allocate\n").tiers == ()
    assert parse("actions: allocate\ntiers: []\n").tiers == ()
    assert parse("actions: allocate\ntiers:\n- plugins: []\n").plugins() == ()


def test_enable_flags_cover_every_flag_volcanos_plugin_option_knows() -> None:
    assert set(VOLCANO_FLAG_TAGS) <= set(ENABLE_FLAGS)
    assert set(ENABLE_FLAGS) - set(VOLCANO_FLAG_TAGS) == {"enableNamespaceOrder"}


def test_only_hierarchy_and_cluster_order_are_off_when_omitted() -> None:
    assert frozenset({"enableHierarchy", "enabledClusterOrder"}) == OFF_BY_DEFAULT


@pytest.mark.parametrize("flag", ENABLE_FLAGS)
def test_an_omitted_flag_takes_volcanos_default(flag: str) -> None:
    plugin = one_plugin("")
    assert plugin.is_enabled(flag) is (flag not in OFF_BY_DEFAULT)


@pytest.mark.parametrize("flag", ENABLE_FLAGS)
@pytest.mark.parametrize("value", [True, False])
def test_a_given_flag_overrides_the_default(flag: str, value: bool) -> None:
    plugin = one_plugin(f"    {flag}: {str(value).lower()}\n")
    assert plugin.flags == {flag: value}
    assert plugin.is_enabled(flag) is value


@pytest.mark.parametrize(("alias", "canonical"), sorted(FLAG_ALIASES.items()))
def test_an_alias_spelling_sets_the_canonical_flag(alias: str, canonical: str) -> None:
    plugin = one_plugin(f"    {alias}: false\n")
    assert plugin.flags == {canonical: False}
    assert plugin.is_enabled(canonical) is False
    assert plugin.is_enabled(alias) is False


def test_enable_victim_is_an_alias_of_volcanos_enabled_victim() -> None:
    assert FLAG_ALIASES["enableVictim"] == "enabledVictim"
    assert "enabledVictim" in ENABLE_FLAGS
    assert "enableVictim" not in ENABLE_FLAGS


def test_asking_for_an_unknown_flag_is_a_key_error_with_a_suggestion() -> None:
    with pytest.raises(KeyError, match="did you mean 'enableJobOrder'"):
        PluginOption(name="gang").is_enabled("enableJobOrdr")


@pytest.mark.parametrize(
    ("written", "meaning"),
    [
        pytest.param("yes", True, id="yes"),
        pytest.param("on", True, id="on"),
        pytest.param("y", True, id="y"),
        pytest.param("True", True, id="True"),
        pytest.param("no", False, id="no"),
        pytest.param("off", False, id="off"),
        pytest.param("n", False, id="n"),
        pytest.param("FALSE", False, id="FALSE"),
    ],
)
def test_flags_read_yaml_booleans_as_volcanos_yaml_library_does(
    written: str, meaning: bool
) -> None:
    assert one_plugin(f"    enablePredicate: {written}\n").flags == {"enablePredicate": meaning}


def test_arguments_keep_their_parsed_types_and_dotted_keys() -> None:
    arguments = one_plugin(
        "    arguments:\n"
        "      binpack.weight: 10\n"
        "      binpack.cpu: 1.5\n"
        "      binpack.resources: nvidia.com/gpu, example.com/foo\n"
        "      binpack.resources.nvidia.com/gpu: '2'\n"
        "      enabled: true\n"
        "      ratio: 1e3\n"
        "      day: 2024-01-01\n"
        "      window: 10:30\n"
        "      n: null\n"
    ).arguments
    assert dict(arguments) == {
        "binpack.weight": 10,
        "binpack.cpu": 1.5,
        "binpack.resources": "nvidia.com/gpu, example.com/foo",
        "binpack.resources.nvidia.com/gpu": "2",
        "enabled": True,
        "ratio": 1000.0,
        "day": "2024-01-01",
        "window": "10:30",
        "n": None,
    }


def test_argument_keys_keep_the_text_they_were_written_with() -> None:
    arguments = one_plugin(
        "    arguments:\n      n: 1\n      on: 2\n      1: 3\n      nested: {y: yes, 2: two}\n"
    ).arguments
    assert dict(arguments) == {"n": 1, "on": 2, "1": 3, "nested": {"y": True, "2": "two"}}


@pytest.mark.parametrize(
    ("written", "value"),
    [
        pytest.param("0.5", 0.5, id="decimal"),
        pytest.param(".5", 0.5, id="leading-dot"),
        pytest.param("1.5e3", 1500.0, id="exponent"),
        pytest.param("1_000", 1000, id="underscores"),
        pytest.param("0x1F", 31, id="hex"),
        pytest.param(".", ".", id="lone-dot"),
        pytest.param("1.2.3", "1.2.3", id="version"),
        pytest.param("-.", "-.", id="sign-and-dot"),
        pytest.param("v1", "v1", id="word"),
        pytest.param("1:30", "1:30", id="sexagesimal-looking"),
        pytest.param("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z", id="timestamp-looking"),
        pytest.param("~", None, id="null"),
    ],
)
def test_argument_scalars_are_typed_as_volcanos_yaml_library_types_them(
    written: str, value: object
) -> None:
    arguments = one_plugin(f"    arguments:\n      x: {written}\n").arguments
    assert arguments["x"] == value
    assert type(arguments["x"]) is type(value)


def test_rescheduling_arguments_keep_nested_lists_and_maps() -> None:
    policy = fixture("volcano-rescheduling.yaml")
    assert policy.actions[-1] == "shuffle"
    arguments = policy.plugins()[3].arguments
    assert arguments["interval"] == "5m"
    assert arguments["queueSelector"] == ("default", "test-queue")
    assert arguments["labelSelector"] == {"business": "offline", "team": "test"}
    strategies = arguments["strategies"]
    assert isinstance(strategies, tuple)
    assert [strategy["name"] for strategy in strategies] == [
        "offlineOnly",
        "lowPriorityFirst",
        "lowNodeUtilization",
    ]
    assert strategies[2]["params"]["targetThresholds"] == {"cpu": 50, "memory": 50, "pods": 50}


def test_a_parsed_policy_is_deeply_immutable() -> None:
    policy = fixture("volcano-rescheduling.yaml")
    plugin = policy.plugins()[3]
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.actions = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        plugin.arguments["interval"] = "1m"  # type: ignore[index]
    with pytest.raises(TypeError):
        plugin.flags["enablePredicate"] = False  # type: ignore[index]
    label_selector = plugin.arguments["labelSelector"]
    assert isinstance(label_selector, Mapping)
    with pytest.raises(TypeError):
        label_selector["team"] = "other"  # type: ignore[index]


def test_configurations_give_each_action_its_arguments() -> None:
    policy = fixture("volcano-configurations.yaml")
    assert policy.configurations[0] == ActionConfiguration(
        name="preempt",
        arguments={
            "enableTopologyAwarePreemption": True,
            "topologyAwarePreemptWorkerNum": 16,
            "minCandidateNodesPercentage": 10,
            "minCandidateNodesAbsolute": 1,
            "maxCandidateNodesAbsolute": 100,
        },
    )
    assert policy.action_arguments("enqueue")["QueueScoreOrder.drf.weight"] == 1
    assert policy.action_arguments("allocate") == {}


def test_metrics_with_volcanos_flat_keys_are_typed() -> None:
    metrics = fixture("volcano-usage-prometheus.yaml").metrics
    assert metrics is not None
    assert (metrics.type, metrics.address) == ("prometheus", "http://192.168.0.10:9090")
    assert (metrics.interval, metrics.interval_seconds) == ("30s", 30.0)
    assert metrics.tls_insecure_skip_verify is False
    assert metrics.raw["tls.insecureSkipVerify"] == "false"


def test_metrics_written_with_nested_groups_are_flattened_to_volcanos_keys() -> None:
    metrics = fixture("volcano-usage-elasticsearch.yaml").metrics
    assert metrics is not None
    assert metrics.type == "elasticsearch"
    assert metrics.elasticsearch_index == "custom-index-name"
    assert metrics.elasticsearch_hostname_field_name == "host.hostname"
    assert set(metrics.raw) == {
        "type",
        "address",
        "interval",
        "tls.insecureSkipVerify",
        "elasticsearch.index",
        "elasticsearch.username",
        "elasticsearch.password",
        "elasticsearch.hostnameFieldName",
    }


def test_prometheus_adaptor_metrics_need_no_address() -> None:
    metrics = fixture("volcano-usage-adaptor.yaml").metrics
    assert metrics is not None
    assert (metrics.type, metrics.address) == ("prometheus_adaptor", "")


def test_the_metrics_password_stays_out_of_repr() -> None:
    metrics = parse(
        "actions: allocate\nmetrics:\n  type: elasticsearch\n  address: http://es:9200\n"
        "  elasticsearch.password: hunter2\n"
    ).metrics
    assert metrics is not None
    assert metrics.elasticsearch_password == "hunter2"
    assert "hunter2" not in repr(metrics)


BROKEN_POLICIES = [
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n- plugins:\n  - name: gang\n"
        "  - name: drf\n  - name: binpack\n    enableJobOrdr: true\n",
        ("tiers[1].plugins[2].enableJobOrdr: unknown key; did you mean 'enableJobOrder'?",),
        id="misspelt-flag",
    ),
    pytest.param(
        'actions: "enqueue, alocate, backfill"\n',
        ("actions: unknown action 'alocate'; did you mean 'allocate'?",),
        id="misspelt-action",
    ),
    pytest.param(
        "actions: [enqueue, allocate, bakfill]\n",
        ("actions[2]: unknown action 'bakfill'; did you mean 'backfill'?",),
        id="misspelt-action-in-a-list",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n    enablePredicate: 'yes'\n",
        ("tiers[0].plugins[0].enablePredicate: must be true or false, got 'yes'",),
        id="quoted-flag-value",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - enablePredicate: false\n",
        ("tiers[0].plugins[1]: missing 'name'",),
        id="plugin-without-name",
    ),
    pytest.param(
        "actions: allocate\ntier:\n- plugins:\n  - name: gang\n",
        ("top level: unknown key 'tier'; did you mean 'tiers'?",),
        id="misspelt-top-level-key",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: gnag\n",
        ("tiers[0].plugins[0].name: unknown plugin 'gnag'; did you mean 'gang'?",),
        id="misspelt-plugin",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: gang\n",
        ("tiers[1].plugins[0].name: duplicate plugin 'gang' (first at tiers[0].plugins[0])",),
        id="duplicate-plugin",
    ),
    pytest.param(
        'actions: "enqueue, allocate, allocate"\n',
        ("actions: duplicate action 'allocate'",),
        id="duplicate-action",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugin:\n  - name: gang\n",
        ("tiers[0].plugin: unknown key; did you mean 'plugins'?",),
        id="misspelt-tier-key",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enabledHierarchy: true\n",
        ("tiers[0].plugins[0].enabledHierarchy: unknown key; did you mean 'enableHierarchy'?",),
        id="hierarchy-spelt-like-victim",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    argument:\n      x: 1\n",
        ("tiers[0].plugins[0].argument: unknown key; did you mean 'arguments'?",),
        id="misspelt-arguments-key",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableVictim: false\n"
        "    enabledVictim: true\n",
        ("tiers[0].plugins[0].enabledVictim: the same flag as 'enableVictim'; give it once",),
        id="alias-and-canonical-together",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    arguments: [a, b]\n",
        ("tiers[0].plugins[0].arguments: must be a mapping, got a list",),
        id="arguments-not-a-mapping",
    ),
    pytest.param(
        "actions: preempt\nconfigurations:\n- name: prempt\n  arguments: {x: 1}\n",
        ("configurations[0].name: unknown action 'prempt'; did you mean 'preempt'?",),
        id="configuration-for-a-misspelt-action",
    ),
    pytest.param(
        "actions: preempt\nconfigurations:\n- name: preempt\n  argument: {x: 1}\n",
        ("configurations[0].argument: unknown key; did you mean 'arguments'?",),
        id="misspelt-configuration-key",
    ),
    pytest.param(
        "actions: preempt\nconfigurations:\n- name: preempt\n- name: preempt\n",
        (
            "configurations[1].name: "
            "duplicate configuration for 'preempt' (first at configurations[0])",
        ),
        id="duplicate-configuration",
    ),
    pytest.param(
        "actions: allocate\nmetrics:\n  type: prometheus_adapt\n",
        (
            "metrics.type: "
            "unknown metrics type 'prometheus_adapt'; did you mean 'prometheus_adaptor'?",
        ),
        id="misspelt-metrics-type",
    ),
    pytest.param(
        "actions: allocate\nmetrics:\n  adress: http://prometheus:9090\n",
        (
            "metrics.adress: unknown key; did you mean 'address'?",
            "metrics.address: required for metrics type 'prometheus'",
        ),
        id="misspelt-metrics-address",
    ),
    pytest.param(
        "actions: allocate\nmetrics:\n  address: http://prometheus:9090\n  interval: 30\n",
        ("metrics.interval: must be a positive duration like '30s', got '30'",),
        id="metrics-interval-without-unit",
    ),
    pytest.param(
        "actions: allocate\nmetrics:\n  address: http://p:9090\n"
        "  tls:\n    insecureSkipVerfy: 'true'\n",
        ("metrics.tls.insecureSkipVerfy: unknown key; did you mean 'tls.insecureSkipVerify'?",),
        id="misspelt-nested-metrics-key",
    ),
    pytest.param(
        "tiers:\n- plugins:\n  - name: gang\n",
        ("top level: missing 'actions' (write actions: \"\" for a policy that runs no action)",),
        id="no-actions",
    ),
    pytest.param(
        "actions: 3\n",
        ("actions: must be a comma-separated string or a list of action names, got 3",),
        id="actions-not-a-string",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n  plugins:\n  - name: gang\n",
        ("tiers: must be a list of tiers, each with 'plugins', got a mapping",),
        id="tiers-not-a-list",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - gang\n",
        ("tiers[0].plugins[0]: must be a mapping with 'name', got 'gang'",),
        id="plugin-as-a-bare-name",
    ),
    pytest.param(
        "- actions: allocate\n",
        ("top level: must be a mapping with 'actions' and 'tiers', got a list",),
        id="document-not-a-mapping",
    ),
    pytest.param(
        "# nothing configured\n",
        ("top level: the policy is empty; it needs at least 'actions' and 'tiers'",),
        id="empty-document",
    ),
    pytest.param(
        "actions: allocate\nconfigurations:\n- name: enqueue:\n  arguments:\n    x: 1\n",
        ("YAML syntax error at line 3, column 16: mapping values are not allowed here",),
        id="yaml-syntax-error-from-a-volcano-design-doc",
    ),
    pytest.param(
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    name: drf\n",
        ("line 5, column 5: duplicate key 'name'",),
        id="duplicate-yaml-key",
    ),
    pytest.param(
        "actions: allocate\n---\nactions: backfill\n",
        (
            "YAML syntax error at line 2, column 1: but found another document"
            " (expected a single document in the stream at line 1, column 1)",
        ),
        id="two-yaml-documents",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BROKEN_POLICIES)
def test_a_broken_policy_is_rejected_with_exact_errors(
    text: str, expected: tuple[str, ...]
) -> None:
    assert errors_of(text) == expected


def test_every_error_in_a_policy_is_reported_at_once() -> None:
    text = (
        'actions: "enqueue, alocate"\n'
        "tier: []\n"
        "tiers:\n"
        "- plugins:\n"
        "  - name: priority\n"
        "    enableJobOrdr: true\n"
        "  - name: gnag\n"
        "  - enablePredicate: 1\n"
        "configurations:\n"
        "- name: prempt\n"
    )
    assert errors_of(text) == (
        "top level: unknown key 'tier'; did you mean 'tiers'?",
        "actions: unknown action 'alocate'; did you mean 'allocate'?",
        "tiers[0].plugins[0].enableJobOrdr: unknown key; did you mean 'enableJobOrder'?",
        "tiers[0].plugins[1].name: unknown plugin 'gnag'; did you mean 'gang'?",
        "tiers[0].plugins[2]: missing 'name'",
        "tiers[0].plugins[2].enablePredicate: must be true or false, got 1",
        "configurations[0].name: unknown action 'prempt'; did you mean 'preempt'?",
    )


def test_a_name_with_no_close_match_lists_the_known_names() -> None:
    (error,) = errors_of("actions: [dance]\n")
    assert error == (
        "actions[0]: unknown action 'dance'; "
        "known actions: allocate, backfill, enqueue, preempt, reclaim, shuffle"
    )


def test_volcano_gang_eviction_actions_are_accepted_with_their_arguments() -> None:
    # Volcano v1.15's gangpreempt and gangreclaim (pkg/scheduler/actions/factory.go), in the
    # action list and in configurations, against the built-in registry.
    text = (
        'actions: "enqueue, allocate, gangpreempt, gangreclaim"\nconfigurations:\n'
        "- name: gangreclaim\n  arguments:\n    maxDomains: 2\n    allowWholeBundle: false\n"
    )
    actions = catalog.load_pipeline(text).actions
    assert [a.name for a in actions] == ["enqueue", "allocate", "gangpreempt", "gangreclaim"]
    assert actions[3].arguments == Arguments(max_domains=2, allow_whole_bundle=False)  # type: ignore[attr-defined]


def test_a_volcano_action_missing_from_the_registry_is_named_as_not_provided() -> None:
    text = 'actions: "enqueue, allocate, gangpreempt"\n'
    assert errors_of(text) == (
        "actions: action 'gangpreempt' is a Volcano action this version of vscheduler does not"
        " provide yet; available: allocate, backfill, enqueue, preempt, reclaim, shuffle",
    )


def test_an_unclosed_quote_is_reported_with_the_line_where_it_opens() -> None:
    (error,) = errors_of('actions: "enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n')
    assert error == (
        "YAML syntax error at line 5, column 1: found unexpected end of stream"
        " (while scanning a quoted scalar at line 1, column 10)"
    )


def test_a_tab_indented_policy_reports_the_line_and_column() -> None:
    (error,) = errors_of("actions: allocate\ntiers:\n\t- plugins: []\n")
    assert error.startswith("YAML syntax error at line 3, column 1: ")


def test_the_policy_error_names_its_source_and_carries_every_error() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(
            "actions: [alocate, bakfill]\n",
            known_actions=KNOWN_ACTIONS,
            known_plugins=KNOWN_PLUGINS,
            source="volcano-scheduler.conf",
        )
    assert caught.value.source == "volcano-scheduler.conf"
    assert len(caught.value.errors) == 2
    assert str(caught.value).startswith("volcano-scheduler.conf: actions[0]: unknown action")


def test_plugins_are_checked_against_the_names_passed_in() -> None:
    text = "actions: allocate\ntiers:\n- plugins:\n  - name: capacity-card\n"
    policy = parse_policy(
        text, known_actions=KNOWN_ACTIONS, known_plugins=(*KNOWN_PLUGINS, "capacity-card")
    )
    assert policy.plugins()[0].name == "capacity-card"
    assert errors_of(text) == (
        "tiers[0].plugins[0].name: unknown plugin 'capacity-card'; did you mean 'capacity'?",
    )


YAML_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
YAML_VALUES = st.recursive(
    YAML_SCALARS | st.sampled_from(["gang", "allocate", "enablePredicate", "plugins", "name"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [*TOP_LEVEL_KEYS, "plugins", "name", "arguments", "enableJobOrder", "x"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_gives_a_policy_or_a_policy_error_never_a_crash(text: str) -> None:
    errors = errors_or_none(text)
    assert errors is None or len(errors) > 0


@settings(max_examples=300, deadline=None)
@given(YAML_VALUES)
def test_any_yaml_document_gives_a_policy_or_a_policy_error_never_a_crash(document: object) -> None:
    errors = errors_or_none(yaml.safe_dump(document))
    assert errors is None or len(errors) > 0

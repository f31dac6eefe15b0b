"""The policy's `metrics` block as the node-usage collector reads it, and the usage periods of a
policy (what the collector queries so that every plugin finds the key it reads: the block's, then
those the built plugins declare)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from vscheduler.catalog import builtin_registry
from vscheduler.conf.metrics_block import (
    is_promql_duration,
    placeholders,
    render_query,
)
from vscheduler.conf.parse import parse_policy
from vscheduler.conf.schema import DEFAULT_CPU_QUERY, DEFAULT_MEMORY_QUERY, MetricsConfig, Policy
from vscheduler.errors import PolicyError
from vscheduler.framework.needs import Needs
from vscheduler.framework.registry import Registry, build

PLUGINS = ("usage", "rescheduling", "gang")


def parse(text: str) -> Policy:
    return parse_policy(text, known_actions=("allocate",), known_plugins=PLUGINS)


def metrics_of(block: str) -> MetricsConfig:
    metrics = parse("actions: allocate\nmetrics:\n" + block).metrics
    assert metrics is not None
    return metrics


def errors_of(block: str) -> tuple[str, ...]:
    with pytest.raises(PolicyError) as caught:
        parse("actions: allocate\nmetrics:\n" + block)
    return caught.value.errors


def with_plugins(metrics: str, *plugins: str) -> Policy:
    text = "actions: allocate\ntiers:\n- plugins:\n" + "".join(plugins)
    if metrics:
        text += "metrics:\n" + metrics
    return parse(text)


def test_a_block_with_only_an_address_takes_every_default() -> None:
    metrics = metrics_of("  address: http://prometheus:9090\n")
    assert metrics.interval_seconds == 30.0
    assert metrics.period == "10m"
    assert metrics.node_label == "instance"
    assert metrics.timeout_seconds == 10.0
    assert (metrics.tls_ca_file, metrics.tls_cert_file, metrics.tls_key_file) == ("", "", "")
    assert metrics.tls_insecure_skip_verify is False
    assert (metrics.bearer_token, metrics.bearer_token_file) == ("", "")
    assert (metrics.cpu_query, metrics.memory_query) == (DEFAULT_CPU_QUERY, DEFAULT_MEMORY_QUERY)


def test_every_collector_key_given_flat_is_typed() -> None:
    metrics = metrics_of(
        "  address: https://prometheus:9090/prom\n"
        "  interval: 15s\n"
        "  period: 5m\n"
        "  nodeLabel: node\n"
        "  timeout: 2500ms\n"
        "  tls.insecureSkipVerify: true\n"
        "  tls.caFile: /etc/prom/ca.crt\n"
        "  tls.certFile: /etc/prom/tls.crt\n"
        "  tls.keyFile: /etc/prom/tls.key\n"
        "  bearerTokenFile: /var/run/secrets/token\n"
        "  queries.cpu: 'cpu_busy_percent:{period}'\n"
        "  queries.memory: 'max by ({label}) (mem_used_percent)'\n"
    )
    assert (metrics.interval_seconds, metrics.period, metrics.node_label) == (15.0, "5m", "node")
    assert metrics.timeout_seconds == 2.5
    assert metrics.tls_insecure_skip_verify is True
    assert (metrics.tls_ca_file, metrics.tls_cert_file, metrics.tls_key_file) == (
        "/etc/prom/ca.crt",
        "/etc/prom/tls.crt",
        "/etc/prom/tls.key",
    )
    assert metrics.bearer_token_file == "/var/run/secrets/token"
    assert metrics.cpu_query == "cpu_busy_percent:{period}"
    assert metrics.memory_query == "max by ({label}) (mem_used_percent)"


def test_tls_and_queries_may_be_written_nested() -> None:
    metrics = metrics_of(
        "  address: https://prometheus:9090\n"
        "  tls:\n    caFile: /ca.crt\n    insecureSkipVerify: false\n"
        "  queries:\n    cpu: 'cpu_busy{mode=\"all\"}[{period}]'\n"
    )
    assert metrics.tls_ca_file == "/ca.crt"
    assert metrics.cpu_query == 'cpu_busy{mode="all"}[{period}]'
    assert metrics.memory_query == DEFAULT_MEMORY_QUERY
    assert set(metrics.raw) == {"address", "tls.caFile", "tls.insecureSkipVerify", "queries.cpu"}


def test_the_bearer_token_stays_out_of_repr() -> None:
    metrics = metrics_of("  address: http://p:9090\n  bearerToken: s3cr3t-t0ken\n")
    assert metrics.bearer_token == "s3cr3t-t0ken"
    assert "s3cr3t-t0ken" not in repr(metrics)


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        pytest.param(
            "  address: http://p:9090\n  period: 10 minutes\n",
            ("metrics.period: must be a PromQL duration like '10m', '1h' or '1h30m', "
             "got '10 minutes'",),
            id="period-in-words",
        ),
        pytest.param(
            "  address: http://p:9090\n  period: 1.5h\n",
            ("metrics.period: must be a PromQL duration like '10m', '1h' or '1h30m', "
             "got '1.5h'",),
            id="period-with-a-fraction",
        ),
        pytest.param(
            "  address: http://p:9090\n  period: 0m\n",
            ("metrics.period: must be a PromQL duration like '10m', '1h' or '1h30m', got '0m'",),
            id="period-zero",
        ),
        pytest.param(
            "  address: http://p:9090\n  nodeLabel: kubernetes.io/hostname\n",
            ("metrics.nodeLabel: must be a Prometheus label name like 'instance' or 'node', "
             "got 'kubernetes.io/hostname'",),
            id="node-label-not-a-label-name",
        ),
        pytest.param(
            "  address: http://p:9090\n  timeout: 10\n",
            ("metrics.timeout: must be a positive duration like '30s', got '10'",),
            id="timeout-without-unit",
        ),
        pytest.param(
            "  address: http://p:9090\n  interval: -30s\n",
            ("metrics.interval: must be a positive duration like '30s', got '-30s'",),
            id="negative-interval",
        ),
        pytest.param(
            "  address: prometheus:9090\n",
            ("metrics.address: must be an http:// or https:// URL like "
             "'http://prometheus:9090', got 'prometheus:9090'",),
            id="address-without-scheme",
        ),
        pytest.param(
            "  address: http://user:secret@p:9090\n",
            ("metrics.address: must not carry credentials; use bearerToken or bearerTokenFile",),
            id="address-with-credentials",
        ),
        pytest.param(
            "  address: http://p:9090/?x=1\n",
            ("metrics.address: must not have a query or a fragment, got 'http://p:9090/?x=1'",),
            id="address-with-a-query",
        ),
        pytest.param(
            "  address: http://p:http\n",
            ("metrics.address: must be an http:// or https:// URL like "
             "'http://prometheus:9090', got 'http://p:http'",),
            id="address-with-a-bad-port",
        ),
        pytest.param(
            "  address: http://p:9090\n  bearerToken: abc\n  bearerTokenFile: /token\n",
            ("metrics.bearerTokenFile: give either bearerToken or bearerTokenFile, not both",),
            id="two-tokens",
        ),
        pytest.param(
            "  address: https://p:9090\n  tls.keyFile: /tls.key\n",
            ("metrics.tls.keyFile: needs tls.certFile (the client certificate it belongs to)",),
            id="key-without-certificate",
        ),
        pytest.param(
            "  address: https://p:9090\n  tls.caFile: ''\n",
            ("metrics.tls.caFile: must be a file path, got an empty value",),
            id="empty-ca-file",
        ),
        pytest.param(
            "  address: http://p:9090\n  queries.cpu: 'cpu_busy[{perod}]'\n",
            ("metrics.queries.cpu: unknown placeholder {perod}; did you mean 'period'?; "
             "the placeholders are {period} and {label}",),
            id="misspelt-placeholder",
        ),
        pytest.param(
            "  address: http://p:9090\n  queries.memory: 'mem{instance=\"{node}\"}'\n",
            ("metrics.queries.memory: unknown placeholder {node}; "
             "the placeholders are {period} and {label}",),
            id="placeholder-for-a-node",
        ),
        pytest.param(
            "  address: http://p:9090\n  queries.memory: '  '\n",
            ("metrics.queries.memory: must be a PromQL query, got an empty value",),
            id="empty-query",
        ),
        pytest.param(
            "  address: http://p:9090\n  queries.gpu: 'gpu_busy'\n",
            ("metrics.queries.gpu: unknown key; did you mean 'queries.cpu'?",),
            id="query-for-an-unknown-metric",
        ),
        pytest.param(
            "  address: http://p:9090\n  queries: 'cpu_busy'\n",
            ("metrics.queries: must be a mapping, got 'cpu_busy'",),
            id="queries-not-a-mapping",
        ),
    ],
)  # fmt: skip
def test_a_wrong_collector_key_is_reported_by_name(block: str, expected: tuple[str, ...]) -> None:
    assert errors_of(block) == expected


def test_the_default_queries_ask_for_every_node_by_the_label_over_the_period() -> None:
    assert render_query(DEFAULT_CPU_QUERY, period="10m", label="instance") == (
        "avg_over_time((100 * (1 - "
        'sum by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m])) / '
        "sum by (instance) (rate(node_cpu_seconds_total[5m]))))[10m:30s])"
    )
    assert render_query(DEFAULT_MEMORY_QUERY, period="1h", label="node") == (
        "avg by (node) (100 * avg_over_time("
        "(1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)[1h:30s]))"
    )


def test_promql_label_matchers_are_not_placeholders() -> None:
    template = 'sum by ({label}) (x{mode="idle",job=~"node.*"}[{period}])'
    assert placeholders(template) == ("label", "period")
    assert render_query(template, period="5m", label="node") == (
        'sum by (node) (x{mode="idle",job=~"node.*"}[5m])'
    )


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("10m", True),
        ("1h30m", True),
        ("90s", True),
        ("1d", True),
        ("500ms", True),
        ("0m", False),
        ("", False),
        ("m", False),
        ("30m1h", False),
        ("1.5h", False),
        ("10", False),
        ("10M", False),
    ],
)
def test_periods_are_prometheus_durations(text: str, valid: bool) -> None:
    assert is_promql_duration(text) is valid


def usage_periods(policy: Policy) -> tuple[str, ...]:
    return build(policy, builtin_registry()).usage_periods


USAGE = "  - name: usage\n"
RESCHEDULING = "  - name: rescheduling\n"


def test_a_policy_without_usage_readers_asks_for_the_blocks_period() -> None:
    policy = with_plugins("  address: http://p:9090\n  period: 5m\n", "  - name: gang\n")
    assert usage_periods(policy) == ("5m",)


def test_a_policy_without_a_metrics_block_asks_for_the_default_period() -> None:
    assert usage_periods(with_plugins("", "  - name: gang\n")) == ("10m",)


def test_usage_and_rescheduling_add_their_periods_after_the_blocks() -> None:
    policy = with_plugins(
        "  address: http://p:9090\n  period: 5m\n",
        USAGE + "    arguments:\n      period: 1h\n",
        RESCHEDULING + "    arguments:\n      metricsPeriod: 15m\n",
    )
    assert usage_periods(policy) == ("5m", "1h", "15m")


def test_usage_and_rescheduling_without_arguments_read_the_default_period() -> None:
    policy = with_plugins("  address: http://p:9090\n  period: 5m\n", USAGE, RESCHEDULING)
    assert usage_periods(policy) == ("5m", "10m")


def test_a_period_asked_twice_is_queried_once() -> None:
    policy = with_plugins(
        "  address: http://p:9090\n",
        USAGE + "    arguments:\n      period: 10m\n",
        RESCHEDULING + "    arguments:\n      metricsPeriod: 10m\n",
    )
    assert usage_periods(policy) == ("10m",)


def test_a_plugin_period_that_is_not_a_promql_duration_is_left_to_the_plugin_to_report() -> None:
    policy = with_plugins(
        "  address: http://p:9090\n", USAGE + "    arguments:\n      period: 1.5h\n"
    )
    assert usage_periods(policy) == ("10m",)
    policy = with_plugins(
        "  address: http://p:9090\n", RESCHEDULING + "    arguments:\n      metricsPeriod: 5\n"
    )
    with pytest.raises(PolicyError, match="metricsPeriod: must be a duration"):
        usage_periods(policy)


class _Factory:
    name = "fake"
    plugin = object
    needs = Needs(usage_periods=("30m",))

    def open(self, _session: object) -> object:
        return object()


def _fake_builder(arguments: Mapping[str, object]) -> _Factory:
    assert arguments == {"period": "30m"}
    return _Factory()


def test_a_built_pipeline_carries_the_metrics_block_and_the_usage_periods() -> None:
    policy = with_plugins(
        "  address: http://p:9090\n", USAGE + "    arguments:\n      period: 30m\n"
    )
    registry = Registry(plugins={"usage": _fake_builder}, actions={"allocate": lambda _a: _Act()})
    pipeline = build(policy, registry)
    assert pipeline.metrics == policy.metrics
    assert pipeline.usage_periods == ("10m", "30m")


class _Act:
    name = "allocate"

    def execute(self, _session: object) -> None:
        return None

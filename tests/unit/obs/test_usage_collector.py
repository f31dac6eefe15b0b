"""One node-usage collection against a scripted Prometheus: the queries sent, the answers read,
staleness on failure (never zeros), history, node matching, credentials and TLS."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from vscheduler.clock import FixedClock
from vscheduler.conf.schema import MetricsConfig
from vscheduler.model.facts import NodeUsage
from vscheduler.obs.metrics import SchedulerMetrics
from vscheduler.obs.prometheus import QueryError, node_name, parse_vector, ssl_context
from vscheduler.obs.usage import HISTORY_LIMIT, Collection, UsageCollector
from vscheduler.testing.builders import START
from vscheduler.testing.prometheus import FakePrometheus

AT = START.timestamp()
"""When the scripted Prometheus evaluated its answers."""
NOW = START + dt.timedelta(seconds=5)
CPU_10M = (
    "avg_over_time((100 * (1 - "
    'sum by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m])) / '
    "sum by (instance) (rate(node_cpu_seconds_total[5m]))))[10m:30s])"
)
MEMORY_10M = (
    "avg by (instance) (100 * avg_over_time("
    "(1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)[10m:30s]))"
)


@dataclasses.dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


@pytest.fixture
def prometheus() -> Iterator[FakePrometheus]:
    fake = FakePrometheus()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for 127.0.0.1 (serves as CA, server and client certificate)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
        timeout=30,
    )  # fmt: skip
    return Certificate(cert, key)


@pytest.fixture
def tls_prometheus(certificate: Certificate) -> Iterator[FakePrometheus]:
    """A Prometheus over TLS that also accepts a client certificate signed by `certificate`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert, certificate.key)
    context.load_verify_locations(certificate.cert)
    context.verify_mode = ssl.CERT_OPTIONAL
    fake = FakePrometheus(context)
    yield fake
    fake.close()


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def collector(
    address: str,
    *,
    periods: tuple[str, ...] = ("10m",),
    registry: CollectorRegistry | None = None,
    read_text: dict[str, str] | None = None,
    **settings: object,
) -> UsageCollector:
    config = MetricsConfig(address=address, **settings)  # type: ignore[arg-type]
    files = read_text or {}
    return UsageCollector(
        config,
        periods,
        clock=FixedClock(NOW),
        observer=SchedulerMetrics(registry) if registry is not None else None,
        read_text=lambda path: files[path],
    )


def answer(
    fake: FakePrometheus, cpu: dict[str, float | str], memory: dict[str, float | str]
) -> None:
    fake.answer(
        {"node_cpu": fake.ok(fake.vector(cpu, AT)), "node_memory": fake.ok(fake.vector(memory, AT))}
    )


def usage(cpu: float, memory: float, period: str = "10m") -> dict[str, dict[str, float]]:
    return {"cpu": {period: cpu}, "memory": {period: memory}}


def fresh(node: str, cpu: float, memory: float, **extra: object) -> NodeUsage:
    return NodeUsage(node=node, usage=usage(cpu, memory), metrics_time=START, **extra)  # type: ignore[arg-type]


def collect(c: UsageCollector, previous: Mapping[str, NodeUsage] | None = None) -> Collection:
    return c.collect(previous or {})


# --- a successful collection --------------------------------------------------------------------


def test_one_vector_query_per_metric_measures_every_node(prometheus: FakePrometheus) -> None:
    answer(prometheus, {"n1:9100": 25.0, "n2:9100": 50.5}, {"n1:9100": 70.0, "n2:9100": 10.0})
    result = collect(collector(prometheus.address))
    assert result.failure is None
    assert result.usage == {"n1": fresh("n1", 25.0, 70.0), "n2": fresh("n2", 50.5, 10.0)}
    assert prometheus.queries() == [CPU_10M, MEMORY_10M]
    assert [(r.method, r.path) for r in prometheus.received] == [("POST", "/api/v1/query")] * 2
    assert prometheus.received[0].headers["Content-Type"] == "application/x-www-form-urlencoded"


def test_every_period_the_policy_reads_is_queried_for_each_metric(
    prometheus: FakePrometheus,
) -> None:
    answer(prometheus, {"n1": 30.0}, {"n1": 40.0})
    result = collect(collector(prometheus.address, periods=("10m", "1h")))
    assert [q.split("[")[-1] for q in prometheus.queries()] == [
        "10m:30s])", "1h:30s])", "10m:30s]))", "1h:30s]))",
    ]  # fmt: skip
    assert result.usage["n1"].usage == {
        "cpu": {"10m": 30.0, "1h": 30.0},
        "memory": {"10m": 40.0, "1h": 40.0},
    }


def test_query_templates_are_filled_with_the_period_and_the_label(
    prometheus: FakePrometheus,
) -> None:
    prometheus.answer({
        "cpu_busy": prometheus.ok(prometheus.vector({"n1": 12.0}, AT, label="node")),
        "mem_used": prometheus.ok(prometheus.vector({"n1": 34.0}, AT, label="node")),
    })  # fmt: skip
    c = collector(
        prometheus.address,
        periods=("5m",),
        node_label="node",
        cpu_query="max by ({label}) (cpu_busy[{period}])",
        memory_query='mem_used{job="node"}',
    )
    result = collect(c)
    assert prometheus.queries() == ["max by (node) (cpu_busy[5m])", 'mem_used{job="node"}']
    assert result.usage["n1"].usage == usage(12.0, 34.0, "5m")


def test_the_address_may_carry_a_path_prefix(prometheus: FakePrometheus) -> None:
    collect(collector(prometheus.address + "/prometheus/"))
    assert {r.path for r in prometheus.received} == {"/prometheus/api/v1/query"}


def test_values_are_clamped_to_percent_and_nan_or_infinite_series_are_skipped(
    prometheus: FakePrometheus,
) -> None:
    answer(
        prometheus,
        {"n1": 104.2, "n2": "NaN", "n3": 20.0},
        {"n1": -3.0, "n2": 50.0, "n3": "+Inf"},
    )
    result = collect(collector(prometheus.address))
    assert result.usage == {"n1": fresh("n1", 100.0, 0.0)}


def test_the_metrics_time_is_the_oldest_sample_time_of_the_node(prometheus: FakePrometheus) -> None:
    prometheus.answer({
        "node_cpu": prometheus.ok(prometheus.vector({"n1": 1.0}, AT + 2.5)),
        "node_memory": prometheus.ok(prometheus.vector({"n1": 2.0}, AT + 1.0)),
    })  # fmt: skip
    result = collect(collector(prometheus.address))
    assert result.usage["n1"].metrics_time == START + dt.timedelta(seconds=1)


def test_a_node_partly_measured_by_a_successful_collection_keeps_its_old_values_stale(
    prometheus: FakePrometheus,
) -> None:
    answer(prometheus, {"n1": 25.0, "n2": 60.0, "n3": 5.0}, {"n1": 70.0})
    previous = {"n2": fresh("n2", 40.0, 40.0, history=(usage(30.0, 30.0),))}
    result = collect(collector(prometheus.address), previous)
    assert result.usage == {
        "n1": fresh("n1", 25.0, 70.0),
        "n2": fresh("n2", 40.0, 40.0, stale=True),
    }
    assert result.fresh == 1


def test_a_node_no_longer_measured_is_forgotten_once_its_data_is_an_hour_old(
    prometheus: FakePrometheus,
) -> None:
    old = dataclasses.replace(fresh("gone", 1.0, 1.0), metrics_time=NOW - dt.timedelta(minutes=61))
    recent = dataclasses.replace(
        fresh("away", 1.0, 1.0), metrics_time=NOW - dt.timedelta(minutes=59)
    )
    result = collect(collector(prometheus.address), {"gone": old, "away": recent})
    assert result.usage == {"away": dataclasses.replace(recent, stale=True)}


@pytest.mark.parametrize(
    ("value", "node"),
    [
        ("n1:9100", "n1"),
        ("10.0.0.7:9100", "10.0.0.7"),
        ("[::1]:9100", "::1"),
        ("[fe80::1]", "fe80::1"),
        ("fe80::1", "fe80::1"),
        ("n1", "n1"),
        ("n1:http", "n1:http"),
    ],
)
def test_the_port_is_stripped_from_the_node_label(value: str, node: str) -> None:
    assert node_name(value) == node


def test_two_series_naming_one_node_keep_the_higher_value(prometheus: FakePrometheus) -> None:
    answer(prometheus, {"n1:9100": 20.0, "n1:9101": 35.0}, {"n1:9101": 50.0, "n1:9100": 55.0})
    result = collect(collector(prometheus.address))
    assert result.usage["n1"].usage == usage(35.0, 55.0)


def test_series_without_the_node_label_are_ignored(prometheus: FakePrometheus) -> None:
    body = prometheus.vector({"n1": 10.0}, AT, label="node")
    prometheus.respond = lambda _query: prometheus.ok(body)
    assert collect(collector(prometheus.address)).usage == {}


# --- history ------------------------------------------------------------------------------------


def test_history_holds_the_earlier_consecutive_collections_oldest_first(
    prometheus: FakePrometheus,
) -> None:
    c = collector(prometheus.address)
    state: dict[str, NodeUsage] = {}
    for value in (10.0, 20.0, 30.0):
        answer(prometheus, {"n1": value}, {"n1": value + 1})
        state = collect(c, state).usage
    assert state["n1"].usage == usage(30.0, 31.0)
    assert state["n1"].history == (usage(10.0, 11.0), usage(20.0, 21.0))


def test_history_keeps_at_most_nine_collections(prometheus: FakePrometheus) -> None:
    c = collector(prometheus.address)
    state: dict[str, NodeUsage] = {}
    for value in range(12):
        answer(prometheus, {"n1": float(value)}, {"n1": 0.0})
        state = collect(c, state).usage
    assert HISTORY_LIMIT == 9
    assert [h["cpu"]["10m"] for h in state["n1"].history] == [
        2.0,
        3.0,
        4.0,
        5.0,
        6.0,
        7.0,
        8.0,
        9.0,
        10.0,
    ]


def test_history_restarts_when_the_periods_change(prometheus: FakePrometheus) -> None:
    answer(prometheus, {"n1": 5.0}, {"n1": 6.0})
    previous = {"n1": fresh("n1", 1.0, 2.0, history=(usage(0.0, 0.0),))}
    result = collect(collector(prometheus.address, periods=("10m", "1h")), previous)
    assert result.usage["n1"].history == ()


# --- failures -----------------------------------------------------------------------------------


def test_a_failed_collection_keeps_every_value_and_its_age_and_marks_it_stale(
    prometheus: FakePrometheus,
) -> None:
    prometheus.respond = lambda _query: (503, b"upstream unavailable")
    previous = {
        "n1": fresh("n1", 25.0, 70.0, history=(usage(20.0, 60.0),)),
        "n2": dataclasses.replace(
            fresh("n2", 5.0, 6.0), metrics_time=START - dt.timedelta(hours=3)
        ),
    }
    result = collect(collector(prometheus.address), previous)
    assert result.failure is not None
    assert (result.failure.reason, str(result.failure)) == (
        "http",
        "HTTP 503: upstream unavailable",
    )
    assert result.usage == {
        "n1": fresh("n1", 25.0, 70.0, stale=True),
        "n2": dataclasses.replace(previous["n2"], stale=True),
    }
    assert result.fresh == 0


def test_one_failed_query_fails_the_whole_collection(prometheus: FakePrometheus) -> None:
    prometheus.answer({
        "node_cpu": prometheus.ok(prometheus.vector({"n1": 99.0}, AT)),
        "node_memory": (500, b""),
    })  # fmt: skip
    result = collect(collector(prometheus.address), {"n1": fresh("n1", 1.0, 2.0)})
    assert result.usage == {"n1": fresh("n1", 1.0, 2.0, stale=True)}


def test_a_collection_after_a_failure_is_fresh_with_its_history_restarted(
    prometheus: FakePrometheus,
) -> None:
    c = collector(prometheus.address)
    prometheus.respond = lambda _query: (502, b"")
    state = collect(c, {"n1": fresh("n1", 1.0, 2.0, history=(usage(0.0, 0.0),))}).usage
    answer(prometheus, {"n1": 3.0}, {"n1": 4.0})
    state = collect(c, state).usage
    assert state == {"n1": fresh("n1", 3.0, 4.0)}


@pytest.mark.parametrize(
    ("status", "body", "reason", "message"),
    [
        pytest.param(
            400,
            b'{"status":"error","errorType":"bad_data","error":"parse error at char 5"}',
            "query",
            "HTTP 400: bad_data: parse error at char 5",
            id="bad-promql",
        ),
        pytest.param(200, b"<html>login</html>", "response", None, id="not-json"),
        pytest.param(
            200,
            b'{"status":"success","data":{"resultType":"matrix","result":[]}}',
            "response",
            "expected an instant vector (one series per node), got 'matrix'",
            id="range-result",
        ),
        pytest.param(
            200,
            b'{"status":"error","errorType":"timeout","error":"query timed out"}',
            "query",
            "timeout: query timed out",
            id="status-error",
        ),
        pytest.param(
            200,
            b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}}',
            "response",
            "data.result[0].value is not [time, value]",
            id="series-without-value",
        ),
        pytest.param(404, b"404 page not found", "http", "HTTP 404: 404 page not found", id="404"),
    ],
)
def test_a_bad_answer_is_a_failure_with_its_reason(
    prometheus: FakePrometheus, status: int, body: bytes, reason: str, message: str | None
) -> None:
    prometheus.respond = lambda _query: (status, body)
    result = collect(collector(prometheus.address))
    assert result.failure is not None
    assert result.failure.reason == reason
    if message is not None:
        assert str(result.failure) == message


def test_a_refused_connection_is_a_connection_failure(closed_port: int) -> None:
    result = collect(collector(f"http://127.0.0.1:{closed_port}"), {"n1": fresh("n1", 1.0, 2.0)})
    assert result.failure is not None
    assert result.failure.reason == "connection"
    assert result.usage == {"n1": fresh("n1", 1.0, 2.0, stale=True)}


def test_no_answer_within_the_timeout_is_a_timeout_failure(prometheus: FakePrometheus) -> None:
    prometheus.hold = threading.Event()
    result = collect(collector(prometheus.address, timeout_seconds=0.2))
    assert result.failure is not None
    assert result.failure.reason == "timeout"


def test_failures_and_query_durations_are_counted(prometheus: FakePrometheus) -> None:
    registry = CollectorRegistry()
    c = collector(prometheus.address, registry=registry)
    collect(c)
    prometheus.respond = lambda _query: (503, b"")
    collect(c)
    sample = registry.get_sample_value
    assert sample("vscheduler_usage_query_duration_seconds_count", {"metric": "cpu"}) == 2.0
    assert sample("vscheduler_usage_query_duration_seconds_count", {"metric": "memory"}) == 1.0
    assert sample("vscheduler_usage_collection_failures_total", {"reason": "http"}) == 1.0
    assert sample("vscheduler_usage_collection_failures_total", {"reason": "timeout"}) == 0.0


def test_parse_vector_reads_a_prometheus_answer_by_the_label() -> None:
    body = (
        b'{"status":"success","data":{"resultType":"vector","result":['
        b'{"metric":{"node":"n1","job":"x"},"value":[1767225600.5,"41.5"]}]}}'
    )
    [sample] = parse_vector(body, "node")
    assert (sample.node, sample.value, sample.timestamp) == ("n1", 41.5, 1767225600.5)


# --- credentials and TLS ------------------------------------------------------------------------


def test_a_bearer_token_is_sent_in_the_authorization_header(prometheus: FakePrometheus) -> None:
    collect(collector(prometheus.address, bearer_token="t0ken"))
    assert {r.headers["Authorization"] for r in prometheus.received} == {"Bearer t0ken"}


def test_the_bearer_token_file_is_read_at_every_collection(prometheus: FakePrometheus) -> None:
    files = {"/token": "first\n"}
    c = collector(prometheus.address, bearer_token_file="/token", read_text=files)
    collect(c)
    files["/token"] = "rotated"
    collect(c)
    assert [r.headers["Authorization"] for r in prometheus.received] == [
        "Bearer first", "Bearer first", "Bearer rotated", "Bearer rotated",
    ]  # fmt: skip


def test_an_unreadable_token_file_fails_the_collection_without_a_query(tmp_path: Path) -> None:
    config = MetricsConfig(address="http://127.0.0.1:1", bearer_token_file=str(tmp_path / "none"))
    result = UsageCollector(config, ("10m",), clock=FixedClock(NOW)).collect({})
    assert result.failure is not None
    assert result.failure.reason == "credentials"


def test_an_empty_token_file_fails_the_collection(prometheus: FakePrometheus) -> None:
    c = collector(prometheus.address, bearer_token_file="/token", read_text={"/token": "\n"})
    result = collect(c)
    assert result.failure is not None
    assert (result.failure.reason, str(result.failure)) == (
        "credentials",
        "bearerTokenFile /token is empty",
    )
    assert prometheus.received == []


def test_no_tls_context_is_built_for_an_http_address() -> None:
    assert ssl_context(MetricsConfig(address="http://p:9090", tls_ca_file="/nowhere")) is None


def test_an_https_address_verifies_against_the_system_trust_store_by_default() -> None:
    context = ssl_context(MetricsConfig(address="https://p:9090"))
    assert context is not None
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)


def test_insecure_skip_verify_turns_verification_off() -> None:
    context = ssl_context(MetricsConfig(address="https://p:9090", tls_insecure_skip_verify=True))
    assert context is not None
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_NONE, False)


def test_the_ca_file_is_the_trust_store(certificate: Certificate) -> None:
    context = ssl_context(
        MetricsConfig(address="https://p:9090", tls_ca_file=str(certificate.cert))
    )
    assert context is not None
    assert context.cert_store_stats()["x509_ca"] == 1


def test_a_missing_tls_file_is_a_tls_failure(tmp_path: Path) -> None:
    config = MetricsConfig(address="https://p:9090", tls_ca_file=str(tmp_path / "ca.crt"))
    with pytest.raises(QueryError) as caught:
        ssl_context(config)
    assert caught.value.reason == "tls"


def test_a_server_certificate_signed_by_the_ca_file_is_trusted(
    tls_prometheus: FakePrometheus, certificate: Certificate
) -> None:
    answer(tls_prometheus, {"n1": 1.0}, {"n1": 2.0})
    result = collect(collector(tls_prometheus.address, tls_ca_file=str(certificate.cert)))
    assert result.failure is None
    assert result.usage == {"n1": fresh("n1", 1.0, 2.0)}


def test_a_server_certificate_not_trusted_is_a_tls_failure(tls_prometheus: FakePrometheus) -> None:
    result = collect(collector(tls_prometheus.address))
    assert result.failure is not None
    assert result.failure.reason == "tls"
    assert tls_prometheus.received == []


def test_insecure_skip_verify_accepts_any_server_certificate(
    tls_prometheus: FakePrometheus,
) -> None:
    result = collect(collector(tls_prometheus.address, tls_insecure_skip_verify=True))
    assert result.failure is None


def test_the_client_certificate_is_presented(
    tls_prometheus: FakePrometheus, certificate: Certificate
) -> None:
    c = collector(
        tls_prometheus.address,
        tls_ca_file=str(certificate.cert),
        tls_cert_file=str(certificate.cert),
        tls_key_file=str(certificate.key),
    )
    assert collect(c).failure is None
    subject = ((("commonName", "127.0.0.1"),),)
    assert [r.peer_subject for r in tls_prometheus.received] == [subject, subject]


def test_without_a_client_certificate_none_is_presented(
    tls_prometheus: FakePrometheus, certificate: Certificate
) -> None:
    collect(collector(tls_prometheus.address, tls_ca_file=str(certificate.cert)))
    assert [r.peer_subject for r in tls_prometheus.received] == [None, None]

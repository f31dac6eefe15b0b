"""ObsServer answers /metrics, /healthz and /readyz from what it was handed, and stops promptly."""

from __future__ import annotations

import platform
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from vscheduler.clock import perf_counter
from vscheduler.obs.http import ListenError, ObsServer, parse_address
from vscheduler.obs.metrics import SchedulerMetrics


class Probes:
    def __init__(self) -> None:
        self.healthy = True
        self.ready: tuple[bool, str] = (False, "informers not synced")
        self.error: Exception | None = None

    def is_healthy(self) -> bool:
        return self.healthy

    def is_ready(self) -> tuple[bool, str]:
        if self.error is not None:
            raise self.error
        return self.ready


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def probes() -> Probes:
    return Probes()


@pytest.fixture
def base(registry: CollectorRegistry, probes: Probes) -> Iterator[str]:
    server = ObsServer(
        "127.0.0.1:0", registry=registry, is_healthy=probes.is_healthy, is_ready=probes.is_ready
    )
    port = server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers["Content-Type"], err.read().decode()


def test_metrics_serves_the_injected_registry_in_prometheus_text_format(
    base: str, registry: CollectorRegistry
) -> None:
    SchedulerMetrics(registry).observe_effect("bind", "success")

    status, content_type, body = get(base + "/metrics")

    assert status == 200
    assert content_type == CONTENT_TYPE_LATEST
    assert "vscheduler_pods_bound_total 1.0" in body
    assert "# TYPE vscheduler_e2e_scheduling_latency_milliseconds histogram" in body


def test_metrics_serves_no_created_series_and_leaves_prometheus_clients_switch_alone(
    base: str, registry: CollectorRegistry
) -> None:
    metrics = SchedulerMetrics(registry)
    metrics.observe_skip()
    metrics.observe_duration("bind", 0.01)

    body = get(base + "/metrics")[2]

    assert "vscheduler_cycle_skipped_total 1.0" in body
    assert "vscheduler_bind_duration_seconds_count 1.0" in body
    assert [line for line in body.splitlines() if "_created" in line] == []
    assert registry.get_sample_value("vscheduler_cycle_skipped_created") is not None


def test_metrics_serves_the_process_figures_and_the_build_info(
    base: str, registry: CollectorRegistry
) -> None:
    SchedulerMetrics(registry)

    body = get(base + "/metrics")[2]

    assert "\nprocess_resident_memory_bytes " in body
    assert "\nprocess_cpu_seconds_total " in body
    assert "\nprocess_open_fds " in body
    assert "\npython_info{" in body
    assert "\npython_gc_collections_total{" in body
    line = re.search(r"^vscheduler_build_info\{(.*)\} 1\.0$", body, re.M)
    assert line is not None
    labels = dict(re.findall(r'(\w+)="([^"]*)"', line.group(1)))
    assert labels["python"] == platform.python_version()
    assert set(labels) == {"version", "python", "kubernetes_client"}
    assert re.fullmatch(r"\d+\.\d+.*", labels["version"])
    assert re.fullmatch(r"\d+\.\d+\.\d+", labels["kubernetes_client"])


def test_healthz_is_ok_while_healthy_and_500_when_not(base: str, probes: Probes) -> None:
    assert get(base + "/healthz")[::2] == (200, "ok")

    probes.healthy = False
    assert get(base + "/healthz")[::2] == (500, "unhealthy")


def test_readyz_is_503_with_the_reason_until_ready(base: str, probes: Probes) -> None:
    assert get(base + "/readyz")[::2] == (503, "informers not synced")

    probes.ready = (False, "not leading")
    assert get(base + "/readyz")[::2] == (503, "not leading")

    probes.ready = (True, "")
    assert get(base + "/readyz")[::2] == (200, "ok")


def test_a_probe_that_raises_is_a_failed_probe_not_a_crash(
    base: str, probes: Probes, caplog: pytest.LogCaptureFixture
) -> None:
    probes.error = RuntimeError("cache gone")

    status, _, body = get(base + "/readyz")

    assert status == 503
    assert body == "probe failed: RuntimeError: cache gone"
    assert get(base + "/healthz")[0] == 200
    assert "probe failed" in caplog.text


def test_query_strings_other_than_verbose_are_ignored_and_other_paths_are_404(base: str) -> None:
    assert get(base + "/healthz?watch=1")[::2] == (200, "ok")
    assert get(base + "/")[0] == 404
    assert get(base + "/metrics/extra")[0] == 404


def test_start_returns_a_free_port_and_stop_returns_within_a_second(
    registry: CollectorRegistry, probes: Probes
) -> None:
    server = ObsServer(
        "127.0.0.1:0", registry=registry, is_healthy=probes.is_healthy, is_ready=probes.is_ready
    )
    port = server.start()
    assert port > 0
    assert [t for t in threading.enumerate() if t.name == "obs-http" and t.daemon]

    started = perf_counter()
    server.stop()
    assert perf_counter() - started < 1.0
    assert not [t for t in threading.enumerate() if t.name == "obs-http"]
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
    server.stop()  # idempotent


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        (":9090", ("0.0.0.0", 9090)),
        ("0.0.0.0:0", ("0.0.0.0", 0)),
        ("[::1]:8080", ("::1", 8080)),
    ],
)
def test_listen_addresses_parse_as_host_and_port(address: str, parsed: tuple[str, int]) -> None:
    assert parse_address(address) == parsed


@pytest.mark.parametrize("address", ["8080", "localhost", "host:http"])
def test_a_listen_address_without_a_numeric_port_is_refused(address: str) -> None:
    with pytest.raises(ValueError, match="expected host:port"):
        parse_address(address)


def test_livez_answers_as_kube_components_serve_it(base: str, probes: Probes) -> None:
    assert get(base + "/livez") == (200, "text/plain; charset=utf-8", "ok")
    assert get(base + "/livez?verbose")[::2] == (200, "[+]ping ok\nlivez check passed\n")
    assert get(base + "/livez/ping")[::2] == (200, "ok")
    probes.healthy = False
    assert get(base + "/livez")[::2] == (500, "unhealthy")
    assert get(base + "/livez?verbose=1")[::2] == (
        500,
        "[+]ping ok\n[-]scheduler failed: unhealthy\nlivez check failed\n",
    )
    assert get(base + "/healthz/ping")[::2] == (200, "ok")


def test_readyz_verbose_names_the_reason(base: str) -> None:
    assert get(base + "/readyz?verbose")[::2] == (
        503,
        "[+]ping ok\n[-]scheduler failed: informers not synced\nreadyz check failed\n",
    )


@pytest.mark.parametrize("address", ["127.0.0.1:65536", ":70000", "[::1]:99999"])
def test_a_port_above_65535_is_refused(address: str) -> None:
    with pytest.raises(ValueError, match="is above 65535"):
        parse_address(address)


def test_an_address_in_use_is_a_listen_error_naming_it(
    registry: CollectorRegistry, probes: Probes
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = ObsServer(
            f"127.0.0.1:{port}",
            registry=registry,
            is_healthy=probes.is_healthy,
            is_ready=probes.is_ready,
        )
        with pytest.raises(ListenError) as raised:
            server.start()
    assert str(raised.value) == f"cannot listen on 127.0.0.1:{port}: Address already in use"

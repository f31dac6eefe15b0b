"""Fixtures of the integration suite: a cluster per test (on the chosen backend), and schedulers
on it. `VSCHEDULER_TEST_BACKEND` = local (default) | kind | existing; see integration/README.md."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from integration import harness
from integration.exporter import NodeExporter
from integration.prometheus import PrometheusServer


@pytest.fixture(scope="session")
def remote_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[harness.RemoteBackend]:
    """`kind` or `existing`: the cluster the session shares, with its own kwok and the CRDs.

    A backend that cannot run here fails every test with what is missing: never a skip.
    """
    workdir = tmp_path_factory.mktemp(f"backend-{harness.backend()}")
    unavailable = ""
    try:
        with harness.remote_backend(harness.backend(), workdir) as remote:
            yield remote
    except harness.BackendUnavailableError as exc:
        unavailable = str(exc)
    if unavailable:
        pytest.fail(f"backend {harness.backend()!r} unavailable: {unavailable}", pytrace=False)


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[harness.ScopedCluster]:
    """A cluster with the Volcano CRDs and the test's namespace (`test`), and no nodes.

    `local`: a control plane of the test's own. `kind`/`existing`: the session's cluster seen
    through a RemoteCluster, which scopes namespaces, scheduler names and nodes to the test and
    deletes what the test made when it ends (see harness.RemoteCluster).
    """
    if harness.backend() == "local":
        cp = harness.LocalCluster(build=True)
        cp.start()
        try:
            harness.install_crds(cp)
            cp.create_namespace("test")
            yield cp
        finally:
            cp.stop()
        return
    remote: harness.RemoteBackend = request.getfixturevalue("remote_backend")
    scoped = remote.for_test(request.node.nodeid)
    try:
        yield scoped
    finally:
        scoped.teardown()


@pytest.fixture
def start_scheduler(
    cluster: harness.Cluster, tmp_path: Path
) -> Iterator[Callable[..., harness.Scheduler]]:
    """Start `vscheduler run` processes; all are stopped at the end of the test."""
    started: list[harness.Scheduler] = []

    def start(**kwargs: object) -> harness.Scheduler:
        scheduler = harness.Scheduler(cluster, tmp_path, **kwargs)  # type: ignore[arg-type]
        started.append(scheduler)
        return scheduler

    yield start
    for scheduler in started:
        scheduler.stop()


@pytest.fixture
def node_exporter() -> Iterator[NodeExporter]:
    """node_exporter-style series served from this process (integration/exporter.py)."""
    with NodeExporter() as exporter:
        yield exporter


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[PrometheusServer]:
    """A real Prometheus (integration/prometheus.py), configured but not started, so that the
    test can give it history first. Scrape jobs: `node` (honor_labels, for a NodeExporter) and
    `vscheduler`; targets through `set_targets`. Stopped at the end of the test."""
    server = PrometheusServer(tmp_path / "prometheus", jobs={"node": True, "vscheduler": False})
    try:
        yield server
    finally:
        server.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A skipped integration test is a failure: the suite must run everywhere it is run."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"integration tests may not be skipped: {report.longrepr}"

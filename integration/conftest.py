"""Fixtures of the integration suite: a real control plane per test, and schedulers on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from integration import harness
from integration.controlplane import LocalControlPlane


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalControlPlane]:
    """A started control plane with the Volcano CRDs and a `test` namespace, no nodes."""
    if harness.backend() != "local":
        pytest.fail(
            f"backend {harness.backend()!r}: only the local backend is wired in this release; "
            "see integration/harness.py"
        )
    cp = LocalControlPlane(build=True)
    cp.start()
    try:
        harness.install_crds(cp)
        cp.create_namespace("test")
        yield cp
    finally:
        cp.stop()


@pytest.fixture
def start_scheduler(
    cluster: LocalControlPlane, tmp_path: Path
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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A skipped integration test is a failure: the suite must run everywhere it is run."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"integration tests may not be skipped: {report.longrepr}"

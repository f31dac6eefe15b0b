"""PodGroup status where the PodGroup CRD has no status subresource (Volcano's own CRD).

There `PATCH podgroups/{name}/status` answers 404 though the PodGroup exists: the writer sends the
same merge patch to the PodGroup itself and, from then on, only there. A 404 there too means the
PodGroup is gone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from vscheduler.clock import FixedClock
from vscheduler.errors import NotFoundError, TransientClusterError
from vscheduler.kube.client import KubeApi
from vscheduler.kube.writers import KubeWriter

if TYPE_CHECKING:
    from conftest import FakeApiServer

PODGROUP = "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/podgroups/pg-1"
STATUS = f"{PODGROUP}/status"
RUNNING = {"phase": "Running", "running": 4}


@pytest.fixture
def writer(api: KubeApi, clock: FixedClock) -> KubeWriter:
    return KubeWriter(api, clock=clock)


def podgroup(status: dict[str, Any]) -> dict[str, Any]:
    """The PodGroup as the API server answers a PATCH."""
    return {"kind": "PodGroup", "metadata": {"name": "pg-1"}, "status": status}


def not_found(apiserver: FakeApiServer, path: str) -> None:
    body = apiserver.status(404, "NotFound", 'podgroups.scheduling.volcano.sh "pg-1" not found')
    apiserver.reply("PATCH", path, 404, body)


def sent(apiserver: FakeApiServer) -> list[tuple[str, Any]]:
    return [(r.path, r.body) for r in apiserver.requests("PATCH")]


@pytest.mark.timeout(10)
def test_a_404_from_the_status_subresource_sends_the_same_patch_to_the_podgroup_itself(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    not_found(apiserver, STATUS)
    apiserver.reply("PATCH", PODGROUP, 200, podgroup(RUNNING))
    writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    assert sent(apiserver) == [(STATUS, {"status": RUNNING}), (PODGROUP, {"status": RUNNING})]
    assert apiserver.requests()[1].headers["content-type"] == "application/merge-patch+json"


@pytest.mark.timeout(10)
def test_once_the_subresource_proved_absent_later_writes_go_straight_to_the_podgroup(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    not_found(apiserver, STATUS)
    apiserver.reply("PATCH", PODGROUP, 200, podgroup(RUNNING))
    apiserver.reply("PATCH", PODGROUP, 200, podgroup({"phase": "Completed", "running": 4}))
    writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    writer.patch_podgroup_status("team-a", "pg-1", {"phase": "Completed"})
    assert [path for path, _ in sent(apiserver)] == [STATUS, PODGROUP, PODGROUP]
    assert writer.podgroup_status_subresource is False


@pytest.mark.timeout(10)
def test_a_404_from_both_means_the_podgroup_is_gone_and_the_subresource_is_not_doubted(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    not_found(apiserver, STATUS)
    not_found(apiserver, PODGROUP)
    with pytest.raises(NotFoundError, match="not found"):
        writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    assert writer.podgroup_status_subresource is True
    apiserver.reply("PATCH", STATUS, 200, podgroup(RUNNING))
    writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    assert [path for path, _ in sent(apiserver)] == [STATUS, PODGROUP, STATUS]


@pytest.mark.timeout(10)
def test_without_the_subresource_a_404_from_the_podgroup_means_it_is_gone(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    writer.podgroup_status_subresource = False
    not_found(apiserver, PODGROUP)
    with pytest.raises(NotFoundError):
        writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    assert (sent(apiserver), writer.podgroup_status_subresource) == (
        [(PODGROUP, {"status": RUNNING})],
        False,
    )


@pytest.mark.timeout(10)
def test_a_status_the_podgroup_ignored_sends_the_writer_back_to_the_subresource_to_retry(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    writer.podgroup_status_subresource = False  # the CRD then gained a status subresource
    apiserver.reply("PATCH", PODGROUP, 200, podgroup({"phase": "Pending"}))
    with pytest.raises(TransientClusterError, match="ignored the status"):
        writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    assert writer.podgroup_status_subresource is True
    apiserver.reply("PATCH", STATUS, 200, podgroup(RUNNING))
    writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    assert [path for path, _ in sent(apiserver)] == [PODGROUP, STATUS]


@pytest.mark.timeout(10)
def test_conditions_count_as_written_when_their_types_and_statuses_are_there(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    writer.podgroup_status_subresource = False
    wanted = {"conditions": [{"type": "Scheduled", "status": "True", "transitionID": "c-1"}]}
    answer = {"conditions": [{"type": "Scheduled", "status": "True"}], "phase": "Running"}
    apiserver.reply("PATCH", PODGROUP, 200, podgroup(answer))
    writer.patch_podgroup_status("team-a", "pg-1", wanted)
    assert writer.podgroup_status_subresource is False


@pytest.mark.timeout(10)
def test_the_fallback_is_logged_once_naming_the_podgroup_crd(
    apiserver: FakeApiServer, writer: KubeWriter, caplog: pytest.LogCaptureFixture
) -> None:
    not_found(apiserver, STATUS)
    apiserver.reply("PATCH", PODGROUP, 200, podgroup(RUNNING))
    apiserver.reply("PATCH", PODGROUP, 200, podgroup(RUNNING))
    writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    writer.patch_podgroup_status("team-a", "pg-1", RUNNING)
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "the PodGroup CRD has no status subresource (Volcano's CRD): PodGroup status is written"
        " through the PodGroup itself from now on"
    ]

"""A Queue's status: merge-patched to `queues/{name}/status` (cluster-scoped); where the Queue
CRD has no status subresource, the same patch goes to the Queue itself, as for PodGroups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from vscheduler.clock import FixedClock
from vscheduler.errors import NotFoundError
from vscheduler.kube.client import KubeApi
from vscheduler.kube.writers import KubeWriter

if TYPE_CHECKING:
    from conftest import FakeApiServer

QUEUE = "/apis/scheduling.volcano.sh/v1beta1/queues/research"
STATUS = f"{QUEUE}/status"
ALLOCATED = {"allocated": {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": None}}


@pytest.fixture
def writer(api: KubeApi, clock: FixedClock) -> KubeWriter:
    return KubeWriter(api, clock=clock)


def not_found(apiserver: FakeApiServer, path: str) -> None:
    body = apiserver.status(404, "NotFound", 'queues.scheduling.volcano.sh "research" not found')
    apiserver.reply("PATCH", path, 404, body)


def sent(apiserver: FakeApiServer) -> list[tuple[str, Any]]:
    return [(r.path, r.body) for r in apiserver.requests("PATCH")]


@pytest.mark.timeout(10)
def test_the_status_goes_to_the_queues_status_subresource_as_a_merge_patch(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("PATCH", STATUS, 200, {"kind": "Queue", "status": {}})
    writer.patch_queue_status("research", ALLOCATED)
    assert sent(apiserver) == [(STATUS, {"status": ALLOCATED})]
    assert apiserver.requests()[0].headers["content-type"] == "application/merge-patch+json"


@pytest.mark.timeout(10)
def test_without_a_status_subresource_the_patch_goes_to_the_queue_which_shows_it_without_nulls(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    not_found(apiserver, STATUS)
    shown = {"allocated": {"cpu": "1500m", "memory": "1Gi"}}
    apiserver.reply("PATCH", QUEUE, 200, {"kind": "Queue", "status": shown})
    writer.patch_queue_status("research", ALLOCATED)
    assert [path for path, _ in sent(apiserver)] == [STATUS, QUEUE]
    assert (writer.queue_status_subresource, writer.podgroup_status_subresource) == (False, True)


@pytest.mark.timeout(10)
def test_a_404_from_both_means_the_queue_is_gone(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    not_found(apiserver, STATUS)
    not_found(apiserver, QUEUE)
    with pytest.raises(NotFoundError):
        writer.patch_queue_status("research", ALLOCATED)
    assert writer.queue_status_subresource is True

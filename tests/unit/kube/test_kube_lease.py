from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import pytest

from vscheduler.errors import ClusterError, ConflictError
from vscheduler.kube.client import KubeApi
from vscheduler.kube.lease import LeaseClient, LeaseRecord

if TYPE_CHECKING:
    from conftest import FakeApiServer

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
LEASE = f"{LEASES}/vscheduler"
T0 = dt.datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=dt.UTC)


def stored(rv: str, holder: str = "replica-a") -> dict[str, object]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "vscheduler", "namespace": "kube-system", "resourceVersion": rv},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": "2024-05-01T12:00:00.250000Z",
            "renewTime": "2024-05-01T12:00:00.250000Z",
            "leaseTransitions": 2,
        },
    }


@pytest.fixture
def lease(api: KubeApi) -> LeaseClient:
    return LeaseClient(api, "kube-system", "vscheduler")


@pytest.mark.timeout(10)
def test_get_answers_none_when_there_is_no_lease(lease: LeaseClient) -> None:
    assert lease.get() is None


@pytest.mark.timeout(10)
def test_get_reads_the_holder_times_and_resource_version(
    apiserver: FakeApiServer, lease: LeaseClient
) -> None:
    apiserver.reply("GET", LEASE, 200, stored("77"))
    assert lease.get() == LeaseRecord("replica-a", 15, T0, T0, 2, "77")


@pytest.mark.timeout(10)
def test_create_posts_a_new_lease_into_the_namespace(
    apiserver: FakeApiServer, lease: LeaseClient
) -> None:
    apiserver.reply("POST", LEASES, 201, stored("1"))
    record = lease.create(LeaseRecord("replica-a", 15, T0, T0, 0))
    assert record.resource_version == "1"
    (request,) = apiserver.requests()
    assert request.body == {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "vscheduler", "namespace": "kube-system"},
        "spec": {
            "holderIdentity": "replica-a",
            "leaseDurationSeconds": 15,
            "acquireTime": "2024-05-01T12:00:00.250000Z",
            "renewTime": "2024-05-01T12:00:00.250000Z",
            "leaseTransitions": 0,
        },
    }


@pytest.mark.timeout(10)
def test_creating_a_lease_another_replica_created_first_raises_conflict(
    apiserver: FakeApiServer, lease: LeaseClient
) -> None:
    apiserver.reply("POST", LEASES, 409, apiserver.status(409, "AlreadyExists", "exists"))
    with pytest.raises(ConflictError):
        lease.create(LeaseRecord("replica-b", 15, T0, T0))


@pytest.mark.timeout(10)
def test_update_replaces_the_lease_at_the_resource_version_it_was_read_at(
    apiserver: FakeApiServer, lease: LeaseClient
) -> None:
    apiserver.reply("PUT", LEASE, 200, stored("78"))
    renewed = lease.update(LeaseRecord("replica-a", 15, T0, T0 + dt.timedelta(seconds=10), 2, "77"))
    assert renewed.resource_version == "78"
    (request,) = apiserver.requests()
    assert request.body["metadata"]["resourceVersion"] == "77"
    assert request.body["spec"]["renewTime"] == "2024-05-01T12:00:10.250000Z"


@pytest.mark.timeout(10)
def test_an_update_that_lost_the_race_raises_conflict(
    apiserver: FakeApiServer, lease: LeaseClient
) -> None:
    apiserver.reply(
        "PUT", LEASE, 409, apiserver.status(409, "Conflict", "the object has been modified")
    )
    with pytest.raises(ConflictError, match="has been modified"):
        lease.update(LeaseRecord("replica-b", 15, T0, T0, 3, "77"))


def test_an_update_without_a_resource_version_is_refused_before_any_request(
    lease: LeaseClient,
) -> None:
    with pytest.raises(ValueError, match="resourceVersion"):
        lease.update(LeaseRecord("replica-a", 15, T0, T0))


@pytest.mark.timeout(10)
def test_a_malformed_lease_time_is_a_cluster_error(
    apiserver: FakeApiServer, lease: LeaseClient
) -> None:
    doc = stored("5")
    doc["spec"]["renewTime"] = "yesterday"  # type: ignore[index]
    apiserver.reply("GET", LEASE, 200, doc)
    with pytest.raises(ClusterError, match="renewTime"):
        lease.get()

"""A read-only KubeApi (`run --dry-run`, the live tools) sends no write, whichever writer asks;
it reads as any other."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from vscheduler.clock import FixedClock
from vscheduler.effects.ports import ObjectRef
from vscheduler.errors import ReadOnlyError
from vscheduler.kube.client import KubeApi, build_api_client
from vscheduler.kube.lease import LeaseClient, LeaseRecord
from vscheduler.kube.ratelimit import TokenBucket
from vscheduler.kube.writers import KubeWriter

if TYPE_CHECKING:
    from conftest import FakeApiServer

POD = "/api/v1/namespaces/team-a/pods/worker-0"
REF = ObjectRef("Pod", "v1", "team-a", "worker-0", "uid-0")

WRITES: dict[str, Callable[[KubeWriter, LeaseClient], object]] = {
    "bind": lambda w, _: w.bind("team-a", "worker-0", "uid-0", "node-a"),
    "evict": lambda w, _: w.evict("team-a", "worker-0", "uid-0"),
    "evict dry run": lambda w, _: w.evict("team-a", "worker-0", "uid-0", dry_run=True),
    "pod condition": lambda w, _: w.set_pod_condition("team-a", "worker-0", {"type": "X"}),
    "podgroup status": lambda w, _: w.patch_podgroup_status("team-a", "pg", {"phase": "X"}),
    "config map": lambda w, _: w.remove_config_map_keys("kube-system", "cm", ["k"]),
    "event": lambda w, _: w.record_event(REF, "Normal", "Scheduled", "m"),
    "lease create": lambda _, lease: lease.create(LeaseRecord(holder_identity="a")),
    "lease update": lambda _, lease: lease.update(
        LeaseRecord(holder_identity="a", resource_version="1")
    ),
}


@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
def test_a_read_only_client_refuses_every_write_before_it_is_sent(
    apiserver: FakeApiServer,
    kubeconfig: Path,
    clock: FixedClock,
    write: Callable[[KubeWriter, LeaseClient], object],
) -> None:
    api = KubeApi(
        build_api_client(str(kubeconfig), pool_maxsize=2),
        TokenBucket(0, 0, clock=clock),
        read_only=True,
    )
    try:
        with pytest.raises(ReadOnlyError, match=r"not sent: this client is read-only$"):
            write(KubeWriter(api, clock=clock), LeaseClient(api, "kube-system", "vscheduler"))
        assert apiserver.requests() == []
        apiserver.reply("GET", POD, 200, {"kind": "Pod"})
        assert api.request("GET", POD) == {"kind": "Pod"}
    finally:
        api.close()


def test_the_refusal_names_the_method_and_path(kubeconfig: Path, clock: FixedClock) -> None:
    api = KubeApi(
        build_api_client(str(kubeconfig), pool_maxsize=2),
        TokenBucket(0, 0, clock=clock),
        read_only=True,
    )
    try:
        with pytest.raises(ReadOnlyError) as caught:
            KubeWriter(api, clock=clock).bind("team-a", "worker-0", "uid-0", "node-a")
        assert str(caught.value) == (f"POST {POD}/binding not sent: this client is read-only")
    finally:
        api.close()

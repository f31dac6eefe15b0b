from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING

import pytest

from vscheduler.errors import ClusterError, ExpiredError, NotFoundError, TransientClusterError
from vscheduler.informer.kinds import NODE, POD, PODGROUP, config_map
from vscheduler.kube.client import KubeApi
from vscheduler.kube.lister import KubeLister

if TYPE_CHECKING:
    from conftest import FakeApiServer

PODS = "/api/v1/pods"


def pod(name: str, rv: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}


def page(items: list[dict[str, object]], rv: str, token: str = "") -> dict[str, object]:
    metadata = {"resourceVersion": rv, **({"continue": token} if token else {})}
    return {"kind": "PodList", "apiVersion": "v1", "metadata": metadata, "items": items}


def event(type_: str, obj: dict[str, object]) -> dict[str, object]:
    return {"type": type_, "object": obj}


def bookmark(rv: str) -> dict[str, object]:
    return event(
        "BOOKMARK", {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": rv}}
    )


def collect(
    lister: KubeLister, rv: str = "10", stop: threading.Event | None = None
) -> list[tuple[str, str]]:
    events = lister.watch(POD, rv, timeout_seconds=30, stop=stop or threading.Event())
    return [(e.type, str(e.obj["metadata"]["resourceVersion"])) for e in events]  # type: ignore[index]


@pytest.mark.timeout(10)
def test_list_follows_continue_tokens_and_watches_from_the_first_pages_resource_version(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    """Every page of one list shares the first page's resourceVersion (the continue token holds
    it), so it is known before the items are read."""
    apiserver.reply("GET", PODS, 200, page([pod("a", "5"), pod("b", "6")], "100", token="t1"))
    apiserver.reply("GET", PODS, 200, page([pod("c", "7")], "100"))
    listing = KubeLister(api, page_size=2).list(POD)

    assert listing.resource_version == "100"
    assert len(apiserver.requests("GET")) == 1  # the next page is asked for as the items are read
    assert [item["metadata"]["name"] for item in listing.items] == ["a", "b", "c"]  # type: ignore[index]
    first, second = apiserver.requests("GET")
    assert first.query == {"limit": ["2"]}
    assert second.query == {"limit": ["2"], "continue": ["t1"]}


@pytest.mark.timeout(10)
def test_a_resource_version_goes_with_the_first_page_only(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    apiserver.reply("GET", PODS, 200, page([pod("a", "5")], "100", token="t1"))
    apiserver.reply("GET", PODS, 200, page([pod("c", "7")], "100"))
    list(KubeLister(api, page_size=1).list(POD, resource_version="0").items)

    first, second = apiserver.requests("GET")
    assert first.query == {"limit": ["1"], "resourceVersion": ["0"]}
    assert second.query == {"limit": ["1"], "continue": ["t1"]}


@pytest.mark.timeout(10)
def test_listed_items_carry_their_kind_and_api_version(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    path = "/apis/scheduling.volcano.sh/v1beta1/podgroups"
    apiserver.reply("GET", path, 200, page([{"metadata": {"name": "pg"}}], "9"))
    (item,) = KubeLister(api).list(PODGROUP).items
    assert item["kind"] == "PodGroup"
    assert item["apiVersion"] == "scheduling.volcano.sh/v1beta1"


@pytest.mark.timeout(10)
def test_a_configmap_kind_lists_one_namespace_with_its_field_selector(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    path = "/api/v1/namespaces/vscheduler-system/configmaps"
    apiserver.reply("GET", path, 200, page([], "3"))
    listing = KubeLister(api).list(config_map("vscheduler-system", "policy"))
    assert list(listing.items) == []
    (request,) = apiserver.requests()
    assert request.path == path
    assert request.query["fieldSelector"] == ["metadata.name=policy"]


@pytest.mark.timeout(10)
def test_an_expired_continue_token_raises_expired(apiserver: FakeApiServer, api: KubeApi) -> None:
    apiserver.reply("GET", PODS, 200, page([pod("a", "5")], "100", token="t1"))
    too_old = apiserver.status(410, "Expired", "The provided continue parameter is too old")
    apiserver.reply("GET", PODS, 410, too_old)
    listing = KubeLister(api).list(POD)
    with pytest.raises(ExpiredError, match="continue parameter is too old"):
        list(listing.items)


@pytest.mark.timeout(10)
def test_a_missing_resource_raises_not_found(apiserver: FakeApiServer, api: KubeApi) -> None:
    with pytest.raises(NotFoundError):
        KubeLister(api).list(NODE)


@pytest.mark.timeout(10)
def test_watch_asks_for_bookmarks_from_the_resource_version_with_a_timeout(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    apiserver.stream("GET", PODS, [])
    assert collect(KubeLister(api), rv="42") == []
    (request,) = apiserver.requests()
    assert request.query == {
        "watch": ["true"],
        "allowWatchBookmarks": ["true"],
        "resourceVersion": ["42"],
        "timeoutSeconds": ["30"],
    }
    assert request.headers["authorization"] == "Bearer secret-token"


@pytest.mark.timeout(10)
def test_watch_decodes_events_and_bookmarks_line_by_line(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    apiserver.stream(
        "GET",
        PODS,
        [
            event("ADDED", pod("a", "11")),
            bookmark("12"),
            event("MODIFIED", pod("a", "13")),
            event("DELETED", pod("a", "14")),
        ],
    )
    assert collect(KubeLister(api)) == [
        ("ADDED", "11"),
        ("BOOKMARK", "12"),
        ("MODIFIED", "13"),
        ("DELETED", "14"),
    ]


@pytest.mark.timeout(10)
def test_watch_joins_lines_split_across_chunks_and_splits_chunks_holding_several(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    one = json.dumps(event("ADDED", pod("a", "11"))).encode()
    two = json.dumps(event("ADDED", pod("b", "12"))).encode()
    three = json.dumps(event("ADDED", pod("c", "13"))).encode()
    parts = [one[:10], one[10:] + b"\n" + two[:5], two[5:] + b"\n" + three + b"\n\n"]
    apiserver.stream("GET", PODS, parts)
    assert collect(KubeLister(api)) == [("ADDED", "11"), ("ADDED", "12"), ("ADDED", "13")]


@pytest.mark.timeout(10)
def test_an_error_event_with_code_410_in_the_stream_raises_expired_after_the_earlier_events(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    gone = apiserver.status(410, "Expired", "too old resource version: 10 (20)")
    apiserver.stream("GET", PODS, [event("ADDED", pod("a", "11")), event("ERROR", gone)])
    events = KubeLister(api).watch(POD, "10", timeout_seconds=30, stop=threading.Event())
    assert next(events).type == "ADDED"
    with pytest.raises(ExpiredError, match="too old resource version"):
        next(events)


@pytest.mark.timeout(10)
def test_an_http_410_on_watch_raises_expired(apiserver: FakeApiServer, api: KubeApi) -> None:
    apiserver.reply("GET", PODS, 410, apiserver.status(410, "Gone", "too old"))
    with pytest.raises(ExpiredError):
        collect(KubeLister(api))


@pytest.mark.timeout(10)
def test_an_error_event_with_a_server_error_raises_transient(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    failure = apiserver.status(500, "InternalError", "etcd")
    apiserver.stream("GET", PODS, [event("ERROR", failure)])
    with pytest.raises(TransientClusterError, match="etcd"):
        collect(KubeLister(api))


@pytest.mark.timeout(10)
def test_a_malformed_watch_line_raises_transient(apiserver: FakeApiServer, api: KubeApi) -> None:
    apiserver.stream("GET", PODS, [b"{not json\n"])
    with pytest.raises(TransientClusterError, match="malformed watch line"):
        collect(KubeLister(api))


@pytest.mark.timeout(10)
def test_unknown_event_types_are_skipped(apiserver: FakeApiServer, api: KubeApi) -> None:
    apiserver.stream(
        "GET", PODS, [event("SURPRISE", pod("a", "11")), event("ADDED", pod("b", "12"))]
    )
    assert collect(KubeLister(api)) == [("ADDED", "12")]


@pytest.mark.timeout(10)
def test_a_watch_blocked_on_a_quiet_stream_ends_promptly_when_stop_is_set(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    hold = threading.Event()
    apiserver.stream("GET", PODS, [event("ADDED", pod("a", "11"))], hold=hold)
    stop = threading.Event()
    events = KubeLister(api, stop_poll=0.05).watch(POD, "10", timeout_seconds=300, stop=stop)
    assert next(events).type == "ADDED"
    stopper = threading.Timer(0.1, stop.set)
    stopper.start()
    started = time.monotonic()
    assert list(events) == []
    assert time.monotonic() - started < 1.0
    stopper.join()
    hold.set()


@pytest.mark.timeout(10)
def test_a_watch_asked_after_stop_sends_nothing(apiserver: FakeApiServer, api: KubeApi) -> None:
    stop = threading.Event()
    stop.set()
    assert collect(KubeLister(api), stop=stop) == []
    assert apiserver.requests() == []


class Gate(threading.Event):
    """An Event the fake server waits on; remembers whether that wait ran out."""

    timed_out = False

    def wait(self, timeout: float | None = None) -> bool:
        came = super().wait(timeout)
        self.timed_out |= not came
        return came


@pytest.mark.timeout(20)
def test_a_lists_items_are_yielded_while_the_rest_of_its_body_is_still_to_come(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    """The first items reach the caller before the server sends the rest (it waits for the
    caller to have them), so converting them overlaps the API server's sending."""
    body = json.dumps(page([pod(f"p{i}", str(i)) for i in range(40)], "100")).encode()
    cut = body.index(b'{"metadata": {"name": "p30"')
    gate = Gate()
    apiserver.stream("GET", PODS, [body[:cut], gate, body[cut:]])
    listing = KubeLister(api, list_read_size=256).list(POD)
    items = iter(listing.items)

    first = [next(items)["metadata"]["name"] for _ in range(20)]  # type: ignore[index]
    gate.set()
    rest = [item["metadata"]["name"] for item in items]  # type: ignore[index]

    assert first + rest == [f"p{i}" for i in range(40)]
    assert listing.resource_version == "100"
    assert not gate.timed_out


@pytest.mark.timeout(10)
def test_a_list_cut_short_raises_from_its_items(apiserver: FakeApiServer, api: KubeApi) -> None:
    body = json.dumps(page([pod("a", "5"), pod("b", "6")], "100")).encode()
    apiserver.stream("GET", PODS, [body[: body.index(b'"b"')]])
    listing = KubeLister(api).list(POD)
    with pytest.raises(ClusterError, match="malformed list from /api/v1/pods"):
        list(listing.items)


@pytest.mark.timeout(10)
def test_items_that_are_not_a_list_raise(apiserver: FakeApiServer, api: KubeApi) -> None:
    apiserver.reply("GET", PODS, 200, {"metadata": {"resourceVersion": "1"}, "items": {}})
    with pytest.raises(ClusterError, match="`items` is not a list"):
        list(KubeLister(api).list(POD).items)


@pytest.mark.timeout(10)
def test_metadata_after_the_items_is_read_with_them(apiserver: FakeApiServer, api: KubeApi) -> None:
    apiserver.reply(
        "GET", PODS, 200, {"items": [pod("a", "5"), 7], "metadata": {"resourceVersion": "9"}}
    )
    listing = KubeLister(api).list(POD)
    assert listing.resource_version == "9"
    assert [item["metadata"]["name"] for item in listing.items] == ["a"]  # type: ignore[index]


class Pauses(threading.Event):
    """A stop Event that remembers the waits of `gather` seconds asked of it."""

    def __init__(self, gather: float) -> None:
        super().__init__()
        self.gather = gather
        self.pauses = 0

    def wait(self, timeout: float | None = None) -> bool:
        if timeout == self.gather:
            self.pauses += 1
        return super().wait(timeout)


@pytest.mark.timeout(10)
def test_after_an_event_it_waited_for_a_watch_pauses_once_and_reads_the_followers_together(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    """The network waited for, one pause of `gather`; the events already come are read after
    it without another, so a stream of events costs one wakeup, not one each."""
    late = threading.Event()
    followers = threading.Event()
    apiserver.stream(
        "GET",
        PODS,
        [
            late,
            event("ADDED", pod("a", "11")),
            followers,
            *(event("ADDED", pod(n, n)) for n in "bc"),
        ],
    )
    stop = Pauses(gather=0.2)
    events = KubeLister(api, gather=stop.gather).watch(POD, "10", timeout_seconds=30, stop=stop)
    threading.Timer(0.05, late.set).start()
    assert next(events).obj["metadata"]["name"] == "a"  # type: ignore[index]
    followers.set()
    seen = [(e.obj["metadata"]["name"], stop.pauses) for e in events]  # type: ignore[index]

    assert seen == [("b", 1), ("c", 1)]


@pytest.mark.timeout(10)
def test_a_gather_of_zero_never_pauses(apiserver: FakeApiServer, api: KubeApi) -> None:
    late = threading.Event()
    apiserver.stream("GET", PODS, [late, event("ADDED", pod("a", "11")), late, bookmark("12")])
    stop = Pauses(gather=0.0)
    events = KubeLister(api, gather=0.0).watch(POD, "10", timeout_seconds=30, stop=stop)
    threading.Timer(0.05, late.set).start()

    assert [e.type for e in events] == ["ADDED", "BOOKMARK"]
    assert stop.pauses == 0


@pytest.mark.timeout(10)
def test_an_event_after_a_longer_wait_than_the_pause_is_followed_by_no_pause(
    apiserver: FakeApiServer, api: KubeApi
) -> None:
    """Events that far apart would not be gathered: a pause would only add a wakeup."""
    late = threading.Event()
    # One chunk: a second one could itself come a few ms late on a busy machine (then rightly
    # followed by a pause).
    both = b"".join(
        json.dumps(e).encode() + b"\n" for e in [event("ADDED", pod("a", "11")), bookmark("12")]
    )
    apiserver.stream("GET", PODS, [late, both])
    stop = Pauses(gather=0.02)
    events = KubeLister(api, gather=stop.gather).watch(POD, "10", timeout_seconds=30, stop=stop)
    threading.Timer(0.3, late.set).start()

    assert [e.type for e in events] == ["ADDED", "BOOKMARK"]
    assert stop.pauses == 0

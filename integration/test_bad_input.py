"""Bad input on a real API server: objects the CRD schemas and API validation accept but the
scheduler cannot use, or reads as Volcano does with a warning. Each time the scheduler keeps
running and scheduling the good pods, and the pod or its PodGroup (or the odd object) carries a
condition or Event naming the problem."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from integration import harness

TIMEOUT = 60.0


def _ns(cluster: harness.ScopedCluster) -> str:
    """The real name of the test's namespace (`test` on the local backend)."""
    return harness.namespace_of(cluster)


def _merge_patch(cluster: harness.ScopedCluster, path: str, body: dict[str, Any]) -> None:
    cluster.request("PATCH", path, body, content_type="application/merge-patch+json")


def _started(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> harness.Scheduler:
    cluster.add_node("node-0", cpu="4", memory="8Gi")
    scheduler = start_scheduler()
    scheduler.wait_ready(TIMEOUT)
    return scheduler


def _still_scheduling(
    cluster: harness.ScopedCluster, scheduler: harness.Scheduler, name: str
) -> None:
    """A good pod created after the bad input is bound, and the process is alive and healthy."""
    harness.create(cluster, harness.pod(name, "test"))
    harness.wait_for(
        f"the good pod {name} bound", lambda: name in harness.bound(cluster, "test"), TIMEOUT
    )
    assert scheduler.alive()
    assert scheduler.http("/healthz")[0] == 200


def _pending_message(cluster: harness.ScopedCluster, name: str, *needles: str) -> str:
    """The pod's PodScheduled=False message, once it names every one of `needles`; and a
    FailedScheduling Warning Event with the same message."""

    def named() -> dict[str, Any] | None:
        cond = harness.pod_condition(cluster, "test", name)
        message = (cond or {}).get("message", "")
        return cond if cond and all(n in message for n in needles) else None

    cond = harness.wait_for(f"PodScheduled=False on {name} naming {needles}", named, TIMEOUT)
    assert cond["status"] == "False", harness.dump(cond)
    assert cond["reason"] == "Unschedulable", harness.dump(cond)
    harness.wait_for(
        f"a FailedScheduling event on {name} with that message",
        lambda: any(
            e["type"] == "Warning" and e["message"] == cond["message"]
            for e in harness.events_about(cluster, "test", "Pod", name, reason="FailedScheduling")
        ),
        TIMEOUT,
    )
    assert harness.get_pod(cluster, "test", name)["spec"].get("nodeName") is None
    message: str = cond["message"]
    return message


def _warning_event(
    cluster: harness.ScopedCluster, namespace: str, kind: str, name: str, *needles: str
) -> str:
    """The message of the `UnusualValue` Warning Event on the object naming every needle."""

    def found() -> list[dict[str, Any]]:
        return [
            e
            for e in harness.events_about(cluster, namespace, kind, name, reason="UnusualValue")
            if e["type"] == "Warning" and all(n in e["message"] for n in needles)
        ]

    events = harness.wait_for(
        f"an UnusualValue event on {kind} {name} naming {needles}", found, TIMEOUT
    )
    message: str = events[0]["message"]
    return message


def _bound(cluster: harness.ScopedCluster, name: str) -> None:
    harness.wait_for(f"{name} bound", lambda: name in harness.bound(cluster, "test"), TIMEOUT)


# Values the CRDs admit that look like mistakes (the quantity pattern admits a sign; minTaskMember
# is any int32) are read as Volcano reads them and said on the object with a Warning Event
# `UnusualValue`; the job is scheduled (Volcano schedules it too). No PodGroup or Queue the API
# server accepts is refused any more (issue 13: what Volcano tolerates must not fail); the
# refusals left are covered below (missing objects, invalid names) and in the unit suite.
def test_a_negative_min_resources_amount_is_read_as_zero_warned_and_the_gang_runs(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    harness.create(
        cluster,
        harness.podgroup("bad-quantity", "test", min_member=1, min_resources={"cpu": "-1"}),
    )
    harness.create(cluster, harness.pod("member", "test", group="bad-quantity"))

    message = _warning_event(
        cluster, "test", "PodGroup", "bad-quantity", "spec.minResources.cpu", "-1", "read as 0"
    )
    assert message.startswith(f"PodGroup {_ns(cluster)}/bad-quantity: "), message
    _bound(cluster, "member")
    _still_scheduling(cluster, scheduler, "good")


def test_a_negative_min_task_member_is_warned_and_the_gang_runs(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    # The CRD says int32 only, as Volcano's does; -1 asks for no pod of the task. (A negative
    # minMember is refused by the API server: integration/test_crd_validation.py.)
    negative = harness.podgroup("negative", "test", min_member=1)
    negative["spec"]["minTaskMember"] = {"worker": -1}
    harness.create(cluster, negative)
    harness.create(cluster, harness.pod("member", "test", group="negative"))

    _warning_event(
        cluster, "test", "PodGroup", "negative", "spec.minTaskMember.worker", "-1", "is negative"
    )
    _bound(cluster, "member")
    _still_scheduling(cluster, scheduler, "good")


def test_a_negative_queue_capability_is_read_as_no_limit_warned_and_its_jobs_run(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    odd = harness.queue("odd")
    odd["spec"]["capability"] = {"cpu": "-1"}  # the quantity pattern admits a sign
    harness.create(cluster, odd)
    harness.create(cluster, harness.podgroup("in-odd", "test", min_member=1, queue="odd"))
    harness.create(cluster, harness.pod("member", "test", group="in-odd"))

    # Events about a cluster-scoped object live in `default`; a cpu capability of 0 is no limit,
    # as in Volcano.
    _warning_event(cluster, "default", "Queue", "odd", "Queue odd", "spec.capability.cpu", "-1")
    _bound(cluster, "member")
    _still_scheduling(cluster, scheduler, "good")


def test_a_pod_naming_a_missing_podgroup_says_so(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    harness.create(cluster, harness.pod("orphan", "test", group="ghost"))

    expected = f"podgroup {_ns(cluster)}/ghost not found"
    assert _pending_message(cluster, "orphan", expected) == expected
    _still_scheduling(cluster, scheduler, "good")


def test_a_pod_whose_group_annotation_is_no_valid_name_says_so(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    harness.create(cluster, harness.pod("garbled", "test", group="Not A/Name!"))

    _pending_message(cluster, "garbled", "podgroup", "Not A/Name!", "not found")
    _still_scheduling(cluster, scheduler, "good")


def test_a_podgroup_in_a_missing_queue_says_so_on_its_pods_and_podgroup(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    harness.create(cluster, harness.podgroup("lost", "test", min_member=1, queue="nowhere"))
    harness.create(cluster, harness.pod("member", "test", group="lost"))

    expected = f"queue nowhere of podgroup {_ns(cluster)}/lost not found"
    assert _pending_message(cluster, "member", expected) == expected
    _still_scheduling(cluster, scheduler, "good")


def test_a_pod_without_a_podgroup_in_a_missing_queue_says_so(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    stray = harness.pod("stray", "test")
    stray["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "nowhere"}
    harness.create(cluster, stray)

    _pending_message(cluster, "stray", "queue nowhere", "not found")
    _still_scheduling(cluster, scheduler, "good")


PREEMPT_POLICY = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def _clamped_event(
    cluster: harness.ScopedCluster, namespace: str, kind: str, name: str, field: str
) -> str:
    def found() -> list[dict[str, Any]]:
        return [
            e
            for e in harness.events_about(cluster, namespace, kind, name, reason="QuantityClamped")
            if e["type"] == "Warning" and field in e["message"]
        ]

    events = harness.wait_for(f"a QuantityClamped event on {kind} {name}", found, TIMEOUT)
    message: str = events[0]["message"]
    return message


def test_quantities_beyond_int64_under_preempt_leave_the_cluster_scheduling_and_are_warned(
    cluster: harness.ScopedCluster,
    start_scheduler: Callable[..., harness.Scheduler],
    tmp_path: Any,
) -> None:
    # The API server accepts both: 1e18 cores on a node and a pod asking 1e16 cores and 9Ei.
    huge_node = cluster.add_node("node-huge", cpu="1e18", memory="64Gi")["metadata"]["name"]
    policy = tmp_path / "policy.yaml"
    policy.write_text(PREEMPT_POLICY)
    scheduler = start_scheduler(args=[f"--policy-file={policy}"])
    scheduler.wait_ready(TIMEOUT)
    harness.create(cluster, harness.pod("huge", "test", cpu="1e16", memory="9Ei"))

    _pending_message(cluster, "huge")  # it fits nowhere: 9Ei of memory is held at 32Ti
    pod_warning = _clamped_event(
        cluster, "test", "Pod", "huge", "spec.containers[*].resources.requests.cpu"
    )
    assert pod_warning == (
        f"Pod {_ns(cluster)}/huge: spec.containers[*].resources.requests.cpu: "
        "1e16 is above the scheduler's ceiling 35184372088832m "
        "(2^45 scheduler units); it is read as 35184372088832m"
    )
    _clamped_event(cluster, "test", "Pod", "huge", "spec.containers[*].resources.requests.memory")
    node_warning = _clamped_event(cluster, "default", "Node", huge_node, "status.allocatable.cpu")
    assert node_warning.startswith(f"Node {huge_node}: status.allocatable.cpu: 1e18 is above")
    for name in ("good-1", "good-2"):
        _still_scheduling(cluster, scheduler, name)
    assert scheduler.http("/readyz") == (200, "ok")
    assert "OverflowError" not in scheduler.log(400)


def test_a_queue_guaranteeing_more_than_the_cluster_is_named_on_the_queue_and_the_pods_it_starves(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)  # one 4-CPU node, the default policy
    big = harness.queue("big")
    big["spec"]["guarantee"] = {"resource": {"cpu": "100"}}
    harness.create(cluster, big)
    # The pod must come after the scheduler saw the queue: a pod seen first fits the node and is
    # bound (a CI run met it when the API server answered the Queue watch 429 for a moment).
    harness.wait_for(
        "the scheduler to see queue big's guarantee",
        lambda: (
            harness.scrape(scheduler, "vscheduler_queue_guarantee_unsatisfiable", queue_name="big")
            == 1.0
        ),
        TIMEOUT,
    )
    harness.create(cluster, harness.pod("starved", "test"))  # queue default

    # The local backend's cluster is the one node; a shared cluster's total is larger.
    total = "4" if harness.backend() == "local" else ""
    expected = f"queue big's guarantee (cpu 100) exceeds the cluster's allocatable (cpu {total}"
    message = _pending_message(cluster, "starved", "queue default", expected)
    expected = message[message.index("queue big's") :]
    assert message.endswith(")"), message
    events = harness.wait_for(
        "a GuaranteeUnsatisfiable event on Queue big",
        lambda: harness.events_about(
            cluster, "default", "Queue", "big", reason="GuaranteeUnsatisfiable"
        ),
        TIMEOUT,
    )
    assert [(e["type"], e["message"]) for e in events] == [("Warning", expected)]
    assert (
        harness.scrape(scheduler, "vscheduler_queue_guarantee_unsatisfiable", queue_name="big")
        == 1.0
    )

    # The guarantee lowered, the queue default gets room again: the pod is bound.
    _merge_patch(
        cluster,
        "/apis/scheduling.volcano.sh/v1beta1/queues/big",
        {"spec": {"guarantee": {"resource": {"cpu": "1"}}}},
    )
    harness.wait_for(
        "the starved pod bound once the guarantee fits",
        lambda: "starved" in harness.bound(cluster, "test"),
        TIMEOUT,
    )
    # The binds stream while the cycle runs; its queue figures are published when it ends.
    harness.wait_for(
        "queue big's guarantee reported satisfiable",
        lambda: (
            harness.scrape(scheduler, "vscheduler_queue_guarantee_unsatisfiable", queue_name="big")
            == 0.0
        ),
        TIMEOUT,
    )

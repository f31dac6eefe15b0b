"""Bad input on a real API server: objects the CRD schemas and API validation accept but the
scheduler cannot use. Each time the scheduler keeps running and scheduling the good pods, and the
pod or its PodGroup (or the bad object) carries a condition or Event naming the problem."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from integration import harness

TIMEOUT = 60.0
PODGROUP = "/apis/scheduling.volcano.sh/v1beta1/namespaces/test/podgroups/{name}"


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


def _invalid_object_event(
    cluster: harness.ScopedCluster, namespace: str, kind: str, name: str, *needles: str
) -> str:
    def found() -> list[dict[str, Any]]:
        return [
            e
            for e in harness.events_about(cluster, namespace, kind, name, reason="InvalidObject")
            if e["type"] == "Warning" and all(n in e["message"] for n in needles)
        ]

    events = harness.wait_for(
        f"an InvalidObject event on {kind} {name} naming {needles}", found, TIMEOUT
    )
    message: str = events[0]["message"]
    return message


def test_a_podgroup_with_a_malformed_min_resources_quantity_is_reported_on_its_pods(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    # The CRD accepts any string (int-or-string); "lots" is no quantity.
    harness.create(
        cluster,
        harness.podgroup("bad-quantity", "test", min_member=1, min_resources={"cpu": "lots"}),
    )
    harness.create(cluster, harness.pod("member", "test", group="bad-quantity"))

    message = _pending_message(
        cluster, "member", f"PodGroup {_ns(cluster)}/bad-quantity", "spec.minResources", "lots"
    )
    event = _invalid_object_event(
        cluster, "test", "PodGroup", "bad-quantity", "spec.minResources", "lots"
    )
    assert event == message
    _still_scheduling(cluster, scheduler, "good")

    # Fixed, the PodGroup is used again: its pod is bound.
    _merge_patch(
        cluster, PODGROUP.format(name="bad-quantity"), {"spec": {"minResources": {"cpu": "1"}}}
    )
    harness.wait_for(
        "the member bound once its PodGroup is fixed",
        lambda: "member" in harness.bound(cluster, "test"),
        TIMEOUT,
    )


def test_a_podgroup_with_a_negative_min_member_is_reported_on_its_pods(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    # The CRD says int32 only; -1 is an int32 but no gang size.
    harness.create(cluster, harness.podgroup("negative", "test", min_member=-1))
    harness.create(cluster, harness.pod("member", "test", group="negative"))

    _pending_message(cluster, "member", f"PodGroup {_ns(cluster)}/negative", "spec.minMember", "-1")
    _invalid_object_event(cluster, "test", "PodGroup", "negative", "spec.minMember", "-1")
    _still_scheduling(cluster, scheduler, "good")


def test_a_malformed_queue_is_reported_and_its_jobs_wait(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    broken = harness.queue("broken")
    broken["spec"]["capability"] = {"cpu": "lots"}
    harness.create(cluster, broken)
    harness.create(cluster, harness.podgroup("in-broken", "test", min_member=1, queue="broken"))
    harness.create(cluster, harness.pod("member", "test", group="in-broken"))

    # Events about a cluster-scoped object live in `default`.
    _invalid_object_event(
        cluster, "default", "Queue", "broken", "Queue broken", "spec.capability", "lots"
    )
    _pending_message(cluster, "member", "broken", "in-broken")
    _still_scheduling(cluster, scheduler, "good")

    # Fixed, the queue is used again: its job's pod is bound.
    _merge_patch(
        cluster,
        "/apis/scheduling.volcano.sh/v1beta1/queues/broken",
        {"spec": {"capability": {"cpu": "2"}}},
    )
    harness.wait_for(
        "the member bound once its queue is fixed",
        lambda: "member" in harness.bound(cluster, "test"),
        TIMEOUT,
    )


def test_a_pod_in_a_malformed_queue_is_told_what_is_wrong_with_the_queue(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    broken = harness.queue("broken")
    broken["spec"]["capability"] = {"cpu": "lots"}
    harness.create(cluster, broken)
    harness.create(cluster, harness.podgroup("in-broken", "test", min_member=1, queue="broken"))
    harness.create(cluster, harness.pod("member", "test", group="in-broken"))
    _invalid_object_event(cluster, "default", "Queue", "broken", "spec.capability")
    _still_scheduling(cluster, scheduler, "good")  # a cycle ran after the queue was seen

    cond = harness.wait_for(
        "PodScheduled=False on member",
        lambda: harness.pod_condition(cluster, "test", "member"),
        TIMEOUT,
    )
    assert "not found" not in cond["message"], harness.dump(cond)
    assert "Queue broken" in cond["message"], harness.dump(cond)
    assert "spec.capability" in cond["message"], harness.dump(cond)


def test_a_malformed_podgroup_is_not_admitted_and_its_condition_names_the_problem(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)
    harness.create(
        cluster,
        harness.podgroup("bad-quantity", "test", min_member=1, min_resources={"cpu": "lots"}),
    )
    harness.create(cluster, harness.pod("member", "test", group="bad-quantity"))
    problem = _pending_message(
        cluster, "member", f"PodGroup {_ns(cluster)}/bad-quantity", "spec.minResources"
    )
    _still_scheduling(cluster, scheduler, "good")  # later cycles ran too

    def unschedulable() -> dict[str, Any] | None:
        group = harness.get_podgroup(cluster, "test", "bad-quantity")
        conditions = group.get("status", {}).get("conditions") or []
        found = [c for c in conditions if c.get("type") == "Unschedulable"]
        return {"phase": group["status"].get("phase"), **found[0]} if found else None

    cond = harness.wait_for("the PodGroup's Unschedulable condition", unschedulable, TIMEOUT)
    assert cond["message"] == problem, harness.dump(cond)
    assert cond["status"] == "True", harness.dump(cond)
    assert cond["phase"] == "Pending", harness.dump(cond)


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


def test_a_queue_guaranteeing_more_than_the_cluster_is_named_on_the_queue_and_the_pods_it_starves(
    cluster: harness.ScopedCluster, start_scheduler: Callable[..., harness.Scheduler]
) -> None:
    scheduler = _started(cluster, start_scheduler)  # one 4-CPU node, the default policy
    big = harness.queue("big")
    big["spec"]["guarantee"] = {"resource": {"cpu": "100"}}
    harness.create(cluster, big)
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
    assert (
        harness.scrape(scheduler, "vscheduler_queue_guarantee_unsatisfiable", queue_name="big")
        == 0.0
    )

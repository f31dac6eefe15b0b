"""A watch event that changes only a pod's status (its kubelet's writes) is read from the
facts already held (`Converters.pod_update`): for any pod the API server accepts and any next
version of it, what the cache stores is exactly what converting the new version in full gives."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings, strategies as st

from vscheduler.cache.entries import Converters
from vscheduler.cache.malformed import identity
from vscheduler.testing.strategies import SCHEDULER, pods

STATUS_CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(("Pending", "Running", "Succeeded", "Failed", "Unknown", "Odd")),
        "startTime": st.sampled_from(("2026-01-01T00:01:00Z", "not a time", None)),
        "nominatedNodeName": st.sampled_from(("n0", "n1", "", 7)),
        "conditions": st.just([{"type": "Ready", "status": "True"}]),
        "podIP": st.just("10.0.0.7"),
    },
)
OTHER_CHANGES = st.sampled_from(
    (
        "none",
        "resourceVersion",
        "managedFields",
        "label",
        "annotation",
        "deletionTimestamp",
        "nodeName",
        "request",
        "status not a mapping",
    )
)


def changed(pod: dict[str, Any], status: dict[str, Any], other: str) -> dict[str, Any]:
    new = copy.deepcopy(pod)
    meta, spec = new["metadata"], new["spec"]
    new["status"] = {**new["status"], **status}
    if other in ("resourceVersion", "managedFields"):
        meta[other] = "2" if other == "resourceVersion" else [{"manager": "kwok"}]
    elif other == "label":
        meta["labels"] = {**meta["labels"], "changed": "yes"}
    elif other == "annotation":
        meta["annotations"] = {**meta["annotations"], "scheduling.k8s.io/group-name": "g9"}
    elif other == "deletionTimestamp":
        meta[other] = "2026-01-01T00:02:00Z"
    elif other == "nodeName":
        spec["nodeName"] = "n1"
    elif other == "request":
        spec["containers"][0]["resources"] = {"requests": {"cpu": "3"}}
    elif other == "status not a mapping":
        new["status"] = "Running"
    return new


@settings(max_examples=400, deadline=None)
@given(pods(), STATUS_CHANGES, OTHER_CHANGES, st.booleans())
def test_a_status_event_is_read_as_a_full_conversion_reads_it(
    pod: dict[str, Any], status: dict[str, Any], other: str, deleting: bool
) -> None:
    pod["metadata"] |= {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "1"}
    if deleting:  # being deleted already: its status still moves (Running, then Succeeded)
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:30Z"
    converters = Converters(SCHEDULER, {})
    who = identity(pod, namespaced=True)
    assert who is not None
    held = converters.pod(pod, who)
    new = changed(pod, status, other)
    assert converters.pod_update(pod, held.facts, new, who) == converters.pod(new, who)


def test_a_status_event_reuses_the_facts_it_does_not_change() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "1"},
        "spec": {"schedulerName": SCHEDULER, "nodeName": "n0", "containers": [{"name": "c"}]},
        "status": {"phase": "Pending"},
    }
    converters = Converters(SCHEDULER, {})
    who = identity(pod, namespaced=True)
    assert who is not None
    held = converters.pod(pod, who).facts
    assert held is not None
    same = changed(pod, {"conditions": [{"type": "Ready", "status": "False"}]}, "resourceVersion")
    assert converters.pod_update(pod, held, same, who).facts is held
    running = converters.pod_update(pod, held, changed(pod, {"phase": "Running"}, "none"), who)
    assert running.facts is not None
    assert running.facts.status.value == "Running"
    assert running.facts.resreq is held.resreq  # read from the held facts, not parsed again

"""A watch event that changes only a pod's status (its kubelet's writes) is read from the
facts already held (`Converters.pod_update`): for any pod the API server accepts and any next
version of it, what the cache stores is exactly what converting the new version in full gives.
The cache holds only part of each pod's object (`entries.kept_pod`): everything read from it
again (a conversion when priority classes change, the effects' checks before a status write)
reads the same from that part as from the whole object."""

from __future__ import annotations

import copy
from typing import Any
from unittest import mock

from hypothesis import given, settings, strategies as st

from vscheduler.cache.entries import Converters, kept_pod
from vscheduler.cache.malformed import Identity, identity
from vscheduler.convert.pod import PodConverter
from vscheduler.effects import status as effects_status
from vscheduler.model.facts import TaskFacts
from vscheduler.testing.strategies import SCHEDULER, pods

STATUS_CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(("Pending", "Running", "Succeeded", "Failed", "Unknown", "Odd")),
        "startTime": st.sampled_from(("2026-01-01T00:01:00Z", "not a time", None)),
        "nominatedNodeName": st.sampled_from(("n0", "n1", "", 7)),
        "conditions": st.sampled_from(
            (
                [{"type": "Ready", "status": "True"}],
                [
                    {"type": "Ready", "status": "True"},
                    {
                        "type": "PodScheduled",
                        "status": "True",
                        "lastTransitionTime": "2026-01-01T00:00:30Z",
                    },
                ],
                [{"type": "PodScheduled", "status": "True", "lastTransitionTime": None}],
                [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            )
        ),
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
    kept = kept_pod(pod)  # what the cache holds of it
    assert converters.pod_update(kept, held.facts, new, who) == converters.pod(new, who)


@settings(max_examples=300, deadline=None)
@given(pods(), STATUS_CHANGES, st.booleans())
def test_what_the_cache_keeps_of_a_pod_reads_as_the_whole_pod_does(
    pod: dict[str, Any], status: dict[str, Any], placed: bool
) -> None:
    pod["metadata"] |= {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "1"}
    pod["metadata"]["managedFields"] = [{"manager": "kwok", "fieldsV1": {"f:status": {}}}]
    pod["status"] = {**pod["status"], **status}
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"},
        {"type": "Ready", "status": "False"},
    ]
    if placed:
        pod["spec"]["nodeName"] = "n1"
    kept = kept_pod(pod)
    converters = Converters(SCHEDULER, {})
    who = identity(pod, namespaced=True)
    assert who is not None
    assert identity(kept, namespaced=True) == who
    assert converters.pod(kept, who) == converters.pod(pod, who)
    now = "2026-01-01T00:05:00Z"
    for message in ("m", "another cause"):
        assert effects_status.pod_scheduled_condition(
            message, kept, now
        ) == effects_status.pod_scheduled_condition(message, pod, now)
    assert effects_status.nominated_node(kept) == effects_status.nominated_node(pod)
    assert effects_status.object_ref("Pod", kept) == effects_status.object_ref("Pod", pod)
    meta, kept_status = kept["metadata"], kept["status"]
    assert isinstance(meta, dict)
    assert isinstance(kept_status, dict)
    assert "managedFields" not in meta
    kinds = [c["type"] for c in kept_status["conditions"]]
    assert kinds == (["PodScheduled"] if pod["spec"].get("nodeName") else ["PodScheduled", "Ready"])


def held_pod(**spec: object) -> tuple[dict[str, Any], Converters, Identity, TaskFacts]:
    """A Pending pod of ours (its spec with `spec`), a converter, and its identity and facts."""
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "1"},
        "spec": {"schedulerName": SCHEDULER, "containers": [{"name": "c"}], **spec},
        "status": {"phase": "Pending"},
    }
    converters = Converters(SCHEDULER, {})
    who = identity(pod, namespaced=True)
    assert who is not None
    held = converters.pod(pod, who).facts
    assert held is not None
    return pod, converters, who, held


def test_a_status_event_reuses_the_facts_it_does_not_change() -> None:
    pod, converters, who, held = held_pod(nodeName="n0")
    same = changed(pod, {"conditions": [{"type": "Ready", "status": "False"}]}, "resourceVersion")
    assert converters.pod_update(pod, held, same, who).facts is held
    running = converters.pod_update(pod, held, changed(pod, {"phase": "Running"}, "none"), who)
    assert running.facts is not None
    assert running.facts.status.value == "Running"
    assert running.facts.resreq is held.resreq  # read from the held facts, not parsed again


def test_a_bind_event_is_read_from_the_facts_of_the_pod_on_no_node() -> None:
    """A bind's event (`nodeName` set, the PodScheduled condition) is read from the pending
    pod's facts, as a full conversion reads it; any other change of the spec is not."""
    pod, converters, who, held = held_pod()
    scheduled = {
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:30Z"}
        ]
    }
    bound = changed(pod, scheduled, "nodeName")
    with mock.patch.object(PodConverter, "convert", side_effect=AssertionError("read in full")):
        read = converters.pod_update(pod, held, bound, who)
    assert read == converters.pod(bound, who)
    assert read.facts is not None
    assert (read.facts.node_name, read.facts.status.value) == ("n1", "Bound")
    moved = changed(bound, {}, "request")  # the spec changed beside the node: read in full
    full = converters.pod_update(pod, held, moved, who)
    assert full == converters.pod(moved, who)
    assert full.facts is not None
    assert full.facts.resreq is not held.resreq

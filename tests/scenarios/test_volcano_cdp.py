"""cdp as Volcano decides, transcribed from Volcano's `pkg/scheduler/plugins/cdp/cdp_test.go`:
the two cases of `Test_CooldownTimePlugin_podPreemptStableTime` and the one of
`TestPreemptableFn`; then preempt and reclaim with a protected victim, before and after its
cooldown ends.

The Go pods are `makePod(labels, annotations, podScheduledTime)`: `default/test-pod` in PodGroup
`test-group`, one empty container, and, when a time is given, phase Running with a
PodScheduled=True condition of that `lastTransitionTime` (else Pending, no condition). Here they
are the same raw Pod objects, converted by the scheduler's own pod converter
(`vscheduler.convert.pod`), so the label, annotation and condition are read as from the API
server. The Go test reads `time.Now()`; here the session's clock is fixed (`NOW`) and the pods'
times are set from it, as the Go test sets them from the wall clock.

`Test_CooldownTimePlugin_podPreemptStableTime` calls the plugin's `podCooldownTime(pod)`: the
pod's cooldown is the converter's fact (`TaskFacts.cooldown`) here. `TestPreemptableFn` opens a
session with cdp alone (`EnabledPreemptable`) and asks `ssn.Preemptable(&api.TaskInfo{}, [task1,
task2, task3])`; here the session's preemptable dispatch (`select_preemptees`), with a pending
pod as the preemptor (cdp does not look at it). No divergence in these cases. Beyond them: the
malformed value carries a warning (Volcano only logs it), pinned in
`tests/unit/convert/test_cooldown.py`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from vscheduler.convert.cooldown import COOLDOWN_KEY
from vscheduler.convert.pod import convert_pod
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning, TaskFacts
from vscheduler.testing.builders import (
    START,
    Item,
    PodBuilder,
    node,
    pod,
    podgroup,
    queue,
    snapshot,
)
from vscheduler.testing.scenario import Outcome, run
from vscheduler.testing.sessions import open_session
from vscheduler.testing.volcano import go_tiers

NOW = START + dt.timedelta(days=1)
SCHEDULER = "vscheduler"


def stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_pod(
    name: str,
    labels: dict[str, str],
    annotations: dict[str, str],
    scheduled: dt.datetime | None,
) -> dict[str, Any]:
    """Go's `makePod`: `default/<name>` of PodGroup test-group, Running with PodScheduled=True
    at `scheduled` (None: Pending, no condition)."""
    status: dict[str, Any] = {"phase": "Pending"}
    spec: dict[str, Any] = {"schedulerName": SCHEDULER, "containers": [{"name": "c"}]}
    if scheduled is not None:
        condition = {"type": "PodScheduled", "status": "True"}
        status = {
            "phase": "Running",
            "conditions": [condition | {"lastTransitionTime": stamp(scheduled)}],
        }
        spec["nodeName"] = "n1"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "creationTimestamp": stamp(START),
            "labels": labels,
            "annotations": {"scheduling.k8s.io/group-name": "test-group", **annotations},
        },
        "spec": spec,
        "status": status,
    }


def convert(raw: dict[str, Any]) -> TaskFacts:
    facts = convert_pod(raw, priority_classes={}, scheduler_name=SCHEDULER)
    assert facts is not None
    return facts


# --- Test_CooldownTimePlugin_podPreemptStableTime --------------------------------------------------
def test_a_cooldown_of_600s_is_read_as_600_seconds() -> None:
    """ "normal": annotation `600s`, scheduled 100 s ago: enabled, 600 s."""
    facts = convert(
        make_pod("test-pod", {}, {COOLDOWN_KEY: "600s"}, NOW - dt.timedelta(seconds=100))
    )

    assert facts.cooldown == dt.timedelta(seconds=600)
    assert facts.scheduled_at == NOW - dt.timedelta(seconds=100)
    assert facts.warnings == ()


def test_a_cooldown_that_is_no_duration_is_not_enabled() -> None:
    """ "not-enabled": annotation `600abcde`: not enabled (Volcano's value 0, enabled false);
    the pod carries a warning (Volcano logs `invalid time duration`)."""
    facts = convert(
        make_pod("test-pod", {}, {COOLDOWN_KEY: "600abcde"}, NOW - dt.timedelta(seconds=100))
    )

    assert facts.cooldown is None
    assert facts.warnings == (
        FieldWarning(
            UNUSUAL_VALUE,
            "Pod default/test-pod: metadata.annotations[volcano.sh/cooldown-time]: '600abcde' is"
            " not a duration like '600s', '10m' or '1h30m'; it is read as absent, as Volcano"
            " reads it: cdp does not protect the pod from preempt or reclaim",
        ),
    )


# --- TestPreemptableFn ---------------------------------------------------------------------------
def test_only_the_pod_within_its_cooldown_is_kept_from_the_victims() -> None:
    """task1 (600s, scheduled 100 s ago) is protected; task2 (`600abcde`, not enabled) and task3
    (600s, scheduled 800 s ago: the cooldown ended 200 s ago) are victims: `[task2, task3]`."""
    preemptable = {"volcano.sh/preemptable": "true"}
    tasks = [
        convert(
            make_pod("task1", preemptable, {COOLDOWN_KEY: "600s"}, NOW - dt.timedelta(seconds=100))
        ),
        convert(
            make_pod(
                "task2", preemptable, {COOLDOWN_KEY: "600abcde"}, NOW - dt.timedelta(seconds=100)
            )
        ),
        convert(
            make_pod("task3", preemptable, {COOLDOWN_KEY: "600s"}, NOW - dt.timedelta(seconds=800))
        ),
    ]
    preemptor = convert(make_pod("preemptor", {}, {}, None))
    policy = go_tiers("", cdp=("enablePreemptable",))
    session = open_session(
        snapshot(node("n1").resources(cpu="8"), *tasks, preemptor), policy, now=NOW
    )
    candidates = [session.tasks[t.uid] for t in tasks]

    victims = session.dispatch.select_preemptees(session.tasks[preemptor.uid], candidates)

    assert [t.facts.name for t in victims] == ["task2", "task3"]
    assert session.close().revisit_at == NOW + dt.timedelta(seconds=500)  # task1's cooldown ends


# --- preempt and reclaim with a protected victim ---------------------------------------------------
STARVING = ("enableJobStarving",)
PREEMPT = go_tiers(
    "enqueue, allocate, preempt",
    priority=("enableJobOrder", "enablePreemptable", "enableJobStarving"),
    cdp=("enablePreemptable",),
)
RECLAIM = go_tiers(
    "enqueue, allocate, reclaim",
    gang=STARVING,
    cdp=("enableReclaimable",),
    proportion=(
        "enableQueueOrder",
        "enablePreemptive",
        "enabledOverused",
        "enabledAllocatable",
        "enableReclaimable",
    ),
)
SCHEDULED = NOW - dt.timedelta(seconds=100)
ENDS = NOW + dt.timedelta(seconds=500)


def protected(name: str, group: str) -> PodBuilder:
    """One cpu on n1, `volcano.sh/cooldown-time: 600s`, scheduled 100 s before `NOW`."""
    return (
        pod(name)
        .group(group)
        .requests(cpu="1")
        .on("n1")
        .annotate(COOLDOWN_KEY, "600s")
        .scheduled(SCHEDULED)
    )


def cluster(action: str) -> list[Item]:
    """n1 (one cpu) holds `low`, a protected pod of PodGroup `low`; `high` (one cpu, priority
    100) asks for its room: from the same queue (preempt) or from queue `a`, which guarantees
    a cpu (reclaim; `low` in queue `b`)."""
    own, asking = ("default", "default") if action == "preempt" else ("b", "a")
    items: list[Item] = [node("n1").resources(cpu="1", memory="4Gi")]
    if action == "reclaim":
        items += [queue("a").guarantee(cpu="1"), queue("b")]
    return [
        *items,
        podgroup("low").min_member(1).priority(1).queue(own).inqueue(),
        protected("low", "low"),
        podgroup("high").min_member(1).priority(100).queue(asking).inqueue(),
        pod("high").group("high").requests(cpu="1").priority(100),
    ]


def cycles(action: str, at: dt.datetime, count: int = 1) -> list[Outcome]:
    return run(
        snapshot(*cluster(action)),
        policy=PREEMPT if action == "preempt" else RECLAIM,
        now=at,
        cycles=count,
    )


def test_preempt_leaves_a_pod_within_its_cooldown_and_asks_for_a_cycle_when_it_ends() -> None:
    [outcome] = cycles("preempt", NOW)

    assert outcome.evictions == []
    assert outcome.result.pipelined == {}
    assert outcome.result.revisit_at == ENDS


def test_preempt_evicts_the_pod_once_its_cooldown_has_ended() -> None:
    [outcome] = cycles("preempt", ENDS)

    assert outcome.evictions == ["default/low"]
    assert outcome.result.pipelined == {"default/high": "n1"}
    assert outcome.result.revisit_at is None


def test_reclaim_leaves_a_pod_within_its_cooldown_and_asks_for_a_cycle_when_it_ends() -> None:
    [outcome] = cycles("reclaim", NOW)

    assert outcome.evictions == []
    assert outcome.result.revisit_at == ENDS


def test_reclaim_evicts_the_pod_once_its_cooldown_has_ended() -> None:
    [outcome] = cycles("reclaim", ENDS)

    assert outcome.evictions == ["default/low"]
    assert outcome.result.revisit_at is None


def test_the_cooldown_ends_at_its_instant_not_a_microsecond_later() -> None:
    """Protected while `scheduled + cooldown` is after now (Go's `After`): at that instant, no
    longer; a microsecond before, still."""
    assert cycles("preempt", ENDS - dt.timedelta(microseconds=1))[0].evictions == []
    assert cycles("preempt", ENDS)[0].evictions == ["default/low"]


def test_a_pod_bound_in_a_cycle_is_protected_from_that_cycle_on() -> None:
    """The pod `high` binds in the first cycle (n1 is free); `simulate` and the scenarios carry
    it over Running, scheduled at that cycle's time, so its own cooldown protects it from the
    preemptor that comes next."""
    items: list[Item] = [
        node("n1").resources(cpu="1", memory="4Gi"),
        podgroup("first").min_member(1).priority(1).inqueue(),
        pod("first").group("first").requests(cpu="1").priority(1).annotate(COOLDOWN_KEY, "10m"),
    ]

    def later(_cycle: int, snap: ClusterSnapshot) -> ClusterSnapshot:
        extra = snapshot(
            podgroup("second").min_member(1).priority(100).inqueue(),
            pod("second").group("second").requests(cpu="1").priority(100),
        )
        tasks, jobs = {**snap.tasks, **extra.tasks}, {**snap.jobs, **extra.jobs}
        return dataclasses.replace(snap, tasks=tasks, jobs=jobs)

    outcomes = run(snapshot(*items), policy=PREEMPT, now=NOW, cycles=2, between=later)

    assert outcomes[0].binds == {"default/first": "n1"}
    assert outcomes[1].evictions == []
    assert outcomes[1].result.revisit_at == NOW + dt.timedelta(minutes=10)

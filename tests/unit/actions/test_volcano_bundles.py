"""Volcano's `pkg/scheduler/actions/utils/bundle_test.go`, transcribed onto `actions/bundles.py`.

Volcano's cases build `Bundle` values by hand with a `GlobalRes` of their choosing; here a
bundle's cost is computed (nothing for a safe bundle, every task of its job for a whole one), so
each job is built with as many one-cpu tasks as the Go test's `GlobalRes` counts cpus, and two
bundles that Volcano gives one job with different `GlobalRes` get two jobs here (noted per case).
A job's task uids are `default/<name>`; Volcano's are `<name>`: the order is the same.

`SelectBundles` is not called by Volcano's actions (they loop over the bundles themselves and
try a placement once idle room plus what the bundles free covers the need); its case is
transcribed onto `bundles.attempts`, the actions' loop, which yields only the victim sets worth
a trial, where `SelectBundles` also returns the uncovered prefix.

Not transcribed (vscheduler models no sub-jobs, `minSubGroups` or partitions):
- `TestCreateJobBundles_SubJobGroupSlackCapsSafe`: the group's spare ready sub-jobs cap the safe
  bundle below the job's surplus;
- `TestCreateJobBundles_AlreadyBrokenSubJobIsSubjectToFurtherEviction`: a sub-job already
  missing a pod may lose more while its group has none to spare.
Transcribed with their sub-jobs left out, since the sub-job gate does not bind there:
`TestCreateJobBundles_MixedLegacyAndSubJobBothEnforced` (the master's group has a sub-job to
spare, the worker is kept by its role alone) and
`TestCreateJobBundles_JobNotReadyShortCircuitsAllSafe` (a job below minMember short-circuits
before any gate).
"""

from __future__ import annotations

from vscheduler.actions import bundles
from vscheduler.actions.bundles import Bundle, Kind
from vscheduler.framework.state import JobState, TaskState
from vscheduler.model.resources import EMPTY
from vscheduler.testing.builders import pod, podgroup, res

NEED = res(cpu=1)
"""`(&api.Resource{MilliCPU: 1000})`, the need most cases sort against."""


def job(
    name: str, *, min_member: int = 1, priority: int = 0, queue: str = "default", **roles: int
) -> JobState:
    """A job (`minMember`, priority, queue; `roles`: its `minTaskMember`) without tasks yet."""
    group = podgroup(name).min_member(min_member).priority(priority).queue(queue)
    if roles:
        group = group.min_task_member(**roles)
    return JobState(group.build())


def running(of: JobState, name: str, *, priority: int = 0, role: str = "worker") -> TaskState:
    """A Running task of one cpu in `of` (Volcano's `Resreq: {MilliCPU: 1000}`)."""
    facts = pod(name).group(of.facts.name).requests(cpu=1).on("n1").priority(priority)
    task = TaskState(facts.role(role).build(), of, 0)
    of.add(task)
    return task


def gang(name: str, size: int, *, priority: int = 0, queue: str = "default") -> JobState:
    """A job of `size` Running one-cpu tasks `<name>-0..`, so a whole bundle of it costs `size`
    cpus (Volcano's `GlobalRes: {MilliCPU: size*1000}`)."""
    built = job(name, priority=priority, queue=queue)
    for i in range(size):
        running(built, f"{name}-{i}")
    return built


def whole(of: JobState) -> Bundle:
    """The whole bundle of `of`'s first task alone (`LocalRes` one cpu)."""
    first = min(of.tasks.values(), key=lambda t: t.uid)
    return Bundle(Kind.WHOLE, of, (first,))


def none(_a: JobState, _b: JobState) -> int:
    """No victim order (Volcano's `nil` lessFn)."""
    return 0


def uids(found: list[Bundle]) -> list[str]:
    return [b.tasks[0].uid for b in found]


# --- CreateJobBundles ---------------------------------------------------------------------------
def test_the_surplus_over_min_member_is_safe_and_the_rest_whole() -> None:
    """TestCreateJobBundles_SafeAndWhole: minMember 3, role worker minimum 3, five Running
    workers of priority 0..4: the two lowest form the safe bundle, three the whole one."""
    five = job("j", min_member=3, worker=3)
    local = [running(five, chr(ord("a") + i), priority=i) for i in range(5)]

    found = bundles.split(five, local)

    assert [(b.kind, len(b.tasks)) for b in found] == [(Kind.SAFE, 2), (Kind.WHOLE, 3)]
    assert [t.uid for t in found[0].tasks] == ["default/a", "default/b"]


def test_without_min_task_member_every_role_is_unconstrained() -> None:
    """TestCreateJobBundles_NoTaskMinAvailableTreatsAllRolesAsUnconstrained: minMember 2, four
    Running workers, no minTaskMember: the two of lowest priority are safe, two whole."""
    four = job("j", min_member=2)
    local = [running(four, chr(ord("a") + i), priority=i) for i in range(4)]

    found = bundles.split(four, local)

    assert [(b.kind, len(b.tasks)) for b in found] == [(Kind.SAFE, 2), (Kind.WHOLE, 2)]
    assert [t.uid for t in found[0].tasks] == ["default/a", "default/b"]


def test_a_role_at_its_minimum_keeps_its_task_out_of_the_safe_bundle() -> None:
    """TestCreateJobBundles_MixedLegacyAndSubJobBothEnforced, its sub-jobs left out: minMember 5,
    role worker minimum 5, two masters and five workers Running (surplus 2); of the local m1
    (priority 0) and w1a (priority 1), m1 is safe (master has no minimum) and w1a whole (worker
    is at its minimum), though the job's surplus would allow both."""
    mixed = job("j", min_member=5, worker=5)
    m1 = running(mixed, "m1", priority=0, role="master")
    running(mixed, "m2", priority=10, role="master")
    w1a = running(mixed, "w1a", priority=1)
    for name, priority in (("w2a", 11), ("w2b", 12), ("w3a", 13), ("w3b", 14)):
        running(mixed, name, priority=priority)

    found = bundles.split(mixed, [m1, w1a])

    assert [(b.kind, [t.uid for t in b.tasks]) for b in found] == [
        (Kind.SAFE, ["default/m1"]),
        (Kind.WHOLE, ["default/w1a"]),
    ]


def test_every_candidate_of_a_job_below_min_member_is_safe() -> None:
    """TestCreateJobBundles_JobNotReadyShortCircuitsAllSafe, its sub-job left out: minMember 10,
    two Running tasks: the job is not gang-ready, so both are one safe bundle."""
    short = job("j", min_member=10)
    local = [running(short, "a", priority=0), running(short, "b", priority=1)]

    found = bundles.split(short, local)

    assert [(b.kind, len(b.tasks)) for b in found] == [(Kind.SAFE, 2)]
    assert found[0].cost == EMPTY


# --- ApplyAllowedTasks --------------------------------------------------------------------------
def test_the_plugins_answer_shrinks_a_safe_bundle_and_drops_a_whole_one_not_all_allowed() -> None:
    """TestApplyAllowedTasks_WholeAtomicAndSafeShrink: safe {t1, t2}, whole {t3}, allowed t1
    and an unknown t3x: only the safe bundle stays, shrunk to t1. (Volcano's whole bundle's
    `GlobalRes` is t1+t2+t3: here the job holding the three computes it.)"""
    three = job("j")
    t1, t2, t3 = (running(three, name) for name in ("t1", "t2", "t3"))
    given = [Bundle(Kind.SAFE, three, (t1, t2)), Bundle(Kind.WHOLE, three, (t3,))]
    assert given[1].cost == res(cpu=3)

    valid = bundles.keep_allowed(given, {"default/t1", "default/t3x"})

    assert [(b.kind, [t.uid for t in b.tasks]) for b in valid] == [(Kind.SAFE, ["default/t1"])]
    assert valid[0].local == res(cpu=1)


# --- SelectBundles ------------------------------------------------------------------------------
def test_whole_bundles_are_taken_only_when_allowed() -> None:
    """TestSelectBundles_RespectsAllowWhole: safe (1 cpu) then whole (2 cpus), need 1.5 cpu.
    Without whole bundles Volcano selects the safe one alone (it does not cover the need, so the
    actions' loop tries no placement: no attempt here); with them, both (covering it)."""
    one, big = job("j1"), job("big")
    safe = Bundle(Kind.SAFE, one, (running(one, "t1"),))
    heavy = pod("t2").group("big").requests(cpu=2).on("n1").build()
    big.add(TaskState(heavy, big, 0))
    whole_two = Bundle(Kind.WHOLE, big, tuple(big.tasks.values()))
    need = res(cpu="1500m")

    assert list(bundles.attempts([safe, whole_two], need, EMPTY, allow_whole=False)) == []
    assert list(bundles.attempts([safe, whole_two], need, EMPTY, allow_whole=True)) == [
        (*safe.tasks, *whole_two.tasks)
    ]


def test_each_bundle_that_covers_the_need_with_the_room_is_an_attempt_until_they_run_out() -> None:
    """The actions' loop behind `SelectBundles`: with 0.5 cpu of room the safe bundle alone
    covers 1.5 cpu; a failed trial goes on with the next bundle added (`SelectBundles` stops at
    the first); a whole bundle is passed over, not an end, when whole bundles are off."""
    one, other = job("j1"), job("j2")
    safe = Bundle(Kind.SAFE, one, (running(one, "t1"),))
    broken = whole(gang("g", 2))
    more = Bundle(Kind.SAFE, other, (running(other, "t3"),))
    room, need = res(cpu="500m"), res(cpu="1500m")

    every = list(bundles.attempts([safe, broken, more], need, room, allow_whole=True))
    safe_only = list(bundles.attempts([safe, broken, more], need, room, allow_whole=False))

    t1, g0, t3 = safe.tasks[0], broken.tasks[0], more.tasks[0]
    assert every == [(t1,), (t1, g0), (t1, g0, t3)]
    assert safe_only == [(t1,), (t1, t3)]


# --- SortBundlesForPreempt ----------------------------------------------------------------------
def lower_priority_first(a: JobState, b: JobState) -> int:
    """`func(l, r) bool { return l.Priority < r.Priority }`."""
    return (a.priority > b.priority) - (a.priority < b.priority)


def test_safe_bundles_go_first_then_whole_ones_by_efficiency() -> None:
    """TestSortBundlesForPreempt_TypePriorityAndROI: a safe bundle of a priority-10 job goes
    before two whole bundles of priority-1 jobs, whatever the victim order says; of those the
    one costing 2 cpus (w2) goes before the one costing 4 (w1), each freeing 1 cpu against a
    need of 1. (Volcano gives both whole bundles one job and two `GlobalRes`: here two jobs of
    priority 1, of 4 and 2 tasks; the cheaper one's job uid is the later, so efficiency, not
    the uid, orders them.)"""
    high = job("high", priority=10)
    safe = Bundle(Kind.SAFE, high, (running(high, "s1"),))
    w1 = whole(gang("a-low", 4, priority=1))
    w2 = whole(gang("b-low", 2, priority=1))

    found = bundles.ordered([w1, safe, w2], NEED, lower_priority_first)

    assert found == [safe, w2, w1]


def test_the_victim_job_order_goes_before_efficiency() -> None:
    """TestSortBundlesForPreempt_UsesVictimJobOrder: two whole bundles alike but for their jobs'
    uids, ordered `l.UID > r.UID`: jb's goes first."""
    a, b = whole(gang("ja", 2)), whole(gang("jb", 2))

    def later_uid_first(x: JobState, y: JobState) -> int:
        return (x.uid < y.uid) - (x.uid > y.uid)

    assert bundles.ordered([a, b], NEED, later_uid_first) == [b, a]


# --- SortBundlesForReclaim ----------------------------------------------------------------------
def queue_name_order(a: JobState, b: JobState) -> int:
    """`lessQueue := func(l, r *QueueInfo) bool { return l.Name < r.Name }` over the jobs'
    queues, no say within one queue."""
    return (a.queue > b.queue) - (a.queue < b.queue)


def test_the_queue_order_goes_before_efficiency_and_efficiency_decides_without_it() -> None:
    """TestSortBundlesForReclaim_UsesQueueOrderThenROI: a (queue qa, costing 4 cpus) goes before
    b (queue qb, costing 2): the queue order decides; c (4 cpus) and d (2 cpus) without a queue
    order (Volcano's nil lessQueueFn): d, the more efficient, goes first."""
    a = whole(gang("ja", 4, queue="qa"))
    b = whole(gang("jb", 2, queue="qb"))
    assert bundles.ordered([b, a], NEED, queue_name_order)[0] is a

    c = whole(gang("jc", 4, queue="qc"))
    d = whole(gang("jd", 2, queue="qd"))
    assert bundles.ordered([c, d], NEED, none)[0] is d


def test_bundles_alike_but_for_their_jobs_go_in_job_uid_order() -> None:
    """TestSortBundlesForReclaim_DeterministicTieBreaker: two whole bundles of one queue, equal
    efficiency, given b then a: a (job ja) goes before b (job jb)."""
    a = whole(gang("ja", 2, queue="q"))
    b = whole(gang("jb", 2, queue="q"))

    assert bundles.ordered([b, a], NEED, queue_name_order) == [a, b]

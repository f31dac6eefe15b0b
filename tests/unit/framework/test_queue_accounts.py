"""The queue-accounting component: the tree, water-filling, the settle, `reserved`, and the
accounts against the plugins' code before the component (copied here as the oracle)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings, strategies as st

from vscheduler.framework import quota
from vscheduler.framework.queue_accounts import (
    ROOT,
    QueueAccount,
    QueueAccounts,
    water_fill,
)
from vscheduler.framework.session import Session
from vscheduler.framework.state import JobState, QueueState, TaskState
from vscheduler.model import status as task_status
from vscheduler.model.facts import QueueFacts
from vscheduler.model.resources import EMPTY, Resources
from vscheduler.model.status import PodGroupPhase, TaskStatus
from vscheduler.plugins import capacity, proportion
from vscheduler.testing import sessions
from vscheduler.testing.builders import Buildable, Fact, node, pod, podgroup, queue, res, snapshot

POLICY = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
"""

WATER_FILL, SPEC = proportion.RULES, capacity.RULES


def open_session(*items: Buildable | Fact) -> Session:
    return sessions.open_session(snapshot(*items), policy=POLICY)


def account(
    name: str,
    weight: int,
    request: Resources,
    *,
    guarantee: Resources = EMPTY,
    deserved: Resources = EMPTY,
    real_capability: Resources | None = None,
) -> QueueAccount:
    """An account outside any session: realCapability 100 cpu unless given."""
    real = res(cpu="100") if real_capability is None else real_capability
    made = QueueAccount(name, weight, guarantee, None, real, frozenset({"cpu", "memory"}))
    made.request, made.deserved = request, deserved
    return made


def deserving(name: str, **amounts: str) -> QueueFacts:
    return dataclasses.replace(queue(name).build(), deserved=res(**amounts))


# --- the tree --------------------------------------------------------------------------------
def test_every_queue_is_a_child_of_the_root_in_name_order() -> None:
    session = open_session(node("n1").resources(cpu="8"), queue("b"), queue("a"))

    accounts = QueueAccounts(session, WATER_FILL)

    assert accounts.root.name == ROOT
    assert accounts.root.parent is None
    assert [a.name for a in accounts.root.children] == ["a", "b", "default"]
    assert all(a.parent is accounts.root and not a.children for a in accounts.root.children)
    assert list(accounts["a"].ancestors()) == [accounts.root]


def test_the_root_is_the_cluster_and_holds_what_its_subtree_holds() -> None:
    session = open_session(
        node("n1").resources(cpu="8", memory="8Gi"),
        queue("a").guarantee(cpu="2"),
        queue("b").guarantee(cpu="1"),
        podgroup("j").queue("a").inqueue(),
        pod("j-0").group("j").requests(cpu="1").on("n1"),
        podgroup("k").queue("b").inqueue(),
        pod("k-0").group("k").requests(cpu="2").on("n1"),
    )

    root = QueueAccounts(session, WATER_FILL).root

    assert root.deserved == root.real_capability == res(cpu="8", memory="8Gi")
    assert root.guarantee == res(cpu="3")
    assert root.held() == res(cpu="3")


def test_only_a_queue_holding_a_job_is_active() -> None:
    session = open_session(
        node("n1").resources(cpu="8"),
        queue("busy"),
        queue("idle"),
        podgroup("j").queue("busy").inqueue(),
        pod("j-0").group("j").requests(cpu="1"),
    )

    accounts = QueueAccounts(session, WATER_FILL)

    assert set(accounts.holding_jobs()) == {"busy"}
    assert accounts.active("idle") is None
    assert accounts["idle"].deserved == EMPTY


# --- deserved --------------------------------------------------------------------------------
def test_water_fill_splits_by_weight() -> None:
    a, b = account("a", 1, res(cpu="10")), account("b", 3, res(cpu="10"))

    water_fill([a, b], res(cpu="8"), 0.0)

    assert (a.deserved, b.deserved) == (res(cpu="2"), res(cpu="6"))


def test_water_fill_gives_what_a_queue_does_not_request_to_the_others() -> None:
    a, b = account("a", 1, res(cpu="1")), account("b", 1, res(cpu="10"))

    water_fill([a, b], res(cpu="8"), 0.0)

    assert (a.deserved, b.deserved) == (res(cpu="1"), res(cpu="7"))


def test_water_fill_raises_a_queue_to_its_guarantee_and_caps_it_by_real_capability() -> None:
    a = account("a", 1, res(cpu="10"), guarantee=res(cpu="5"))
    b = account("b", 1, res(cpu="10"), real_capability=res(cpu="1"))

    water_fill([a, b], res(cpu="8"), 0.0)

    assert (a.deserved, b.deserved) == (res(cpu="7"), res(cpu="1"))


def test_settle_caps_deserved_by_real_capability_and_raises_it_to_the_guarantee() -> None:
    capped = account("a", 1, EMPTY, deserved=Resources({"cpu": 200_000, "example.com/fpga": 1}))
    raised = account("b", 1, EMPTY, deserved=res(cpu="1"), guarantee=res(cpu="2", memory="1"))

    capped.settle()
    raised.settle()

    assert capped.deserved == Resources({"cpu": 100_000, "example.com/fpga": 1})
    assert raised.deserved == res(cpu="2", memory="1")


def test_the_spec_rule_settles_every_queue_and_a_best_effort_one_has_share_one() -> None:
    session = open_session(
        node("n1").resources(cpu="8"),
        deserving("a", cpu="20"),
        queue("free"),
        podgroup("j").queue("free").inqueue(),
        pod("j-0").group("j").requests(cpu="1"),
    )

    accounts = QueueAccounts(session, SPEC)

    assert accounts["a"].deserved == res(cpu="8")
    assert not accounts["a"].active
    assert accounts["free"].share == 1.0


# --- reserved --------------------------------------------------------------------------------
def test_an_inqueue_job_reserves_all_its_min_resources_or_what_it_has_not_allocated() -> None:
    session = open_session(
        node("n1").resources(cpu="8"),
        queue("a"),
        podgroup("j").queue("a").inqueue().min_resources(cpu="3"),
        pod("j-0").group("j").requests(cpu="1").on("n1"),
    )
    job = session.jobs["default/j"]

    assert quota.reserved(job) == res(cpu="3")
    assert quota.reserved(job, less_allocated=True) == res(cpu="2")


def test_a_running_gang_reserves_what_it_has_not_allocated_and_a_pending_one_nothing() -> None:
    session = open_session(
        node("n1").resources(cpu="8"),
        queue("a"),
        podgroup("run").queue("a").phase(PodGroupPhase.RUNNING).min_resources(cpu="3"),
        pod("run-0").group("run").requests(cpu="1").on("n1"),
        podgroup("wait").queue("a").min_resources(cpu="3"),
        pod("wait-0").group("wait").requests(cpu="1"),
    )

    assert quota.reserved(session.jobs["default/run"]) == res(cpu="2")
    assert quota.reserved(session.jobs["default/wait"]) == EMPTY


# --- against the code before the component ---------------------------------------------------
# The plugins' code before the component (main at 2e133b1), trimmed to what is compared.
@dataclasses.dataclass(slots=True)
class Attr:
    name: str
    weight: int
    deserved: Resources
    guarantee: Resources
    real_capability: Resources
    bounded: frozenset[str]
    allocated: Resources = EMPTY
    request: Resources = EMPTY
    inqueue: Resources = EMPTY
    elastic: Resources = EMPTY
    share: float = 0.0


def old_reserved(job: JobState) -> Resources:
    # capacity's; proportion's too since Volcano 1.15 (6db3122b4): before, an Inqueue job
    # reserved all its minResources there, counting its Binding pods twice
    if job.facts.min_resources is None:
        return EMPTY
    if job.phase is PodGroupPhase.INQUEUE or (
        job.phase is PodGroupPhase.RUNNING and job.count(*task_status.OCCUPYING) >= job.min_member
    ):
        return (quota.counted(job.facts.min_resources) - job.allocated).clamp_min_zero()
    return EMPTY


def old_attrs(session: Session, plugin: str) -> dict[str, Attr]:
    total = quota.cluster_total(session)
    total_guarantee = quota.all_guarantees(session)
    if_nothing = 0.0 if plugin == "proportion" else 1.0
    attrs: dict[str, Attr] = {}
    for job in session.jobs.values():
        queue_state = session.queue_of(job)
        if queue_state is None:
            continue
        attr = attrs.get(queue_state.name)
        if attr is None:
            facts = queue_state.facts
            guarantee = quota.counted(facts.guarantee)
            capability = None if facts.capability is None else quota.counted(facts.capability)
            real, bounded = quota.real_capability(total, total_guarantee, guarantee, capability)
            spec = EMPTY if facts.deserved is None else quota.counted(facts.deserved)
            deserved = spec if plugin == "capacity" else EMPTY
            attr = Attr(queue_state.name, queue_state.weight, deserved, guarantee, real, bounded)
            attrs[queue_state.name] = attr
        pending = EMPTY
        for task in job.with_status(TaskStatus.PENDING):
            pending = pending + task.resreq
        attr.allocated = attr.allocated + job.allocated
        attr.request = attr.request + job.allocated + pending
        attr.inqueue = attr.inqueue + old_reserved(job)
        minimum = (
            EMPTY if job.facts.min_resources is None else quota.counted(job.facts.min_resources)
        )
        attr.elastic = attr.elastic + (job.allocated - minimum).clamp_min_zero()
    if plugin == "capacity":
        for attr in attrs.values():
            capped = quota.within(attr.deserved, attr.real_capability, attr.bounded)
            attr.deserved = capped.max(attr.guarantee)
            attr.share = quota.share_of(attr.allocated, attr.deserved, if_nothing_deserved=1.0)
        return attrs
    remaining = total
    satisfied: set[str] = set()
    ordered = sorted(attrs.values(), key=lambda a: a.name)
    while True:
        hungry = [a for a in ordered if a.name not in satisfied]
        weights = sum(a.weight for a in hungry)
        if weights == 0:
            break
        before, grown, shrunk = remaining, EMPTY, EMPTY
        for attr in hungry:
            old = attr.deserved
            part = Resources({n: a * attr.weight // weights for n, a in remaining.items()})
            capped = quota.within(old + part, attr.real_capability, attr.bounded)
            attr.deserved = capped.min(attr.request).max(attr.guarantee)
            attr.share = quota.share_of(
                attr.allocated, attr.deserved, if_nothing_deserved=if_nothing
            )
            if attr.request.fits_in(attr.deserved) or attr.deserved == old:
                satisfied.add(attr.name)
            grown = grown + (attr.deserved - old).clamp_min_zero()
            shrunk = shrunk + (old - attr.deserved).clamp_min_zero()
        remaining = (remaining + shrunk - grown).clamp_min_zero()
        if remaining.is_empty() or remaining == before:
            break
    return attrs


def old_allows_allocation(
    attrs: dict[str, Attr], plugin: str, queue_state: QueueState, task: TaskState
) -> bool:
    if not queue_state.facts.is_open:
        return False
    attr = attrs.get(queue_state.name)
    if attr is None:
        return True
    limit = attr.deserved if plugin == "proportion" else attr.real_capability
    return not quota.exceeds(attr.allocated + task.resreq, limit, task.resreq)


def old_allows_reclaim(
    attrs: dict[str, Attr], plugin: str, queue_state: QueueState, task: TaskState
) -> bool:
    if not old_allows_allocation(attrs, plugin, queue_state, task):
        return False
    attr = attrs.get(queue_state.name)
    if plugin == "proportion" or attr is None:
        return True
    future = attr.allocated + task.resreq
    asked = [n for n, a in task.resreq.items() if a > 0 and quota.is_counted(n)]
    return any(future.get(n) <= attr.deserved.get(n) for n in asked)


def old_reclaimees(
    session: Session,
    attrs: dict[str, Attr],
    plugin: str,
    reclaimer: TaskState,
    candidates: list[TaskState],
) -> tuple[TaskState, ...]:
    def attr_of(task: TaskState) -> Attr | None:
        return None if task.job is None else attrs.get(task.job.queue)

    if plugin == "capacity" and attr_of(reclaimer) is None:
        return ()
    left: dict[str, Resources] = {}
    victims: list[TaskState] = []
    for task in candidates:
        attr = attr_of(task)
        if attr is None or not session.queues[attr.name].facts.reclaimable:
            continue
        if plugin == "proportion":
            allocated = left.setdefault(attr.name, attr.allocated)
            if not allocated.fits_in(attr.deserved):  # Volcano >= 1.12 (commit 975277f55)
                left[attr.name] = allocated - task.resreq
                victims.append(task)
            continue
        shares = any(
            quota.is_counted(n) and reclaimer.resreq.get(n) > 0
            for n, amount in task.resreq.items()
            if amount > 0
        )
        if not shares:
            continue
        allocated = left.setdefault(attr.name, attr.allocated)
        if not attr.guarantee.fits_in(allocated - task.resreq):
            continue
        asked = task.resreq
        relevant = [n for n, a in asked.items() if a > 0 and attr.deserved.get(n) > 0]
        if not relevant or any(allocated.get(n) > attr.deserved.get(n) for n in relevant):
            left[attr.name] = allocated - task.resreq
            victims.append(task)
    return tuple(victims)


@st.composite
def clusters(draw: st.DrawFn) -> list[Buildable | Fact]:
    items: list[Buildable | Fact] = [node("n1").resources(cpu=str(draw(st.integers(0, 16))))]
    names = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    for name in names:
        facts = (
            queue(name).weight(draw(st.integers(1, 4))).guarantee(cpu=str(draw(st.integers(0, 4))))
        )
        facts = facts.reclaimable(draw(st.booleans()))
        if draw(st.booleans()):
            facts = facts.capability(cpu=str(draw(st.integers(0, 12))))
        built = facts.build()
        if draw(st.booleans()):
            built = dataclasses.replace(built, deserved=res(cpu=str(draw(st.integers(0, 12)))))
        items.append(built)
    for j in range(draw(st.integers(0, 6))):
        group = podgroup(f"j{j}").queue(draw(st.sampled_from(names)))
        group = group.phase(draw(st.sampled_from(list(PodGroupPhase)[:4])))
        if draw(st.booleans()):
            group = group.min_resources(cpu=str(draw(st.integers(0, 6))))
        items.append(group)
        for t in range(draw(st.integers(0, 4))):
            task = pod(f"j{j}-{t}").group(f"j{j}").requests(cpu=str(draw(st.integers(1, 3))))
            items.append(task.on("n1") if draw(st.booleans()) else task)
    return items


def figures(a: QueueAccount | Attr) -> tuple[object, ...]:
    return (a.allocated, a.request, a.inqueue, a.elastic, a.deserved, a.real_capability, a.share)


@settings(max_examples=150, deadline=None)
@given(clusters(), st.sampled_from(["proportion", "capacity"]))
def test_the_accounts_match_the_plugins_code_before_the_component(
    items: list[Buildable | Fact], plugin: str
) -> None:
    session = open_session(*items)
    rules = WATER_FILL if plugin == "proportion" else SPEC
    old = old_attrs(session, plugin)

    accounts = QueueAccounts(session, rules)

    assert {n: figures(a) for n, a in accounts.holding_jobs().items()} == {
        n: figures(a) for n, a in old.items()
    }
    tasks = [t for job in session.jobs.values() for t in job.tasks.values()]
    for task in tasks:
        q = session.queues[task.job.queue] if task.job is not None else None
        if q is not None:
            want = old_allows_allocation(old, plugin, q, task)
            assert bool(accounts.allows_allocation(q, task)) is want
            assert accounts.allows_reclaim(q, task) is old_allows_reclaim(old, plugin, q, task)
        running = [t for t in tasks if t.status is TaskStatus.RUNNING]
        want_victims = old_reclaimees(session, old, plugin, task, running)
        assert accounts.reclaimees(task, running) == want_victims


amounts = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods"]), st.integers(-4, 8), max_size=4
)


@settings(max_examples=300, deadline=None)
@given(amounts, amounts, amounts)
def test_would_exceed_says_what_exceeds_of_the_sum_says(
    held: dict[str, int], asked: dict[str, int], limit: dict[str, int]
) -> None:
    h, a, lim = Resources(held), Resources(asked), Resources(limit)

    assert quota.would_exceed(h, a, lim) is bool(quota.exceeds(h + a, lim, a))

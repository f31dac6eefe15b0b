from __future__ import annotations

import dataclasses

import pytest

from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.framework import quota
from vscheduler.framework.results import Refusal, Vote
from vscheduler.framework.session import Session
from vscheduler.model.resources import Resources
from vscheduler.model.status import PodGroupPhase
from vscheduler.plugins import overcommit
from vscheduler.plugins.overcommit import Overcommit
from vscheduler.testing import scenario, sessions
from vscheduler.testing.builders import Buildable, Fact, node, pod, podgroup, queue, res, snapshot

TWO_NODES = (
    node("n1").resources(cpu="4", memory="8Gi"),
    node("n2").resources(cpu="4", memory="8Gi"),
)


def policy(arguments: str = "") -> str:
    text = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: overcommit\n'
    return text + (f"    arguments:\n{arguments}" if arguments else "")


def open_session(*items: Buildable | Fact, arguments: str = "") -> tuple[Session, Overcommit]:
    session = sessions.open_session(snapshot(*TWO_NODES, *items), policy=policy(arguments))
    plugin = session.plugins["overcommit"]
    assert isinstance(plugin, Overcommit)
    return session, plugin


def as_vote(answer: Vote | Refusal) -> Vote:
    """A `Refusal` is a REJECT (with its reason)."""
    return Vote.REJECT if isinstance(answer, Refusal) else answer


def vote(cpu: str, *items: Buildable | Fact, arguments: str = "") -> Vote:
    """The vote on a Pending PodGroup `new` asking `cpu` CPUs and 1Gi, beside `items`."""
    new = podgroup("new").min_resources(cpu=cpu, memory="1Gi")
    session, plugin = open_session(new, *items, arguments=arguments)
    return as_vote(plugin.vote_enqueue(session.jobs["default/new"]))


# --- the overcommitted idle resources ------------------------------------------------------------
def test_a_job_that_fits_only_thanks_to_the_factor_of_1_2_is_permitted() -> None:
    # 8 CPUs * 1.2 = 9.6 CPUs.
    assert vote("9") is Vote.PERMIT
    assert vote("9600m") is Vote.PERMIT


def test_a_job_beyond_the_overcommitted_cluster_is_rejected() -> None:
    assert vote("9601m") is Vote.REJECT
    assert vote("10") is Vote.REJECT


def test_a_rejection_names_the_amounts() -> None:
    new = podgroup("new").min_resources(cpu="10", memory="1Gi")
    session, plugin = open_session(new)
    assert plugin.vote_enqueue(session.jobs["default/new"]) == Refusal(
        "minResources cpu 10 + what admitted jobs hold (cpu 0) exceed the Ready nodes'"
        " allocatable times the overcommit factor, less what is in use (cpu 9600m)"
    )


def test_with_a_factor_of_one_nothing_beyond_the_cluster_is_permitted() -> None:
    assert vote("8", arguments="      overcommit-factor: 1.0\n") is Vote.PERMIT
    assert vote("9", arguments="      overcommit-factor: 1.0\n") is Vote.REJECT


def test_a_factor_of_one_resource_overrides_the_default_for_that_resource_only() -> None:
    arguments = "      overcommit-factor.cpu: 1.5\n"
    _, plugin = open_session(arguments=arguments)

    assert plugin.idle == Resources(cpu=12000, memory=16 * 2**30 * 6 // 5)
    assert vote("12", arguments=arguments) is Vote.PERMIT
    assert vote("13", arguments=arguments) is Vote.REJECT


def test_a_factor_is_applied_as_written_in_decimal() -> None:
    _, plugin = open_session(arguments="      overcommit-factor: 1.15\n")

    assert plugin.idle.milli_cpu == 9200


def test_what_pods_on_the_nodes_use_is_not_idle() -> None:
    running = pod("busy").requests(cpu="4", memory="1Gi").on("n1")
    _, plugin = open_session(running)

    assert plugin.idle.milli_cpu == 5600
    assert vote("5", running) is Vote.PERMIT
    assert vote("6", running) is Vote.REJECT


def test_only_ready_nodes_count() -> None:
    _, plugin = open_session(node("down").resources(cpu="64").not_ready())

    assert plugin.idle.milli_cpu == 9600


# --- what is already admitted --------------------------------------------------------------------
def test_inqueue_podgroups_hold_their_min_resources() -> None:
    admitted = podgroup("admitted").inqueue().min_resources(cpu="5")

    assert vote("4", admitted) is Vote.PERMIT
    assert vote("5", admitted) is Vote.REJECT


def test_a_running_gang_holds_what_its_min_resources_have_not_yet_allocated() -> None:
    gang = podgroup("gang").min_resources(cpu="6").phase(PodGroupPhase.RUNNING)
    member = pod("gang-0").group("gang").requests(cpu="2").on("n1")
    _, plugin = open_session(gang, member)

    assert plugin.inqueue == res(cpu="4")
    assert plugin.idle.milli_cpu == 7600
    assert vote("3", gang, member) is Vote.PERMIT
    assert vote("4", gang, member) is Vote.REJECT


def test_an_admitted_job_reserves_its_min_resources_for_later_votes() -> None:
    first = podgroup("first").min_resources(cpu="5")
    session, plugin = open_session(first, podgroup("second").min_resources(cpu="5"))
    jobs = session.jobs

    assert plugin.vote_enqueue(jobs["default/first"]) is Vote.PERMIT
    session.dispatch.job_enqueued(jobs["default/first"])

    assert plugin.inqueue == res(cpu="5")
    assert as_vote(plugin.vote_enqueue(jobs["default/second"])) is Vote.REJECT


# --- a job its queue will not let progress holds no budget (issue 11) ---------------------------
WITH_PROPORTION = (
    'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: overcommit\n  - name: proportion\n'
)


def queued(*items: Buildable | Fact) -> tuple[Session, Overcommit]:
    """Queues `full` and `other` (weight 1 each, 8 CPU: each deserves 4), `other` asking 8 CPU,
    `full` running `items` beside them (overcommit and proportion)."""
    demand = [pod(f"other-{i}").group("other").requests(cpu="1", memory="1Gi") for i in range(8)]
    snap = snapshot(
        *TWO_NODES,
        queue("full"),
        queue("other"),
        podgroup("other").queue("other").min_member(1),
        *demand,
        *items,
    )
    session = sessions.open_session(snap, policy=WITH_PROPORTION)
    plugin = session.plugins["overcommit"]
    assert isinstance(plugin, Overcommit)
    return session, plugin


def full_queue(running_cpus: int) -> list[Buildable | Fact]:
    """Queue `full` running `running_cpus` one-CPU pods and holding an admitted job `waiting` of
    4 CPU whose one pod is pending."""
    running = podgroup("running").queue("full").min_member(1).phase(PodGroupPhase.RUNNING)
    waiting = podgroup("waiting").queue("full").min_member(1).min_resources(cpu="4").inqueue()
    return [
        running,
        *(
            pod(f"running-{i}").group("running").requests(cpu="1", memory="1Gi").on("n1")
            for i in range(running_cpus)
        ),
        waiting,
        pod("waiting-0").group("waiting").requests(cpu="4", memory="1Gi"),
    ]


def test_an_admitted_job_its_queue_cannot_allocate_holds_no_budget() -> None:
    # `full` holds its deserved 4 CPU: its admitted job cannot allocate, so it leaves the
    # budget (9.6 - 4 = 5.6 CPU) to others; Volcano would count its 4 CPU and admit 1.6 more.
    session, plugin = queued(*full_queue(4))

    assert session.queue_allows_progress(session.jobs["default/waiting"]) is False
    assert plugin.inqueue == Resources()
    assert plugin.idle.milli_cpu == 5600


def test_an_admitted_job_its_queue_can_allocate_holds_its_min_resources() -> None:
    session, plugin = queued(*full_queue(0))

    assert session.queue_allows_progress(session.jobs["default/waiting"]) is True
    assert plugin.inqueue == res(cpu="4")


def test_an_admitted_job_of_a_closed_queue_holds_no_budget() -> None:
    waiting = podgroup("waiting").queue("shut").min_member(1).min_resources(cpu="4").inqueue()
    _, plugin = queued(
        queue("shut").state("Closed"),
        waiting,
        pod("waiting-0").group("waiting").requests(cpu="1", memory="1Gi"),
    )

    assert plugin.inqueue == Resources()


def test_an_admitted_job_with_no_pending_pod_yet_holds_its_min_resources() -> None:
    # Volcano's job controller creates the pods once the PodGroup is Inqueue: until they exist
    # nothing says the job is stuck, so it keeps its reservation.
    items = full_queue(4)[:-1]
    session, plugin = queued(*items)

    assert session.queue_allows_progress(session.jobs["default/waiting"]) is True
    assert plugin.inqueue == res(cpu="4")


def test_without_a_queue_plugin_every_admitted_job_holds_its_min_resources() -> None:
    _, plugin = open_session(*full_queue(4), queue("full"))

    assert plugin.inqueue == res(cpu="4")


def test_a_job_admitted_in_this_session_holds_budget_as_in_volcano() -> None:
    # Within a session admission is Volcano's: what enqueue admits counts, whatever its queue.
    later = podgroup("later").queue("full").min_member(1).min_resources(cpu="5")
    following = podgroup("next").queue("other").min_member(1).min_resources(cpu="1")
    session, plugin = queued(*full_queue(4), later, following)
    assert plugin.vote_enqueue(session.jobs["default/next"]) is Vote.PERMIT

    session.dispatch.job_enqueued(session.jobs["default/later"])

    assert plugin.inqueue == res(cpu="5")
    assert as_vote(plugin.vote_enqueue(session.jobs["default/next"])) is Vote.REJECT  # 5 + 1 > 5.6


# --- which resources are compared ----------------------------------------------------------------
def test_only_the_resources_the_min_resources_name_are_compared() -> None:
    hog = pod("hog").requests(cpu="10").on("n1")
    memory_only = podgroup("memory-only").min_resources(memory="2Gi")
    session, plugin = open_session(hog, memory_only)

    assert plugin.idle.milli_cpu == -400
    assert plugin.vote_enqueue(session.jobs["default/memory-only"]) is Vote.PERMIT


def test_pods_and_quota_style_names_in_min_resources_are_not_compared() -> None:
    quota_style = Resources(
        {"cpu": 2000, "pods": 500, "count/pods": 500, "requests.cpu": 2000, "limits.cpu": 4000}
    )
    group = dataclasses.replace(podgroup("quota").build(), min_resources=quota_style)
    session, plugin = open_session(group)

    assert plugin.vote_enqueue(session.jobs["default/quota"]) is Vote.PERMIT
    assert quota.counted(quota_style) == res(cpu="2")


def test_a_job_without_min_resources_is_permitted() -> None:
    session, plugin = open_session(podgroup("free"), pod("hog").requests(cpu="64").on("n1"))

    assert plugin.vote_enqueue(session.jobs["default/free"]) is Vote.PERMIT


# --- arguments and a whole cycle -----------------------------------------------------------------
def test_factors_below_one_are_refused_when_the_policy_is_loaded() -> None:
    with pytest.raises(
        PluginArgsError, match=r"arguments\.overcommit-factor: must be a number >= 1"
    ):
        overcommit.build({"overcommit-factor": 0.8})
    with pytest.raises(PluginArgsError, match=r"arguments\.overcommit-factor\.cpu: must be"):
        overcommit.build({"overcommit-factor.cpu": 0.5})
    with pytest.raises(PolicyError, match="overcommit-factor"):
        sessions.open_session(snapshot(), policy=policy("      overcommit-factor: ten\n"))


def test_an_unknown_argument_is_refused_with_a_suggestion() -> None:
    with pytest.raises(
        PluginArgsError, match=r"factr: unknown argument; did you mean 'overcommit-"
    ):
        overcommit.build({"overcommit-factr": 1.5})


def test_the_default_factor_is_1_2() -> None:
    factory = overcommit.build({})

    assert factory.factors.scale(res(cpu="10")) == res(cpu="12")


def test_a_cycle_admits_what_fits_the_overcommitted_cluster_and_leaves_the_rest_pending() -> None:
    outcome = scenario.run(
        snapshot(
            *TWO_NODES,
            podgroup("big").min_resources(cpu="9"),
            pod("big-0").group("big").requests(cpu="1"),
            podgroup("more").min_resources(cpu="1").created(1),
            pod("more-0").group("more").requests(cpu="1"),
        ),
        policy=policy(),
    )[0]

    assert outcome.result.podgroups["default/big"].phase is PodGroupPhase.RUNNING
    assert outcome.result.podgroups["default/more"].phase is PodGroupPhase.PENDING
    assert outcome.binds == {"default/big-0": "n1"}


# --- Volcano's overcommit_test.go TestOvercommitPlugin ---------------------------------------------
VOLCANO_NODES = (
    node("n1").resources(cpu="2", memory="4Gi"),
    node("n2").resources(cpu="4", memory="16Gi"),
)


@pytest.mark.parametrize(
    ("case", "min_resources", "capability", "expected"),
    [
        ("overCommitFactor is more than 0", {"cpu": "2000m", "memory": "2G"}, None, Vote.PERMIT),
        (
            "when the required resources of pg are too large",
            {"cpu": "20000m", "memory": "20G"},
            None,
            Vote.REJECT,
        ),
        (
            "when pg does not fill MinResources",
            None,
            {"cpu": "200m", "memory": "0.5G"},
            Vote.PERMIT,
        ),
    ],
)
def test_volcano_overcommit_plugin_table(
    case: str,
    min_resources: dict[str, str] | None,
    capability: dict[str, str] | None,
    expected: Vote,
) -> None:
    """TestOvercommitPlugin: an Inqueue PodGroup of queue c1, told enqueued (JobEnqueued) and then
    asked (JobEnqueueable), overcommit alone with factor 1.2. Its case "overCommitFactor is less
    than 0" (0.8, read by Volcano as 1.2) is a policy error here:
    `test_factors_below_one_are_refused_when_the_policy_is_loaded`."""
    c1 = queue("c1").weight(1)
    if capability is not None:
        c1 = c1.capability(**capability)
    pg = podgroup("pg", "test-namespace").queue("c1").min_member(2).inqueue()
    if min_resources is not None:
        pg = pg.min_resources(**min_resources)
    snap = snapshot(*VOLCANO_NODES, c1, pg)
    session = sessions.open_session(snap, policy=policy("      overcommit-factor: 1.2\n"))
    plugin = session.plugins["overcommit"]
    assert isinstance(plugin, Overcommit)
    job = session.jobs["test-namespace/pg"]

    session.dispatch.job_enqueued(job)

    assert as_vote(plugin.vote_enqueue(job)) is expected, case

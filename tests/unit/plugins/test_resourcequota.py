from __future__ import annotations

import dataclasses

import pytest

from vscheduler.errors import PolicyError
from vscheduler.framework.results import Vote
from vscheduler.framework.session import Session
from vscheduler.model.resources import Resources
from vscheduler.plugins.resourcequota import ResourceQuota
from vscheduler.testing import sessions
from vscheduler.testing.builders import Item, node, podgroup, resource_quota, snapshot

POLICY = 'actions: "enqueue"\ntiers:\n- plugins:\n  - name: resourcequota\n'
TEAM_QUOTA = resource_quota("compute", "team").hard(cpu="8", memory="16Gi").used(cpu="5")


def open_session(*items: Item) -> tuple[Session, ResourceQuota]:
    session = sessions.open_session(snapshot(node("n1"), *items), policy=POLICY)
    plugin = session.plugins["resourcequota"]
    assert isinstance(plugin, ResourceQuota)
    return session, plugin


def vote(*items: Item, job: str = "team/new") -> tuple[Vote, str | None]:
    """The vote on `job` and the note it left."""
    session, plugin = open_session(*items)
    result = plugin.vote_enqueue(session.jobs[job])
    return result, session.findings.job_notes.get(job)


# --- the gate -------------------------------------------------------------------------------------
def test_a_job_within_every_quota_is_left_to_the_other_plugins() -> None:
    new = podgroup("new", "team").min_resources(cpu="3", memory="16Gi")

    assert vote(TEAM_QUOTA, new) == (Vote.ABSTAIN, None)


def test_a_job_beyond_a_quota_is_rejected_with_the_amounts_in_the_note() -> None:
    new = podgroup("new", "team").min_resources(cpu="3500m", memory="1Gi")

    assert vote(TEAM_QUOTA, new) == (
        Vote.REJECT,
        "podgroup team/new is Pending: resource quota team/compute insufficient: "
        "requested cpu 3500m, used cpu 5, limited cpu 8",
    )


def test_every_short_resource_is_named() -> None:
    quota = resource_quota("compute", "team").hard(cpu="1", memory="1Gi", pods=2)
    new = podgroup("new", "team").min_resources(cpu="2", memory="2Gi", pods=1)

    assert vote(quota, new) == (
        Vote.REJECT,
        "podgroup team/new is Pending: resource quota team/compute insufficient: "
        "requested cpu 2, memory 2Gi, used cpu 0, memory 0, limited cpu 1, memory 1Gi",
    )


def test_resources_the_quota_does_not_limit_are_not_compared() -> None:
    new = podgroup("new", "team").min_resources(cpu="1", nvidia_com_gpu=64)

    assert vote(TEAM_QUOTA, new) == (Vote.ABSTAIN, None)


def test_a_limit_of_zero_forbids_the_resource() -> None:
    quota = resource_quota("no-gpu", "team").hard({"requests.nvidia.com/gpu": 0})
    new = podgroup("new", "team").min_resources(cpu="1", nvidia_com_gpu=1)

    result, note = vote(quota, new)

    assert result is Vote.REJECT
    assert note is not None
    assert note.endswith(
        "requested nvidia.com/gpu 1, used nvidia.com/gpu 0, limited nvidia.com/gpu 0"
    )


def test_a_requests_cpu_quota_limits_a_job_that_states_cpu() -> None:
    quota = resource_quota("compute", "team").hard({"requests.cpu": "2"})

    assert vote(quota, podgroup("new", "team").min_resources(cpu="2"))[0] is Vote.ABSTAIN
    assert vote(quota, podgroup("new", "team").min_resources(cpu="2001m"))[0] is Vote.REJECT


def test_a_namespace_without_a_quota_abstains() -> None:
    new = podgroup("new", "other").min_resources(cpu="100")

    assert vote(TEAM_QUOTA, new, job="other/new") == (Vote.ABSTAIN, None)


def test_a_job_without_min_resources_abstains() -> None:
    assert vote(TEAM_QUOTA, podgroup("new", "team")) == (Vote.ABSTAIN, None)


def test_each_quota_of_the_namespace_must_hold_the_job() -> None:
    loose = resource_quota("a-loose", "team").hard(cpu="100")
    tight = resource_quota("b-tight", "team").hard(memory="1Gi")
    new = podgroup("new", "team").min_resources(cpu="1", memory="2Gi")

    result, note = vote(loose, tight, new)

    assert result is Vote.REJECT
    assert note == (
        "podgroup team/new is Pending: resource quota team/b-tight insufficient: "
        "requested memory 2Gi, used memory 0, limited memory 1Gi"
    )


def test_a_malformed_quota_closes_its_namespace_with_its_problem() -> None:
    bad = dataclasses.replace(
        resource_quota("compute", "team").build(), problem="ResourceQuota team/compute: bad"
    )

    assert vote(bad, podgroup("new", "team").min_resources(cpu="1")) == (
        Vote.REJECT,
        "podgroup team/new is Pending: resource quota team/compute cannot be read: "
        "ResourceQuota team/compute: bad",
    )


# --- what this session admitted -------------------------------------------------------------------
def test_jobs_admitted_earlier_in_the_session_count_against_the_quota() -> None:
    first = podgroup("first", "team").min_resources(cpu="2")
    new = podgroup("new", "team").min_resources(cpu="2")
    session, plugin = open_session(TEAM_QUOTA, first, new)

    plugin.on_enqueued(session.jobs["team/first"])

    assert plugin.admitted == {"team": Resources(cpu=2000)}
    assert plugin.vote_enqueue(session.jobs["team/new"]) is Vote.REJECT
    assert session.findings.job_notes["team/new"] == (
        "podgroup team/new is Pending: resource quota team/compute insufficient: "
        "requested cpu 2, used cpu 5 (and cpu 2 admitted in this cycle), limited cpu 8"
    )


def test_jobs_admitted_in_another_namespace_do_not_count() -> None:
    elsewhere = podgroup("big", "other").min_resources(cpu="50")
    new = podgroup("new", "team").min_resources(cpu="3")
    session, plugin = open_session(TEAM_QUOTA, elsewhere, new)

    plugin.on_enqueued(session.jobs["other/big"])

    assert plugin.admitted == {}
    assert plugin.vote_enqueue(session.jobs["team/new"]) is Vote.ABSTAIN


# --- arguments ------------------------------------------------------------------------------------
def test_resourcequota_takes_no_arguments() -> None:
    policy = POLICY + "    arguments:\n      quota.strict: true\n"

    with pytest.raises(PolicyError, match=r"plugin resourcequota: arguments.quota.strict: unknown"):
        sessions.open_session(snapshot(), policy=policy)

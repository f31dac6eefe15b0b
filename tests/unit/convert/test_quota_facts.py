"""ResourceQuotas become exact facts under the names pod requests use; malformed ones are errors
naming the object and the field (simulate) or facts carrying the problem (the cache)."""

from __future__ import annotations

from typing import Any

import pytest

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.memo import FactsMemo
from vscheduler.convert.resourcequota import convert_resource_quota, guarded_quota
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError
from vscheduler.model.resourcequota import ResourceQuotaFacts, quota_request
from vscheduler.model.resources import Resources


def raw_quota(
    name: str = "compute",
    *,
    hard: object = None,
    used: object = None,
    spec_hard: object = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"hard": spec_hard} if spec_hard is not None else {},
    }
    status: dict[str, Any] = {}
    if hard is not None:
        status["hard"] = hard
    if used is not None:
        status["used"] = used
    if status:
        obj["status"] = status
    return obj


# --- converting -----------------------------------------------------------------------------------
def test_hard_and_used_are_read_exactly_with_cpu_in_millicores() -> None:
    quota = convert_resource_quota(
        raw_quota(hard={"cpu": "2500m", "memory": "4Gi", "pods": 10}, used={"cpu": "1"})
    )

    assert quota == ResourceQuotaFacts(
        namespace="team",
        name="compute",
        hard=Resources(cpu=2500, memory=4 * 2**30, pods=10),
        used=Resources(cpu=1000),
        limited=frozenset({"cpu", "memory", "pods"}),
    )
    assert quota.key == "team/compute"


def test_requests_names_are_held_under_the_plain_name() -> None:
    quota = convert_resource_quota(
        raw_quota(
            hard={"requests.cpu": "500m", "requests.nvidia.com/gpu": "4", "limits.memory": "8Gi"},
            used={"requests.cpu": "250m"},
        )
    )

    assert quota.hard == Resources({"cpu": 500, "nvidia.com/gpu": 4, "limits.memory": 8 * 2**30})
    assert quota.used == Resources(cpu=250)
    assert quota.limited == frozenset({"cpu", "nvidia.com/gpu", "limits.memory"})


def test_a_limit_given_both_ways_keeps_the_one_with_less_room_left() -> None:
    quota = convert_resource_quota(
        raw_quota(
            hard={"cpu": "10", "requests.cpu": "8"},
            used={"cpu": "1", "requests.cpu": "6"},
        )
    )

    assert (quota.hard, quota.used) == (Resources(cpu=8000), Resources(cpu=6000))


def test_a_limit_of_zero_still_limits() -> None:
    quota = convert_resource_quota(raw_quota(hard={"requests.nvidia.com/gpu": "0"}))

    assert quota.hard == Resources()
    assert quota.limited == frozenset({"nvidia.com/gpu"})
    assert quota.exceeded(Resources({"nvidia.com/gpu": 1})) == ("nvidia.com/gpu",)


def test_spec_hard_is_read_when_no_status_was_written() -> None:
    quota = convert_resource_quota(raw_quota(spec_hard={"cpu": "4"}))

    assert (quota.hard, quota.used) == (Resources(cpu=4000), Resources())


def test_status_hard_wins_over_spec_hard() -> None:
    quota = convert_resource_quota(raw_quota(spec_hard={"cpu": "4"}, hard={"cpu": "2"}))

    assert quota.hard == Resources(cpu=2000)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            raw_quota(hard={"cpu": "two"}),
            "ResourceQuota team/compute: status.hard.cpu: invalid quantity 'two': no digits",
            id="quantity",
        ),
        pytest.param(
            raw_quota(hard={"cpu": "1"}, used=["cpu"]),
            "ResourceQuota team/compute: status.used: must be a mapping of resource name to "
            "quantity, got a list",
            id="used-list",
        ),
        pytest.param(
            raw_quota(spec_hard={"memory": "-1Gi"}),
            "ResourceQuota team/compute: spec.hard.memory: must not be negative, got '-1Gi'",
            id="negative",
        ),
    ],
)
def test_a_malformed_quota_is_an_error_naming_object_and_field(
    obj: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        convert_resource_quota(obj)

    assert str(caught.value) == message


def test_the_lenient_form_keeps_the_message_and_limits_nothing() -> None:
    quota = guarded_quota(raw_quota(hard={"cpu": "two"}))

    assert (quota.key, quota.hard, quota.limited) == ("team/compute", Resources(), frozenset())
    assert quota.problem.startswith("ResourceQuota team/compute: status.hard.cpu:")


def test_a_snapshot_carries_the_quotas_and_names_the_document_of_a_bad_one() -> None:
    good = SourcedObject("cluster.yaml#1", raw_quota("a", hard={"cpu": "1"}))
    bad = SourcedObject("cluster.yaml#2", raw_quota("b", hard={"cpu": "x1"}))

    snap = build_snapshot([good])
    with pytest.raises(InputError) as caught:
        build_snapshot([good, bad])

    assert [q.key for q in snap.quotas] == ["team/a"]
    assert snap.resource_quotas == (good.obj,)
    assert str(caught.value).startswith("cluster.yaml#2: ResourceQuota team/b: status.hard.cpu:")


# --- a PodGroup's minResources under quota names -------------------------------------------------
def test_min_resources_are_read_under_quota_names() -> None:
    asked = quota_request(Resources({"cpu": 1500, "requests.memory": 2**30, "pods": 2}))

    assert asked == Resources({"cpu": 1500, "memory": 2**30, "pods": 2})


def test_a_plain_name_wins_over_its_requests_form() -> None:
    asked = quota_request(Resources({"cpu": 1500, "requests.cpu": 2}))

    assert asked == Resources(cpu=1500)


def test_requests_cpu_alone_counts_in_whole_cores() -> None:
    assert quota_request(Resources({"requests.cpu": 2})) == Resources(cpu=2000)


def test_exceeded_names_only_limited_resources_the_job_asks_for() -> None:
    quota = ResourceQuotaFacts(
        namespace="team",
        name="q",
        hard=Resources(cpu=4000, memory=2**30),
        used=Resources(cpu=3000, memory=2**30),
        limited=frozenset({"cpu", "memory"}),
    )

    assert quota.exceeded(Resources(cpu=1000, pods=50)) == ()
    assert quota.exceeded(Resources(cpu=1001)) == ("cpu",)
    assert quota.exceeded(Resources(cpu=500), Resources(cpu=600)) == ("cpu",)
    assert quota.exceeded(Resources(cpu=2000, memory=1)) == ("cpu", "memory")


# --- the cache's memo -----------------------------------------------------------------------------
def test_the_memo_converts_an_object_again_only_when_it_changes() -> None:
    calls: list[str] = []

    def convert(obj: Any) -> ResourceQuotaFacts:
        calls.append(obj["metadata"]["name"])
        return guarded_quota(obj)

    memo = FactsMemo(convert)
    a, b = raw_quota("a", hard={"cpu": "1"}), raw_quota("b", hard={"cpu": "2"})

    first = memo.facts({"team/b": b, "team/a": a})
    again = memo.facts({"team/b": b, "team/a": a})
    changed = memo.facts({"team/a": raw_quota("a", hard={"cpu": "3"})})

    assert [q.key for q in first] == ["team/a", "team/b"]
    assert again is first
    assert [q.hard for q in changed] == [Resources(cpu=3000)]
    assert calls == ["b", "a", "a"]

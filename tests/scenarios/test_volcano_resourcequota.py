"""resourcequota as Volcano decides, transcribed from Volcano's `pkg/scheduler/plugins/
resourcequota/resourcequota_test.go`: every case of `TestResourceQuotaPlugin` (its tier:
resourcequota with `enableJobEnqueued` alone, see `go_tiers`).

The Go test asks `ssn.JobEnqueueable(job)` of a PodGroup; here the enqueue action runs over the
same PodGroup, made Pending (the Go test builds it Inqueue, which enqueue would not look at),
and the outcome is its phase: Inqueue where Volcano answers true, Pending where false. Objects:
`BuildResourceQuota("test", "default", hard)` is a ResourceQuota whose `status.hard` is `hard`
("2000m" cpu, "2G" memory); `pg.Spec.MinResources` the PodGroup's `minResources`; the one node
is large enough for every PodGroup, so only the quota decides.

Skipped: `TestJobEnqueuedOnOtherPluginsReject`, which needs a test-only plugin rejecting pgA in
the same tier (`uthelper.RejecterPlugin`); vscheduler has no such plugin to name in a policy.
"""

from __future__ import annotations

from vscheduler.model.status import PodGroupPhase
from vscheduler.testing.builders import Item, node, podgroup, queue, resource_quota, snapshot
from vscheduler.testing.scenario import run
from vscheduler.testing.volcano import go_tiers

POLICY = go_tiers("enqueue", resourcequota=("enableJobEnqueued",))
NORMAL = {"cpu": "2000m", "memory": "2G"}
HUGE = {"cpu": "20000m", "memory": "20G"}


def phase_after_enqueue(min_resources: dict[str, str] | None, *, quota: bool) -> PodGroupPhase:
    group = podgroup("pg").queue("c1").min_member(2)
    if min_resources is not None:
        group = group.min_resources(**min_resources)
    items: list[Item] = [node("n1").resources(cpu="64", memory="256G"), queue("c1"), group]
    if quota:
        items.append(resource_quota("test").hard(cpu="2000m", memory="2G"))
    [outcome] = run(snapshot(*items), policy=POLICY)
    return outcome.result.podgroups["default/pg"].phase


def test_a_podgroup_whose_min_resources_fit_the_quota_is_admitted() -> None:
    """TestResourceQuotaPlugin "ResourceQuota capacity can match the needs of this pg"."""
    assert phase_after_enqueue(NORMAL, quota=True) is PodGroupPhase.INQUEUE


def test_a_podgroup_whose_min_resources_exceed_the_quota_stays_pending() -> None:
    """TestResourceQuotaPlugin "ResourceQuota capacity can't match the needs of this pg"."""
    assert phase_after_enqueue(HUGE, quota=True) is PodGroupPhase.PENDING


def test_without_a_resource_quota_a_large_podgroup_is_admitted() -> None:
    """TestResourceQuotaPlugin "No ResourceQuota resource object"."""
    assert phase_after_enqueue(HUGE, quota=False) is PodGroupPhase.INQUEUE


def test_a_podgroup_without_min_resources_is_admitted_under_a_quota() -> None:
    """TestResourceQuotaPlugin "MinResources field of pg is not set"."""
    assert phase_after_enqueue(None, quota=True) is PodGroupPhase.INQUEUE

"""Decisions as data: what one cycle asks the cluster to do, and what it found.

A session never talks to the API server; it returns a `CycleResult`, which `simulate` prints
and the runtime's effects carry out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping

from vscheduler.model.facts import PodGroupCondition
from vscheduler.model.resources import EMPTY, Resources
from vscheduler.model.status import PodGroupPhase


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Bind:
    """Bind pod `pod` (`namespace/name`, uid `task_uid`) to `node`."""

    task_uid: str
    pod: str
    node: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Evict:
    """Evict pod `pod` through the Eviction API; `reason` says which action and why.

    `action` is the action that asked (preempt, reclaim, shuffle) and `strategy` the plugin
    strategy that chose the victim, if any (`lowNodeUtilization`): they label the metrics.
    `plan` names the plan the eviction is part of (preempt and reclaim: the preemptor's job
    key): the evictions of one plan are carried out all or none (each tried by a dry run
    first), so a gang never evicts part of its victims and then finds another refused.
    """

    task_uid: str
    pod: str
    node: str
    reason: str
    action: str = ""
    strategy: str = ""
    plan: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodGroupStatus:
    """A PodGroup's status at the end of a cycle."""

    phase: PodGroupPhase
    conditions: tuple[PodGroupCondition, ...] = ()
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    starting: int = 0
    """Its pods placed but not yet counted (allocated, binding, bound: not yet running): counts
    still to come. Not written; the effects hold a counts-only write back while it is above 0
    (`effects/podgroup_writes.py` `COUNT_HOLD`)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReservationRelease:
    """Remove data key `key` from the ConfigMap `config_map` (`namespace/name`): the reservation
    it holds for `pod` on `node` is done. `reason` is `placed` (the pod got a node, this cycle
    or before) or `expired`."""

    config_map: str
    key: str
    pod: str
    node: str
    reason: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class QueueFigures:
    """One queue's figures at the end of a cycle, as a queue plugin (proportion, capacity) holds
    them: what its tasks hold (`allocated`), hold or wait for (`request`), what it `deserved`,
    its `capability` and `real_capability` (None: the plugin has no such figure), its `share`
    (allocated/deserved in the dominant resource), `weight`, and whether it is `overused` by the
    reporting plugin's rule. They feed Volcano's queue gauges."""

    name: str
    allocated: Resources = EMPTY
    request: Resources = EMPTY
    deserved: Resources = EMPTY
    inqueue: Resources = EMPTY
    """What the queue's admitted jobs' minResources reserve beyond what those jobs had allocated
    when the cycle began, with the jobs this cycle admitted: the reservation its admission and
    allocatable checks count."""
    capability: Resources | None = None
    real_capability: Resources | None = None
    share: float = 0.0
    weight: int = 1
    overused: bool = False
    warning: str = ""
    """What is wrong with the queue's figures, if anything: its guarantee is part of more than
    the cluster holds (`queue big's guarantee (cpu 100) exceeds the cluster's allocatable (cpu
    16)`). Reported as a Warning Event on the Queue and by the metric
    `vscheduler_queue_guarantee_unsatisfiable`; or (capacity with `enableHierarchy`) what is
    wrong with the queue's place in the tree, then with `warning_reason` `InvalidQueueHierarchy`."""
    warning_reason: str = "GuaranteeUnsatisfiable"
    """The reason of the Warning Event that carries `warning`."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CycleResult:
    """The outcome of one scheduling cycle.

    `binds` and `evictions` are commands; `pipelined` tasks wait for resources being released;
    `waiting` maps each pod pipelined on a node (waiting for room being released there; a pod
    whose allocation a pipelined gang keeps is in `pipelined` too, but not here) to the message
    written to its PodScheduled condition (Volcano's `Pod ns/p can possibly be assigned to n,
    once resource is released and minAvailable is satisfied`);
    `nominated` maps every pending pod that should carry `status.nominatedNodeName` to that node
    (pipelined ones, and those whose nomination the session honoured; any other pod carrying
    one has it cleared);
    `podgroups` holds the status of every real PodGroup the session saw; `unschedulable` maps
    every pod left pending to the message written to its PodScheduled condition, but for the
    pods in `arriving` (members of a gang still being created, see `Session.close`): their
    message is written once the gang stops arriving; `revisit_at` is when the first of them falls
    due, or an answer of a plugin changes by itself (cdp's protection of a victim ends), whichever
    comes first (a cycle then runs even if nothing changed); the PodGroups of those gangs, and those
    made under the grace ago with no pod yet (`arriving_groups`), have nothing of their status
    written meanwhile, but those among them in `phased_groups` have a move of their phase written,
    without their conditions: a PodGroup with no pod yet and a controller (Pending to Inqueue: a
    Volcano Job's controller, or a Kubeflow one, creates the pods only then; one without a
    controller has its pods on the way, and a gang that starts at once goes Pending to Running, as
    in a Volcano session that enqueues and allocates it) and one with minResources (its Inqueue
    phase is what holds its admission budget from one cycle to the next);
    `reservations_released` are reservations to remove from their ConfigMap (the reservation
    plugin's); `queues` holds the figures a queue plugin reported for each queue, by name;
    `queue_allocated` holds, for every queue of the session, by name, what its tasks hold at
    the session's close (Allocated, Binding, Bound, Running: pipelined ones left out; with a
    `root` queue, every queue below it counted in its ancestors too), which the effects write to
    the Queue's `status.allocated` where it differs (Volcano's `updateQueueStatus`;
    `framework.queue_status`).
    """

    binds: tuple[Bind, ...] = ()
    evictions: tuple[Evict, ...] = ()
    pipelined: Mapping[str, str] = dataclasses.field(default_factory=dict)
    waiting: Mapping[str, str] = dataclasses.field(default_factory=dict)
    nominated: Mapping[str, str] = dataclasses.field(default_factory=dict)
    podgroups: Mapping[str, PodGroupStatus] = dataclasses.field(default_factory=dict)
    unschedulable: Mapping[str, str] = dataclasses.field(default_factory=dict)
    reservations_released: tuple[ReservationRelease, ...] = ()
    queues: Mapping[str, QueueFigures] = dataclasses.field(default_factory=dict)
    queue_allocated: Mapping[str, Resources] = dataclasses.field(default_factory=dict)
    arriving: frozenset[str] = frozenset()
    arriving_groups: frozenset[str] = frozenset()
    phased_groups: frozenset[str] = frozenset()
    revisit_at: dt.datetime | None = None

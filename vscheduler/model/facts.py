"""Facts: frozen records of one cluster object each, as the scheduler needs them.

Facts are built once at the boundary (`vscheduler.convert`) from raw Kubernetes JSON and never
change; a session keeps its mutable state (statuses, node accounting) elsewhere.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping

from vscheduler.model.frozen import quick_init, replaced
from vscheduler.model.podaffinity import NO_POD_AFFINITY, PodAffinity, SpreadConstraint
from vscheduler.model.resources import EMPTY, Resources
from vscheduler.model.status import PodGroupPhase, QoSClass, TaskStatus

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

QUANTITY_CLAMPED = "QuantityClamped"
"""The reason of a warning on an amount above the scheduler's ceiling, read as the ceiling."""
UNUSUAL_VALUE = "UnusualValue"
"""The reason of a warning on a value Volcano accepts but that is likely a mistake, read as
Volcano reads it (a Queue's `weight: 0` as 1, a negative `minTaskMember`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class FieldWarning:
    """A field read other than as written, or read as Volcano reads it though likely a mistake:
    the object is still scheduled, and told (a Warning Event; a line of `simulate`'s stderr)."""

    reason: str
    """The Event reason: `QUANTITY_CLAMPED` or `UNUSUAL_VALUE`."""
    message: str
    """Names the object and the field: `Queue q: spec.weight: 0 is read as 1 ...`."""


def clamped(messages: tuple[str, ...] | list[str]) -> tuple[FieldWarning, ...]:
    """The warnings of amounts above the ceiling (`quantity.over_ceiling`'s messages)."""
    return tuple(FieldWarning(QUANTITY_CLAMPED, message) for message in messages)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Toleration:
    """A pod's toleration (`operator` Equal or Exists; empty effect tolerates every effect)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Taint:
    """A node's taint."""

    key: str
    value: str = ""
    effect: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Requirement:
    """One node-selector requirement: key, operator (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SelectorTerm:
    """A node-selector term: all expressions and field expressions must match (AND)."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PreferredTerm:
    """A weighted preferred scheduling term of node affinity."""

    weight: int
    term: SelectorTerm


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeAffinity:
    """Required terms (ORed; None means no requirement) and preferred weighted terms."""

    required: tuple[SelectorTerm, ...] | None = None
    preferred: tuple[PreferredTerm, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HostPort:
    """A container port published on the host."""

    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"


@dataclasses.dataclass(frozen=True, slots=True)
class ScoringOverride:
    """A pod's own resource-strategy-fit scoring, from its annotations
    `volcano.sh/resource-strategy-scoring-type` (the strategy) and
    `volcano.sh/resource-strategy-weight` (a JSON object of resource name -> integer weight)."""

    strategy: str
    """`MostAllocated` or `LeastAllocated`."""
    weights: tuple[tuple[str, int], ...]
    """(resource name, weight), by name; only these resources are scored."""


class TemplateKey:
    """A pod's placement template (`TaskFacts.template_key`) with its hash made once: the
    session looks every task's class up by it each cycle."""

    __slots__ = ("_hash", "parts")

    def __init__(self, parts: tuple[object, ...]) -> None:
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, TemplateKey)
            and self._hash == other._hash
            and self.parts == other.parts
        )

    def __repr__(self) -> str:
        return f"TemplateKey{self.parts!r}"


_TEMPLATES: dict[TemplateKey, TemplateKey] = {}
_TEMPLATES_HELD = 65_536
"""Distinct templates remembered at most; past that the table starts again."""


def _intern(key: TemplateKey) -> TemplateKey:
    """The one `TemplateKey` object of its value: pods of one template share it, so the
    session's class lookups (every task, every cycle) match by identity, without comparing
    the parts. Only an optimisation: a key made again after the table was cleared still
    compares equal."""
    if len(_TEMPLATES) >= _TEMPLATES_HELD:
        _TEMPLATES.clear()
    return _TEMPLATES.setdefault(key, key)


LIFE_FIELDS: frozenset[str] = frozenset(
    {"status", "node_name", "started", "nominated_node", "scheduled_at", "eviction_refused"}
)
"""The fields of a `TaskFacts` that `restated` changes: none is read by `template_key`."""


@quick_init
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TaskFacts:
    """One pod, as the scheduler sees it."""

    uid: str
    namespace: str
    name: str
    job: str
    """The key (`namespace/name`) of the job (PodGroup) this task belongs to."""
    group_name: str | None
    """The PodGroup named by the pod's annotation, or None for a pod of its own."""
    resreq: Resources
    """The effective request: containers summed, max with init containers, plus overhead."""
    status: TaskStatus
    node_name: str | None = None
    scheduler_name: str = "default-scheduler"
    priority: int = 0
    priority_class_name: str = ""
    qos: QoSClass = QoSClass.BEST_EFFORT
    preemptable: bool = False
    preemption_opt_out: bool = False
    """`volcano.sh/preemptable` is set and does not read true: preempt and reclaim never take
    this pod (a pod without the key may be taken, as in Volcano since 1.7)."""
    preemption_policy: str = ""
    """`spec.preemptionPolicy` (`PreemptLowerPriority` or `Never`), "" when the pod has none:
    its PriorityClass's then applies, as the API server's admission would have copied it."""
    scheduling_gated: bool = False
    """`spec.schedulingGates` is not empty: no action places the pod until every gate is
    removed (kube-scheduler's and Volcano's reading), and its request is left out of its
    PodGroup's inqueue reservation (`quota.reserved`)."""
    eviction_refused: bool = False
    """The Eviction API refused to evict this pod lately (a PodDisruptionBudget) and it is still
    in backoff (`cache.refusals`): preempt, reclaim and shuffle do not choose it as a victim."""
    created: dt.datetime = EPOCH
    index: int | None = None
    """The pod's index in its job (numeric last part of the name, or the completion index)."""
    node_selector: Mapping[str, str] = dataclasses.field(default_factory=dict)
    affinity: NodeAffinity = NodeAffinity()
    tolerations: tuple[Toleration, ...] = ()
    host_ports: tuple[HostPort, ...] = ()
    pod_affinity: PodAffinity = NO_POD_AFFINITY
    """Inter-pod affinity and anti-affinity (`spec.affinity.podAffinity`, `podAntiAffinity`)."""
    topology_spread: tuple[SpreadConstraint, ...] = ()
    """`spec.topologySpreadConstraints`."""
    images: tuple[str, ...] = ()
    claims: tuple[tuple[str, bool], ...] = ()
    """The PersistentVolumeClaims the pod's volumes use, in its namespace: (claim name, whether
    it is a generic ephemeral volume's claim, named `<pod>-<volume>`)."""
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    scoring: ScoringOverride | None = None
    """The pod's own resource-strategy-fit scoring (its two annotations, well formed), or None."""
    task_role: str = ""
    """The task name within its job (Volcano's `volcano.sh/task-spec` annotation, else the label
    of that name), "" for a pod without one (a PodGroup's `minTaskMember` counts it under "")."""
    owner: str = ""
    """The controlling owner reference as `Kind/name` (`ReplicaSet/web-7d9f`), or empty for a
    pod nothing recreates."""
    started: dt.datetime | None = None
    """`status.startTime`: when the kubelet accepted the pod, or None if not started."""
    cooldown: dt.timedelta | None = None
    """`volcano.sh/cooldown-time` (label, else annotation; a Go duration): how long after it
    was scheduled the cdp plugin keeps a running pod from preempt and reclaim; None without
    one, or when it does not parse (a warning says so)."""
    scheduled_at: dt.datetime | None = None
    """The `lastTransitionTime` of the pod's PodScheduled=True condition, or None."""
    nominated_node: str | None = None
    """`status.nominatedNodeName` of a pod of this scheduler: the node preempt or reclaim freed
    room on for it (written by this scheduler, read back so a restarted one keeps the
    nomination), or None. The session holds its room there while the pod is pending
    (`Session.nominations`); on a placed pod it is a leftover the effects clear."""
    problem: str = ""
    """Why this pod cannot be scheduled whatever the nodes (e.g. a malformed annotation)."""
    warnings: tuple[FieldWarning, ...] = ()
    """What was read other than as written (an amount above the scheduler's ceiling, held at
    it; an unusual value, read as Volcano reads it), each naming the field; reported as Warning
    Events, the object is still scheduled."""
    _template: TemplateKey | None = dataclasses.field(
        default=None, init=False, compare=False, repr=False
    )
    """`template_key()`, once made."""

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    @property
    def best_effort(self) -> bool:
        """Requests no resource at all (placed by backfill, not allocate)."""
        return self.resreq.is_empty()

    def template_key(self) -> TemplateKey:
        """Everything about this pod that can change a placement decision but its identity.

        Tasks with equal keys are interchangeable for predicates and scores, so the session
        evaluates nodes once per key (an equivalence class) and updates incrementally. Made
        once per facts object (facts are immutable and the cache hands the same object to every
        cycle until the pod changes), with its hash.
        """
        made = self._template
        if made is None:
            made = _intern(TemplateKey(self._template_parts()))
            object.__setattr__(self, "_template", made)
        return made

    def restated(self, **changes: object) -> TaskFacts:
        """This pod at another point of its life: `changes` to `LIFE_FIELDS` only (its status,
        node, start, nomination, scheduled time, a refused eviction). None of them is a part
        of its template key, so the key made for this object is carried to the new one, where
        `dataclasses.replace` would leave it to be made again (a bind's echo, a pod turning
        Running and an assumed bind each restate a pod)."""
        unknown = changes.keys() - LIFE_FIELDS
        if unknown:
            raise TypeError(f"restated: {sorted(unknown)[0]} is no field of a pod's life")
        new = replaced(self, **changes)
        if self._template is not None:
            object.__setattr__(new, "_template", self._template)
        return new

    def adopt_template(self, key: TemplateKey) -> None:
        """Take `key` as this pod's template key, made by `template_key()` of a pod whose key
        is made of the very same parts (the pod converter's shortcut for pods read from one
        spec: it saves making and hashing the parts again for each). A key already made stays."""
        if self._template is None:
            object.__setattr__(self, "_template", key)

    def _template_parts(self) -> tuple[object, ...]:
        key = (
            self.resreq,
            tuple(sorted(self.node_selector.items())),
            self.affinity,
            self.tolerations,
            self.host_ports,
            self.images,
            self.namespace,
            self.scoring,
            self.claims,
        )
        if self.pod_affinity is NO_POD_AFFINITY and not self.topology_spread:
            return key  # the common case, decided without a method call
        if self.pod_affinity.is_empty and not self.topology_spread:
            return key
        return (*key, *self._spatial_key())

    def _spatial_key(self) -> tuple[object, ...]:
        """The pod's inter-pod terms and spread constraints, and how its own labels meet them
        (whether it matches its required affinity terms, and each constraint's selector)."""
        labels = self.labels
        return (
            self.pod_affinity.key(),
            tuple(c.key() for c in self.topology_spread),
            self.pod_affinity.matches_all_required(self.namespace, labels),
            tuple(c.selects(labels) for c in self.topology_spread),
        )


@quick_init
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeFacts:
    """One node."""

    name: str
    allocatable: Resources
    capacity: Resources
    max_pods: int = 110
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool = True
    images: Mapping[str, int] = dataclasses.field(default_factory=dict)
    """Image name (every name the node reports for it) -> size in bytes."""
    created: dt.datetime = EPOCH
    warnings: tuple[FieldWarning, ...] = ()
    """What was read other than as written (an amount above the scheduler's ceiling, held at
    it; an unusual value, read as Volcano reads it), each naming the field; reported as Warning
    Events, the object is still scheduled."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodGroupCondition:
    """A PodGroup status condition."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    transition_id: str = ""
    last_transition_time: str = ""


def says_unschedulable(conditions: Iterable[PodGroupCondition]) -> bool:
    """Whether PodGroup `conditions` hold `Unschedulable=True`."""
    return any(c.type == "Unschedulable" and c.status == "True" for c in conditions)


@dataclasses.dataclass(frozen=True, slots=True)
class TaskTopology:
    """A job's task topology (the task-topology plugin's), from its PodGroup's annotations
    `volcano.sh/task-topology-affinity`, `-anti-affinity` (groups of task roles: `;` between
    groups, `,` within one) and `-task-order` (roles, `,`-separated), split as Volcano splits
    them: empty names kept (they name no pod), nothing trimmed."""

    affinity: tuple[tuple[str, ...], ...] = ()
    """Groups whose roles' pods go together; a group of one role: its pods together."""
    anti_affinity: tuple[tuple[str, ...], ...] = ()
    """Groups whose roles' pods go apart; a group of one role: its pods apart."""
    order: tuple[str, ...] = ()
    """The roles placed first, first."""

    def roles(self) -> frozenset[str]:
        """Every role named (the empty name left out)."""
        named = {r for group in (*self.affinity, *self.anti_affinity, self.order) for r in group}
        named.discard("")
        return frozenset(named)


@quick_init
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JobFacts:
    """One PodGroup (or a lone pod's implicit group of one)."""

    uid: str
    namespace: str
    name: str
    queue: str = "default"
    min_member: int = 1
    min_task_member: Mapping[str, int] = dataclasses.field(default_factory=dict)
    min_resources: Resources | None = None
    priority_class_name: str = ""
    priority: int = 0
    phase: PodGroupPhase = PodGroupPhase.PENDING
    conditions: tuple[PodGroupCondition, ...] = ()
    created: dt.datetime = EPOCH
    annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    task_topology: TaskTopology | None = None
    """The PodGroup's task-topology annotations, read (None without any, or when they are
    ignored: a role repeated within one group, as Volcano ignores them; a warning says so)."""
    preemption_opt_out: bool = False
    """The PodGroup's `volcano.sh/preemptable` (annotation, else label) is set and does not read
    true: gangpreempt and gangreclaim take none of its pods (Volcano's
    `IsJobPreemptableForGangEviction`; unset allows). Preempt and reclaim read the pods' own."""
    network_topology: NetworkTopology | None = None
    """`spec.networkTopology`: the HyperNode its pods must (hard) or should (soft) share, or None
    (placed as any job)."""
    synthetic: bool = False
    """True for a pod without a PodGroup: no PodGroup object exists to update."""
    controlled: bool = False
    """The PodGroup has a controller (an ownerReference with `controller: true`: a Volcano Job,
    a Kubeflow job, ...), which may create the pods only once it is Inqueue."""
    problem: str = ""
    """Why this job cannot be scheduled (a malformed PodGroup field), or empty."""
    warnings: tuple[FieldWarning, ...] = ()
    """What was read other than as written (an amount above the scheduler's ceiling, held at
    it; an unusual value, read as Volcano reads it), each naming the field; reported as Warning
    Events, the object is still scheduled."""
    key: str = dataclasses.field(init=False, repr=False, compare=False)
    """`namespace/name` (made once: every cycle reads it of every job, many times)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.namespace}/{self.name}")


HARD_TOPOLOGY = "hard"
SOFT_TOPOLOGY = "soft"


@dataclasses.dataclass(frozen=True, slots=True)
class NetworkTopology:
    """A PodGroup's `spec.networkTopology` (the HyperNodes are `model.topology`'s)."""

    mode: str = HARD_TOPOLOGY
    """`hard` (the job is placed whole within one HyperNode of tier <= the highest allowed, or
    waits) or `soft` (the lowest tier that holds it, else anywhere); any other value (only an
    API server without Volcano's CRD lets one through) constrains nothing, as Volcano reads
    it."""
    highest_tier: int | None = None
    """`highestTierAllowed`, or None."""
    highest_tier_name: str = ""
    """`highestTierName` (read only without `highestTierAllowed`, as Volcano reads it): the tier
    of the HyperNodes whose `spec.tierName` it is."""

    @property
    def is_hard(self) -> bool:
        """`mode: hard`."""
        return self.mode == HARD_TOPOLOGY

    @property
    def is_soft(self) -> bool:
        """`mode: soft`."""
        return self.mode == SOFT_TOPOLOGY


NODE_GROUP_LIMITS = "volcano.sh/nodegroup-resource-limits"
"""The Queue annotation limiting what the queue may use in each node group (JSON: group ->
ResourceList; Volcano's `NodeGroupResourceLimitsAnnotationKey`)."""


HIERARCHY = "volcano.sh/hierarchy"
"""The Queue annotation placing it in hierarchical drf's tree: the names of the levels from the
root down, `/`-separated (`root/eng/prod`; Volcano's `KubeHierarchyAnnotationKey`)."""
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"
"""The weights of those levels, `/`-separated (`1/2/8`; Volcano's
`KubeHierarchyWeightAnnotationKey`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class HierarchyLevel:
    """One level below the root of a queue's place in hierarchical drf's tree."""

    name: str
    weight: float
    """At least 1 (Volcano's drf reads a smaller or unreadable weight as 1)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroupAffinity:
    """A Queue's `spec.affinity`: the node groups its jobs must, may or must not use. Each list
    keeps its order and repeats as written (`preferred`'s order ranks the groups)."""

    required: tuple[str, ...] = ()
    """`nodeGroupAffinity.requiredDuringSchedulingIgnoredDuringExecution`."""
    preferred: tuple[str, ...] = ()
    """`nodeGroupAffinity.preferredDuringSchedulingIgnoredDuringExecution`."""
    anti_required: tuple[str, ...] = ()
    """`nodeGroupAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`."""
    anti_preferred: tuple[str, ...] = ()
    """`nodeGroupAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`."""

    @property
    def is_empty(self) -> bool:
        """No group named at all (`spec.affinity: {}`)."""
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroupLimit:
    """What a queue may use in one node group: only the resources the annotation lists."""

    group: str
    names: tuple[str, ...]
    """The resources listed (sorted), a listed 0 included."""
    amounts: Resources


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class QueueFacts:
    """One Queue (`scheduling.volcano.sh/v1beta1`)."""

    name: str
    uid: str = ""
    weight: int = 1
    capability: Resources | None = None
    guarantee: Resources = EMPTY
    deserved: Resources | None = None
    reclaimable: bool = True
    state: str = "Open"
    parent: str = ""
    priority: int = 0
    node_group_affinity: NodeGroupAffinity | None = None
    """`spec.affinity` (None when absent: with hierarchy, the nearest ancestor's applies)."""
    node_group_limits: tuple[NodeGroupLimit, ...] = ()
    """The `volcano.sh/nodegroup-resource-limits` annotation, by group (sorted)."""
    node_group_limits_problem: str = ""
    """Why that annotation could not be read, or empty (the nodegroup plugin then keeps the
    queue's pods off every node, as Volcano does)."""
    hierarchy: tuple[HierarchyLevel, ...] = ()
    """The `volcano.sh/hierarchy` and `volcano.sh/hierarchy-weights` annotations: the levels
    below the root, top first (none: the queue's jobs hang from the root). Read by drf with
    `enableHierarchy`."""
    created: dt.datetime = EPOCH
    problem: str = ""
    """Why this queue cannot take jobs (a malformed Queue field), or empty."""
    warnings: tuple[FieldWarning, ...] = ()
    """What was read other than as written (an amount above the scheduler's ceiling, held at
    it; an unusual value, read as Volcano reads it), each naming the field; reported as Warning
    Events, the object is still scheduled."""

    @property
    def is_open(self) -> bool:
        """Accepts new work."""
        return self.state in ("Open", "")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PriorityClassFacts:
    """A PriorityClass."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeUsage:
    """A node's measured utilisation: percent by resource, then by period (`10m`)."""

    node: str
    usage: Mapping[str, Mapping[str, float]]
    metrics_time: dt.datetime
    stale: bool = False
    """The latest collection failed: these values are the last good ones, aging."""
    history: tuple[Mapping[str, Mapping[str, float]], ...] = ()
    """Earlier consecutive successful collections, oldest first, shaped like `usage` (a failed
    collection clears it, so `len(history) + 1` collections in a row are known)."""

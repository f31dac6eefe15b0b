"""Fluent builders of model facts, for tests.

    snapshot(
        node("n1").resources(cpu="4", memory="8Gi"),
        podgroup("pg1").min_member(2).queue("q1"),
        pod("p1").group("pg1").requests(cpu="1"),
        queue("q1").weight(3),
    )

Quantities are Kubernetes strings (or numbers), parsed exactly. Times are seconds after a fixed
epoch, so orderings are explicit.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Generic, TypeVar

from vscheduler.convert.cooldown import COOLDOWN_KEY, cooldown
from vscheduler.convert.hypernode import convert_hypernode
from vscheduler.convert.pod import PREEMPTABLE_KEY, TASK_SPEC_KEY, preemptable_flags, task_role
from vscheduler.convert.queue import node_group_limits
from vscheduler.convert.queue_hierarchy import hierarchy_levels
from vscheduler.convert.resourcequota import convert_resource_quota
from vscheduler.convert.scoring import scoring_override
from vscheduler.convert.tasktopology import task_topology
from vscheduler.model import quantity
from vscheduler.model.cluster import (
    DEFAULT_SCHEDULER_NAME,
    ClusterSnapshot,
    complete_jobs,
    default_queues,
)
from vscheduler.model.facts import (
    HIERARCHY,
    HIERARCHY_WEIGHTS,
    NODE_GROUP_LIMITS,
    FieldWarning,
    HostPort,
    JobFacts,
    NetworkTopology,
    NodeAffinity,
    NodeFacts,
    NodeGroupAffinity,
    NodeUsage,
    PreferredTerm,
    QueueFacts,
    Requirement,
    SelectorTerm,
    Taint,
    TaskFacts,
    Toleration,
)
from vscheduler.model.podaffinity import PodAffinityTerm, SpreadConstraint, WeightedPodAffinityTerm
from vscheduler.model.reservation import ReservationBook
from vscheduler.model.resourcequota import ResourceQuotaFacts
from vscheduler.model.resources import CPU, Resources
from vscheduler.model.selector import DisruptionBudget, LabelRequirement, LabelSelector
from vscheduler.model.status import PodGroupPhase, QoSClass, TaskStatus
from vscheduler.model.topology import HyperNodeFacts, build_topology

T = TypeVar("T")
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    """`seconds` after the builders' fixed epoch."""
    return START + dt.timedelta(seconds=seconds)


def res(**amounts: str | int | float) -> Resources:
    """Resources from Kubernetes quantities: `res(cpu="500m", memory="1Gi", nvidia_com_gpu=1)`.

    An underscore in a keyword stands for `.` before the last `_` part is joined with `/`:
    `nvidia_com_gpu` -> `nvidia.com/gpu`.
    """
    out: dict[str, int] = {}
    for key, text in amounts.items():
        name = _resource_name(key)
        q = quantity.parse_quantity(text)
        out[name] = quantity.to_milli(q) if name == CPU else quantity.to_units(q)
    return Resources(out)


def _resource_name(key: str) -> str:
    if "_" not in key:
        return key
    head, _, tail = key.rpartition("_")
    if key.startswith(("hugepages_", "ephemeral_")):
        return key.replace("_", "-")
    return head.replace("_", ".") + "/" + tail


class _Builder(Generic[T]):
    _facts: T

    def _set(self, **changes: object) -> None:
        self._facts = dataclasses.replace(self._facts, **changes)  # type: ignore[type-var]

    def build(self) -> T:
        """The facts built so far."""
        return self._facts


class NodeBuilder(_Builder[NodeFacts]):
    """Builds a NodeFacts."""

    def __init__(self, name: str) -> None:
        self._facts = NodeFacts(name=name, allocatable=res(cpu="4", memory="8Gi"), capacity=res())

    def resources(self, *, pods: int = 110, **amounts: str | int | float) -> NodeBuilder:
        """Allocatable (and capacity) resources and the max pod count."""
        r = res(**amounts)
        self._set(allocatable=r, capacity=r, max_pods=pods)
        return self

    def labels(self, **labels: str) -> NodeBuilder:
        """Node labels (keywords; use `label` for keys that are not identifiers)."""
        self._set(labels={**self._facts.labels, **labels})
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        """One node label."""
        return self.labels(**{key: value})

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        """Adds a taint."""
        self._set(taints=(*self._facts.taints, Taint(key=key, value=value, effect=effect)))
        return self

    def unschedulable(self) -> NodeBuilder:
        """Cordoned."""
        self._set(unschedulable=True)
        return self

    def not_ready(self) -> NodeBuilder:
        """Its Ready condition is not True."""
        self._set(ready=False)
        return self

    def image(self, name: str, size: int) -> NodeBuilder:
        """An image present on the node."""
        self._set(images={**self._facts.images, name: size})
        return self


class PodBuilder(_Builder[TaskFacts]):
    """Builds a TaskFacts (one pod)."""

    def __init__(self, name: str, namespace: str) -> None:
        uid = f"{namespace}/{name}"
        self._facts = TaskFacts(
            uid=uid,
            namespace=namespace,
            name=name,
            job=f"{namespace}/podgroup-{uid}",
            group_name=None,
            resreq=res(),
            status=TaskStatus.PENDING,
            scheduler_name=DEFAULT_SCHEDULER_NAME,
            qos=QoSClass.BEST_EFFORT,
            created=START,
        )

    def requests(self, **amounts: str | int | float) -> PodBuilder:
        """The pod's effective request."""
        self._set(resreq=res(**amounts), qos=QoSClass.BURSTABLE)
        return self

    def group(self, name: str) -> PodBuilder:
        """Member of PodGroup `name` (same namespace)."""
        self._set(job=f"{self._facts.namespace}/{name}", group_name=name)
        return self

    def on(self, node: str, status: TaskStatus = TaskStatus.RUNNING) -> PodBuilder:
        """Already placed on `node`."""
        self._set(node_name=node, status=status)
        return self

    def scheduled(self, when: dt.datetime) -> PodBuilder:
        """Its PodScheduled=True condition's `lastTransitionTime` (cdp reads it)."""
        self._set(scheduled_at=when)
        return self

    def nominated(self, node: str) -> PodBuilder:
        """`status.nominatedNodeName`: room freed on `node` for this pending pod."""
        self._set(nominated_node=node)
        return self

    def status(self, status: TaskStatus) -> PodBuilder:
        """Sets the status."""
        self._set(status=status)
        return self

    def priority(self, value: int) -> PodBuilder:
        """Pod priority."""
        self._set(priority=value)
        return self

    def created(self, seconds: float) -> PodBuilder:
        """Creation time, seconds after the epoch."""
        self._set(created=at(seconds))
        return self

    def scheduler(self, name: str) -> PodBuilder:
        """spec.schedulerName."""
        self._set(scheduler_name=name)
        return self

    def selector(self, **labels: str) -> PodBuilder:
        """spec.nodeSelector."""
        self._set(node_selector={**self._facts.node_selector, **labels})
        return self

    def require(self, *terms: SelectorTerm) -> PodBuilder:
        """Required node affinity (terms ORed)."""
        self._set(affinity=dataclasses.replace(self._facts.affinity, required=terms))
        return self

    def prefer(self, weight: int, term: SelectorTerm) -> PodBuilder:
        """A preferred node-affinity term."""
        affinity = self._facts.affinity
        preferred = (*affinity.preferred, PreferredTerm(weight=weight, term=term))
        self._set(affinity=NodeAffinity(required=affinity.required, preferred=preferred))
        return self

    def tolerate(
        self, key: str = "", value: str = "", *, operator: str = "Equal", effect: str = ""
    ) -> PodBuilder:
        """Adds a toleration."""
        tol = Toleration(key=key, operator=operator, value=value, effect=effect)
        self._set(tolerations=(*self._facts.tolerations, tol))
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "0.0.0.0") -> PodBuilder:
        """A container port published on the host."""
        hp = HostPort(port=port, protocol=protocol, host_ip=host_ip)
        self._set(host_ports=(*self._facts.host_ports, hp))
        return self

    def images(self, *names: str) -> PodBuilder:
        """Container images."""
        self._set(images=names)
        return self

    def preemptable(self, value: bool = True) -> PodBuilder:
        """volcano.sh/preemptable (set, so `False` also opts the pod out of preemption)."""
        self._set(preemptable=value, preemption_opt_out=not value)
        return self

    def gated(self, value: bool = True) -> PodBuilder:
        """The pod has a scheduling gate (`spec.schedulingGates` not empty)."""
        self._set(scheduling_gated=value)
        return self

    def eviction_refused(self, value: bool = True) -> PodBuilder:
        """A refused eviction of the pod is in backoff (the cache's `refusals` overlay)."""
        self._set(eviction_refused=value)
        return self

    def index(self, value: int) -> PodBuilder:
        """The pod's index in its job."""
        self._set(index=value)
        return self

    def preemption_policy(self, value: str) -> PodBuilder:
        """spec.preemptionPolicy (`Never` or `PreemptLowerPriority`)."""
        self._set(preemption_policy=value)
        return self

    def role(self, name: str) -> PodBuilder:
        """The pod's task role (as the `volcano.sh/task-spec` annotation sets it)."""
        return self.annotate(TASK_SPEC_KEY, name)

    def annotate(self, key: str, value: str) -> PodBuilder:
        """Adds an annotation (`volcano.sh/preemptable`, `volcano.sh/task-spec`,
        `volcano.sh/cooldown-time` and the resource-strategy-fit scoring pair are read as the
        converter reads them, labels too)."""
        self._set(annotations={**self._facts.annotations, key: value})
        return self._read_keys()

    def labels(self, **labels: str) -> PodBuilder:
        """Pod labels (keywords; use `label` for keys that are not identifiers)."""
        self._set(labels={**self._facts.labels, **labels})
        return self._read_keys()

    def _read_keys(self) -> PodBuilder:
        facts = self._facts
        if PREEMPTABLE_KEY in facts.annotations or PREEMPTABLE_KEY in facts.labels:
            preemptable, opt_out = preemptable_flags(facts.annotations, facts.labels)
            self._set(preemptable=preemptable, preemption_opt_out=opt_out)
        if TASK_SPEC_KEY in facts.annotations or TASK_SPEC_KEY in facts.labels:
            self._set(task_role=task_role(facts.annotations, facts.labels))
        label = f"Pod {facts.namespace}/{facts.name}"
        scoring, _ = scoring_override(facts.annotations, label)
        self._set(scoring=scoring)
        if COOLDOWN_KEY in facts.annotations or COOLDOWN_KEY in facts.labels:
            self._set(cooldown=cooldown(facts.annotations, facts.labels, label)[0])
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        """One pod label."""
        return self.labels(**{key: value})

    def affinity(self, *terms: PodAffinityTerm) -> PodBuilder:
        """Required pod-affinity terms (a term naming no namespace means the pod's own)."""
        return self._pod_affinity(required=tuple(map(self._own, terms)))

    def anti_affinity(self, *terms: PodAffinityTerm) -> PodBuilder:
        """Required pod anti-affinity terms."""
        return self._pod_affinity(anti_required=tuple(map(self._own, terms)))

    def prefer_affinity(self, weight: int, term: PodAffinityTerm) -> PodBuilder:
        """A preferred pod-affinity term."""
        weighted = WeightedPodAffinityTerm(weight=weight, term=self._own(term))
        return self._pod_affinity(preferred=(weighted,))

    def prefer_anti_affinity(self, weight: int, term: PodAffinityTerm) -> PodBuilder:
        """A preferred pod anti-affinity term."""
        weighted = WeightedPodAffinityTerm(weight=weight, term=self._own(term))
        return self._pod_affinity(anti_preferred=(weighted,))

    def spread(self, constraint: SpreadConstraint) -> PodBuilder:
        """A topology spread constraint (see `spread`)."""
        self._set(topology_spread=(*self._facts.topology_spread, constraint))
        return self

    def _own(self, term: PodAffinityTerm) -> PodAffinityTerm:
        if term.namespaces or term.namespace_selector is not None:
            return term
        return dataclasses.replace(term, namespaces=frozenset({self._facts.namespace}))

    def _pod_affinity(self, **added: tuple[object, ...]) -> PodBuilder:
        current = self._facts.pod_affinity
        merged = {k: (*getattr(current, k), *v) for k, v in added.items()}
        self._set(pod_affinity=dataclasses.replace(current, **merged))
        return self


class PodGroupBuilder(_Builder[JobFacts]):
    """Builds a JobFacts (one PodGroup)."""

    def __init__(self, name: str, namespace: str) -> None:
        self._facts = JobFacts(
            uid=f"{namespace}/{name}", namespace=namespace, name=name, created=START
        )

    def min_member(self, n: int) -> PodGroupBuilder:
        """spec.minMember."""
        self._set(min_member=n)
        return self

    def queue(self, name: str) -> PodGroupBuilder:
        """spec.queue."""
        self._set(queue=name)
        return self

    def min_resources(self, **amounts: str | int | float) -> PodGroupBuilder:
        """spec.minResources."""
        self._set(min_resources=res(**amounts))
        return self

    def phase(self, phase: PodGroupPhase) -> PodGroupBuilder:
        """status.phase."""
        self._set(phase=phase)
        return self

    def inqueue(self) -> PodGroupBuilder:
        """status.phase Inqueue."""
        return self.phase(PodGroupPhase.INQUEUE)

    def priority(self, value: int) -> PodGroupBuilder:
        """The PodGroup's priority (from its priority class)."""
        self._set(priority=value)
        return self

    def created(self, seconds: float) -> PodGroupBuilder:
        """Creation time, seconds after the epoch."""
        self._set(created=at(seconds))
        return self

    def min_task_member(self, **members: int) -> PodGroupBuilder:
        """spec.minTaskMember."""
        self._set(min_task_member=members)
        return self

    def annotate(self, key: str, value: str) -> PodGroupBuilder:
        """Adds an annotation (`volcano.sh/preemptable` and the task-topology ones are read as
        the converter reads them, with its warnings)."""
        annotations = {**self._facts.annotations, key: value}
        label = f"PodGroup {self._facts.namespace}/{self._facts.name}"
        topology, warnings = task_topology(annotations, label)
        self._set(
            annotations=annotations,
            preemption_opt_out=preemptable_flags(annotations, {})[1],
            task_topology=topology,
            warnings=warnings,
        )
        return self

    def controlled(self) -> PodGroupBuilder:
        """An ownerReference with `controller: true` (a Volcano Job's PodGroup)."""
        self._set(controlled=True)
        return self

    def network_topology(
        self, mode: str = "hard", highest_tier: int | None = None, tier_name: str = ""
    ) -> PodGroupBuilder:
        """spec.networkTopology: `mode`, `highestTierAllowed`, `highestTierName`."""
        self._set(network_topology=NetworkTopology(mode, highest_tier, tier_name))
        return self


class HyperNodeBuilder(_Builder[HyperNodeFacts]):
    """Builds a HyperNodeFacts from the raw object the API server would hold (converted by
    `convert.hypernode`, so members are read as from a cluster)."""

    def __init__(self, name: str) -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": name},
            "spec": {"tier": 1, "members": []},
        }

    def tier(self, tier: int, name: str = "") -> HyperNodeBuilder:
        """spec.tier (and spec.tierName)."""
        self._raw["spec"]["tier"] = tier
        if name:
            self._raw["spec"]["tierName"] = name
        return self

    def _member(self, kind: str, selector: dict[str, Any]) -> HyperNodeBuilder:
        self._raw["spec"]["members"].append({"type": kind, "selector": selector})
        return self

    def nodes(self, *names: str) -> HyperNodeBuilder:
        """Node members by exactMatch."""
        for name in names:
            self._member("Node", {"exactMatch": {"name": name}})
        return self

    def hypernodes(self, *names: str) -> HyperNodeBuilder:
        """HyperNode members (by exactMatch)."""
        for name in names:
            self._member("HyperNode", {"exactMatch": {"name": name}})
        return self

    def regex(self, pattern: str) -> HyperNodeBuilder:
        """A Node member by regexMatch."""
        return self._member("Node", {"regexMatch": {"pattern": pattern}})

    def labels(self, **labels: str) -> HyperNodeBuilder:
        """A Node member by labelMatch (matchLabels)."""
        return self._member("Node", {"labelMatch": {"matchLabels": labels}})

    def raw(self) -> dict[str, Any]:
        """The object as the API server would hold it."""
        return self._raw

    def build(self) -> HyperNodeFacts:
        """The converted facts."""
        return convert_hypernode(self._raw)


class QueueBuilder(_Builder[QueueFacts]):
    """Builds a QueueFacts."""

    def __init__(self, name: str) -> None:
        self._facts = QueueFacts(name=name, uid=name, created=START)

    def weight(self, w: int) -> QueueBuilder:
        """spec.weight."""
        self._set(weight=w)
        return self

    def capability(self, **amounts: str | int | float) -> QueueBuilder:
        """spec.capability."""
        self._set(capability=res(**amounts))
        return self

    def guarantee(self, **amounts: str | int | float) -> QueueBuilder:
        """spec.guarantee.resource."""
        self._set(guarantee=res(**amounts))
        return self

    def deserved(self, **amounts: str | int | float) -> QueueBuilder:
        """spec.deserved."""
        self._set(deserved=res(**amounts))
        return self

    def priority(self, value: int) -> QueueBuilder:
        """spec.priority."""
        self._set(priority=value)
        return self

    def state(self, state: str) -> QueueBuilder:
        """status.state."""
        self._set(state=state)
        return self

    def reclaimable(self, value: bool) -> QueueBuilder:
        """spec.reclaimable."""
        self._set(reclaimable=value)
        return self

    def created(self, seconds: float) -> QueueBuilder:
        """Creation time, seconds after the epoch."""
        self._set(created=at(seconds))
        return self

    def parent(self, name: str) -> QueueBuilder:
        """spec.parent."""
        self._set(parent=name)
        return self

    def node_groups(
        self,
        *,
        required: tuple[str, ...] = (),
        preferred: tuple[str, ...] = (),
        anti_required: tuple[str, ...] = (),
        anti_preferred: tuple[str, ...] = (),
    ) -> QueueBuilder:
        """spec.affinity (`nodeGroupAffinity` / `nodeGroupAntiAffinity`); no argument: `{}`."""
        affinity = NodeGroupAffinity(
            required=required,
            preferred=preferred,
            anti_required=anti_required,
            anti_preferred=anti_preferred,
        )
        self._set(node_group_affinity=affinity)
        return self

    def node_group_limits(self, text: str) -> QueueBuilder:
        """The `volcano.sh/nodegroup-resource-limits` annotation, read as a Queue's is."""
        warnings: list[FieldWarning] = []
        limits, problem = node_group_limits(
            {NODE_GROUP_LIMITS: text}, f"Queue {self._facts.name}", warnings
        )
        self._set(
            node_group_limits=limits,
            node_group_limits_problem=problem,
            warnings=(*self._facts.warnings, *warnings),
        )
        return self

    def hierarchy(self, path: str, weights: str) -> QueueBuilder:
        """The `volcano.sh/hierarchy` and `volcano.sh/hierarchy-weights` annotations, read as a
        Queue's are (as Volcano's `BuildQueueWithAnnos` writes them)."""
        warnings: list[FieldWarning] = []
        annotations = {HIERARCHY: path, HIERARCHY_WEIGHTS: weights}
        levels = hierarchy_levels(annotations, f"Queue {self._facts.name}", warnings)
        self._set(hierarchy=levels, warnings=(*self._facts.warnings, *warnings))
        return self


class BudgetBuilder(_Builder[DisruptionBudget]):
    """Builds a DisruptionBudget (one PodDisruptionBudget)."""

    def __init__(self, name: str, namespace: str) -> None:
        self._facts = DisruptionBudget(namespace=namespace, name=name, selector=LabelSelector())

    def selecting(self, **labels: str) -> BudgetBuilder:
        """spec.selector.matchLabels (added to what is there)."""
        selector = self._facts.selector or LabelSelector()
        merged = {**selector.match_labels, **labels}
        self._set(selector=dataclasses.replace(selector, match_labels=merged))
        return self

    def expression(self, key: str, operator: str, *values: str) -> BudgetBuilder:
        """Adds a spec.selector.matchExpressions entry."""
        selector = self._facts.selector or LabelSelector()
        req = LabelRequirement(key=key, operator=operator, values=values)
        expressions = (*selector.match_expressions, req)
        self._set(selector=dataclasses.replace(selector, match_expressions=expressions))
        return self

    def no_selector(self) -> BudgetBuilder:
        """spec.selector null: selects no pod."""
        self._set(selector=None)
        return self

    def allowed(self, n: int) -> BudgetBuilder:
        """status.disruptionsAllowed."""
        self._set(disruptions_allowed=n)
        return self

    def disrupted(self, *pods: str) -> BudgetBuilder:
        """status.disruptedPods (pod names)."""
        self._set(disrupted_pods=frozenset(pods))
        return self


class QuotaBuilder(_Builder[ResourceQuotaFacts]):
    """Builds a ResourceQuotaFacts from the lists Kubernetes writes, as the converter reads
    them (names as in the object: `cpu`, `requests.memory`, `count/pods`, ...)."""

    def __init__(self, name: str, namespace: str) -> None:
        self._meta = {"name": name, "namespace": namespace}
        self._hard: dict[str, str | int] = {}
        self._used: dict[str, str | int] = {}
        self._facts = self._convert()

    def _convert(self) -> ResourceQuotaFacts:
        status = {"hard": self._hard, "used": self._used}
        return convert_resource_quota({"metadata": self._meta, "status": status})

    def hard(self, amounts: dict[str, str | int] | None = None, **named: str | int) -> QuotaBuilder:
        """status.hard (added to what is there): a mapping for names like `requests.cpu`,
        keywords for plain ones."""
        self._hard.update({**(amounts or {}), **named})
        self._facts = self._convert()
        return self

    def used(self, amounts: dict[str, str | int] | None = None, **named: str | int) -> QuotaBuilder:
        """status.used (added to what is there), as `hard`."""
        self._used.update({**(amounts or {}), **named})
        self._facts = self._convert()
        return self


def node(name: str) -> NodeBuilder:
    """A node with 4 CPU and 8Gi by default."""
    return NodeBuilder(name)


def pod(name: str, namespace: str = "default") -> PodBuilder:
    """A pending pod of this scheduler, requesting nothing until `requests` is called."""
    return PodBuilder(name, namespace)


def podgroup(name: str, namespace: str = "default") -> PodGroupBuilder:
    """A PodGroup (phase Pending, min member 1, queue default)."""
    return PodGroupBuilder(name, namespace)


def hypernode(name: str) -> HyperNodeBuilder:
    """A HyperNode of tier 1 without members."""
    return HyperNodeBuilder(name)


def queue(name: str) -> QueueBuilder:
    """A queue of weight 1."""
    return QueueBuilder(name)


def pdb(name: str, namespace: str = "default") -> BudgetBuilder:
    """A PodDisruptionBudget selecting every pod of its namespace, allowing no disruption,
    until `selecting`, `expression` or `allowed` say otherwise."""
    return BudgetBuilder(name, namespace)


def resource_quota(name: str, namespace: str = "default") -> QuotaBuilder:
    """A ResourceQuota limiting nothing until `hard` says what."""
    return QuotaBuilder(name, namespace)


def term(*requirements: Requirement) -> SelectorTerm:
    """A node selector term of match expressions."""
    return SelectorTerm(match_expressions=requirements)


def expr(key: str, operator: str, *values: str) -> Requirement:
    """A node selector requirement."""
    return Requirement(key=key, operator=operator, values=values)


def pod_term(topology_key: str, *namespaces: str, **labels: str) -> PodAffinityTerm:
    """An inter-pod term selecting pods with `labels` (matchLabels) in `namespaces` (none: the
    namespace of the pod it is given to)."""
    return PodAffinityTerm(
        selector=LabelSelector(match_labels=labels),
        namespaces=frozenset(namespaces),
        topology_key=topology_key,
    )


def spread(
    topology_key: str,
    max_skew: int = 1,
    *,
    hard: bool = True,
    min_domains: int = 1,
    honor_taints: bool = False,
    ignore_affinity: bool = False,
    **labels: str,
) -> SpreadConstraint:
    """A topology spread constraint counting pods with `labels` (DoNotSchedule unless `hard` is
    False)."""
    return SpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        hard=hard,
        selector=LabelSelector(match_labels=labels),
        min_domains=min_domains,
        honor_node_affinity=not ignore_affinity,
        honor_node_taints=honor_taints,
    )


Buildable = (
    NodeBuilder
    | PodBuilder
    | PodGroupBuilder
    | QueueBuilder
    | BudgetBuilder
    | QuotaBuilder
    | HyperNodeBuilder
)
Fact = (
    NodeFacts
    | TaskFacts
    | JobFacts
    | QueueFacts
    | NodeUsage
    | DisruptionBudget
    | ResourceQuotaFacts
    | ReservationBook
    | HyperNodeFacts
)
Item = Buildable | Fact
"""Anything `snapshot` takes."""


def snapshot(*items: Item, taken_at: dt.datetime = START) -> ClusterSnapshot:
    """A snapshot of the given objects (node order as given; the default queue added)."""
    facts = [i.build() if isinstance(i, _Builder) else i for i in items]
    tasks = {f.uid: f for f in facts if isinstance(f, TaskFacts)}
    jobs = {f.key: f for f in facts if isinstance(f, JobFacts)}
    nodes = tuple(f for f in facts if isinstance(f, NodeFacts))
    hypernodes = tuple(
        sorted((f for f in facts if isinstance(f, HyperNodeFacts)), key=lambda h: h.name)
    )
    return ClusterSnapshot(
        nodes=nodes,
        tasks=tasks,
        jobs=complete_jobs(tasks, jobs),
        queues=default_queues({f.name: f for f in facts if isinstance(f, QueueFacts)}),
        usage={f.node: f for f in facts if isinstance(f, NodeUsage)},
        disruption_budgets=tuple(f for f in facts if isinstance(f, DisruptionBudget)),
        quotas=tuple(f for f in facts if isinstance(f, ResourceQuotaFacts)),
        reservations={f.key: f for f in facts if isinstance(f, ReservationBook)},
        hypernodes=hypernodes,
        topology=build_topology(hypernodes, nodes),
        taken_at=taken_at,
    )

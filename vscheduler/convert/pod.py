"""A raw `v1` Pod becomes a `TaskFacts`.

Owns: which pods matter to this scheduler; a pod's task status (Volcano's mapping); its job
(PodGroup annotation, else a job of its own); its priority (spec.priority, else its class's,
else the global default's), preemptability (`volcano.sh/preemptable`), its own
`spec.preemptionPolicy`, index and task role (`volcano.sh/task-spec`, annotation then label),
its own resource-strategy-fit scoring (`scoring`: the two annotations and their warning);
its cooldown and PodScheduled time (`cooldown`: cdp's facts, and the cooldown's warning);
the warning a request above the scheduler's ceiling gets (`quantity.CEILING`); the warnings of
a malformed `volcano.sh/preemptable` or an empty group-name annotation (`unusual_annotations`);
`pod_request` and `qos_class` over a bare spec (the arithmetic is in `podresources`; node
placement constraints in `placement`, inter-pod ones in `podaffinity`).
A `PodConverter` reads each distinct spec once (keyed by its JSON and the namespace, without
the fields no fact reads that differ between pods of one template: the node, the service
account token's volume, the environment): most pods are made from a template, and reading
every spec was half of converting a pod. A spec read with a warning or problem (they name the
pod) is read for every pod.
Must not: look at nodes, PodGroups or Queues (a missing PodGroup is the scheduler's to report).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Hashable, Mapping
from typing import Final

import orjson

from vscheduler.convert import placement, podaffinity
from vscheduler.convert.cooldown import cooldown, scheduled_at
from vscheduler.convert.fields import (
    INT32_MAX,
    Meta,
    Raw,
    checked_int,
    choice,
    controller_owner,
    mapping,
    read_meta,
    string,
    string_map,
    timestamp,
)
from vscheduler.convert.misc import PREEMPTION_POLICIES, resolve_priority
from vscheduler.convert.podresources import (
    ListCache,
    PodResources,
    effective_request,
    qos_of,
    read_pod_resources,
    summarize,
)
from vscheduler.convert.scoring import scoring_override
from vscheduler.model.cluster import lone_job_name
from vscheduler.model.facts import (
    UNUSUAL_VALUE,
    FieldWarning,
    HostPort,
    NodeAffinity,
    PriorityClassFacts,
    TaskFacts,
    TemplateKey,
    Toleration,
    clamped,
)
from vscheduler.model.podaffinity import NO_POD_AFFINITY, PodAffinity
from vscheduler.model.quantity import over_ceiling, to_resources
from vscheduler.model.resources import Resources
from vscheduler.model.status import QoSClass, TaskStatus

GROUP_NAME_KEYS: Final = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
"""Annotations naming a pod's PodGroup, in order of precedence."""
PREEMPTABLE_KEY: Final = "volcano.sh/preemptable"
TASK_SPEC_KEY: Final = "volcano.sh/task-spec"
"""A pod's task role: the annotation, else the label (Volcano's job controller sets both)."""
COMPLETION_INDEX_KEY: Final = "batch.kubernetes.io/job-completion-index"
DEFAULT_SCHEDULER: Final = "default-scheduler"
REQUESTS_FIELD: Final = "spec.containers[*].resources.requests"
"""How a warning names a pod's effective request (its containers', init containers' and
pod-level requests and overhead, combined as Kubernetes' `PodRequests` combines them)."""

_MEMO_LIMIT: Final = 65536
_SPECS_HELD: Final = 4096
"""Distinct pod specs remembered at most (a few KiB each); past that the table starts again."""
_UNREAD_SPEC: Final = (
    "nodeName",
    "volumes",
    "hostname",
    "subdomain",
    "ephemeralContainers",
    "serviceAccountName",
    "serviceAccount",
)
"""Fields of a pod's spec that no fact reads (but `nodeName`, read per pod) and that differ
between pods of one template: left out of the spec's key (`_spec_key`). A field read from the
spec must not be here: `test_fields_left_out_of_a_specs_key_are_not_read` checks it."""
_UNREAD_CONTAINER: Final = frozenset(
    {"env", "envFrom", "volumeMounts", "volumeDevices", "command", "args", "workingDir"}
)
"""The same of a container's (or init container's) fields."""
_SPEC_KEY_OPTIONS: Final = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
"""What JSON has no word for is not written as a string it could be confused with: dates (a
YAML file's), subclasses and dataclasses raise, and the spec is read without the table."""
_PHASES: Final = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
_UNREAD_META: Final = frozenset({"resourceVersion", "managedFields"})
"""Metadata no fact of a pod reads, and which changes with every write."""


class Unread:
    """`PodConverter.restatused`'s answer when the object must be converted in full."""


UNREAD: Final = Unread()
_GO_TRUE: Final = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_GO_FALSE: Final = frozenset({"0", "f", "F", "false", "FALSE", "False"})


# --- requests and QoS ----------------------------------------------------------------------------
def pod_request(spec: Mapping[str, object], *, where: str) -> Resources:
    """The effective request of a pod spec, as Kubernetes' `PodRequests` computes it.

    Containers are summed; each init container counts as the maximum with what ran before it,
    a restartable init container (a sidecar) is added to the sum and to every later init
    container; pod-level requests of cpu, memory and hugepages replace the containers' total;
    the overhead is added. A container with a limit but no request requests its limit.
    `where` names the pod in error messages (`Pod default/p1`).
    """
    return effective_request(read_pod_resources(spec, where, ListCache()))


def qos_class(spec: Mapping[str, object], *, where: str = "Pod") -> QoSClass:
    """The QoS class of a pod spec, as Kubernetes' `ComputePodQOS` computes it."""
    return qos_of(read_pod_resources(spec, where, ListCache()))


# --- the task ------------------------------------------------------------------------------------
def convert_pod(
    obj: Mapping[str, object],
    *,
    priority_classes: Mapping[str, PriorityClassFacts],
    scheduler_name: str,
) -> TaskFacts | None:
    """The task for a raw Pod, or None when the pod does not matter to this scheduler.

    Irrelevant: a pod of another scheduler that occupies no node (pending, or finished), and a
    pod being deleted before it was placed. To convert many pods, use one `PodConverter`.
    """
    converter = PodConverter(priority_classes=priority_classes, scheduler_name=scheduler_name)
    return converter.convert(obj)


class PodConverter:
    """Converts the pods of one snapshot, sharing parsed ResourceLists between them."""

    __slots__ = ("_classes", "_lists", "_scheduler_name", "_specs", "_times", "_tolerations")

    def __init__(
        self, *, priority_classes: Mapping[str, PriorityClassFacts], scheduler_name: str
    ) -> None:
        self._classes = priority_classes
        self._scheduler_name = scheduler_name
        self._lists = ListCache()
        self._times: dict[str, dt.datetime] = {}
        self._tolerations: dict[Hashable, tuple[Toleration, ...]] = {}
        self._specs: dict[tuple[str, bytes], _SpecRead] = {}

    def convert(self, obj: Mapping[str, object]) -> TaskFacts | None:
        """As `convert_pod`."""
        meta = read_meta(obj, "Pod", namespaced=True, times=self._times)
        label = meta.label
        spec = mapping(obj, "spec", label, "")
        status = mapping(obj, "status", label, "")
        pod_scheduler = string(spec, "schedulerName", label, "spec") or DEFAULT_SCHEDULER
        node_name = string(spec, "nodeName", label, "spec") or None
        phase = choice(status, "phase", label, "status", _PHASES, "Pending")
        ours = pod_scheduler == self._scheduler_name
        task_status = _mattering_status(
            phase, ours=ours, node_name=node_name, deleting=meta.deleting
        )
        if task_status is None:
            return None
        read = self._spec(spec, meta.namespace, label)
        preemptable, opt_out = preemptable_flags(meta.annotations, meta.labels)
        scoring, scoring_warnings = scoring_override(meta.annotations, label)
        protection, cooldown_warnings = cooldown(meta.annotations, meta.labels, label)
        job, group_name = _job(meta) if ours else ("", None)
        spread = podaffinity.topology_spread(spec, meta.labels, label)
        task = TaskFacts(
            uid=meta.uid,
            namespace=meta.namespace,
            name=meta.name,
            job=job,
            group_name=group_name,
            resreq=read.resreq,
            status=task_status,
            node_name=node_name,
            scheduler_name=pod_scheduler,
            priority=read.priority,
            priority_class_name=read.class_name,
            qos=read.qos,
            preemptable=preemptable,
            preemption_opt_out=opt_out,
            preemption_policy=read.preemption_policy,
            scheduling_gated=_gated(spec),
            created=meta.created,
            index=_index(meta),
            node_selector=read.node_selector,
            affinity=read.affinity,
            tolerations=read.tolerations,
            host_ports=read.host_ports,
            pod_affinity=read.pod_affinity,
            topology_spread=spread,
            images=read.images,
            claims=_claims(spec, meta.name),
            labels=meta.labels,
            annotations=meta.annotations,
            scoring=scoring,
            task_role=task_role(meta.annotations, meta.labels),
            owner=controller_owner(obj, label),
            started=_started(status, label),
            cooldown=protection,
            scheduled_at=scheduled_at(status, label),
            nominated_node=_nominated(status) if ours else None,
            problem=read.problem,
            warnings=(
                *read.warnings,
                *scoring_warnings,
                *(unusual_annotations(meta, label) if ours else ()),
                *(cooldown_warnings if ours else ()),
            ),
        )
        if (
            scoring is None
            and not spread
            and read.pod_affinity is NO_POD_AFFINITY
            and not task.claims
        ):
            # the template key's parts are the spec's facts and the namespace: made once
            if read.template is None:
                read.template = task.template_key()
            else:
                task.adopt_template(read.template)
        return task

    def _spec(self, spec: Raw, namespace: str, label: str) -> _SpecRead:
        """What `spec` says, read once per key (`_spec_key`: the spec but what no fact reads,
        and the namespace): pods of one template (a Job's, a ReplicaSet's) share every fact
        read here. A spec read with a problem or a warning, which name the pod, is read again
        for every pod."""
        key = _spec_key(spec, namespace)
        if key is not None:
            known = self._specs.get(key)
            if known is not None:
                return known
        read = self._read_spec(spec, namespace, label)
        if key is not None and not read.problem and not read.warnings:
            if len(self._specs) >= _SPECS_HELD:
                self._specs.clear()
            self._specs[key] = read
        return read

    def _read_spec(self, spec: Raw, namespace: str, label: str) -> _SpecRead:
        resources = read_pod_resources(spec, label, self._lists)
        priority, class_name = _priority(spec, label, self._classes)
        requested, qos = summarize(resources)
        pod_affinity, problem = podaffinity.pod_affinity(spec, namespace, label)
        return _SpecRead(
            resreq=to_resources(requested),
            qos=qos,
            priority=priority,
            class_name=class_name,
            preemption_policy=choice(
                spec, "preemptionPolicy", label, "spec", PREEMPTION_POLICIES, ""
            ),
            node_selector=string_map(spec, "nodeSelector", label, "spec"),
            affinity=placement.node_affinity(spec, label),
            tolerations=self._read_tolerations(spec, label),
            host_ports=placement.host_ports(
                _ports_open(resources), label, host_network=spec.get("hostNetwork") is True
            ),
            pod_affinity=pod_affinity,
            images=placement.images(spec, label),
            problem=problem,
            warnings=clamped(over_ceiling(requested, where=f"{label}: {REQUESTS_FIELD}")),
        )

    def restatused(self, held: Raw, facts: TaskFacts, obj: Raw) -> TaskFacts | Unread | None:
        """`convert(obj)` read from `facts` (converted from `held`, no problem) when `obj`
        differs from `held` only in its status, in metadata that no fact reads (the
        resourceVersion, managedFields) and, for a pod that was on no node, in the node its
        spec now names: most watch events of a pod are its bind's (a `nodeName` and the
        PodScheduled condition) and its kubelet's (here kwok's) status writes. `UNREAD` when
        anything else differs, or the status reads oddly: the caller then converts `obj` in
        full. Of the status, `convert` reads the phase, `startTime`, `nominatedNodeName` and
        the PodScheduled condition's time only: a status field it comes to read must be read
        here too (`tests/unit/cache/test_status_events.py` compares the two)."""
        node_name = facts.node_name
        spec = obj.get("spec")
        if held.get("spec") != spec:
            node_name = _bound_now(held.get("spec"), spec)
            if node_name is None:
                return UNREAD
        if not _same_meta(held, obj):
            return UNREAD
        status = obj.get("status")
        if not isinstance(status, dict):
            return UNREAD
        phase = status.get("phase", "Pending")
        if phase not in _PHASES:
            return UNREAD
        ours = facts.scheduler_name == self._scheduler_name
        meta = obj.get("metadata")
        deleting = isinstance(meta, dict) and meta.get("deletionTimestamp") is not None
        task_status = _mattering_status(phase, ours=ours, node_name=node_name, deleting=deleting)
        if task_status is None:
            return None
        label = f"Pod {facts.namespace}/{facts.name}"
        started = _started(status, label)
        nominated = _nominated(status) if ours else None
        scheduled = scheduled_at(status, label)
        if (task_status, started, nominated, scheduled, node_name) == (
            facts.status,
            facts.started,
            facts.nominated_node,
            facts.scheduled_at,
            facts.node_name,
        ):
            return facts
        return facts.restated(
            status=task_status,
            started=started,
            nominated_node=nominated,
            scheduled_at=scheduled,
            node_name=node_name,
        )

    def _read_tolerations(self, spec: Raw, label: str) -> tuple[Toleration, ...]:
        """`spec.tolerations`, remembered by content (admission gives most pods the same)."""
        raw = spec.get("tolerations")
        if not raw or type(raw) is not list:
            return placement.tolerations(spec, label)
        key = tuple(tuple(t.items()) if type(t) is dict else t for t in raw)
        try:
            found = self._tolerations.get(key)
        except TypeError:  # an unhashable value: let the reader say what is wrong
            return placement.tolerations(spec, label)
        if found is None:
            found = placement.tolerations(spec, label)
            if len(self._tolerations) < _MEMO_LIMIT:
                self._tolerations[key] = found
        return found


@dataclasses.dataclass(slots=True, kw_only=True)
class _SpecRead:
    """The facts a pod's spec gives (but its `nodeName` and `schedulerName`, read per pod), and
    the template key of its pods without scoring annotations, inter-pod terms or spread
    constraints (made by the first such pod)."""

    resreq: Resources
    qos: QoSClass
    priority: int
    class_name: str
    preemption_policy: str
    node_selector: Mapping[str, str]
    affinity: NodeAffinity
    tolerations: tuple[Toleration, ...]
    host_ports: tuple[HostPort, ...]
    pod_affinity: PodAffinity
    images: tuple[str, ...]
    problem: str
    warnings: tuple[FieldWarning, ...]
    template: TemplateKey | None = None


def _spec_key(spec: Raw, namespace: str) -> tuple[str, bytes] | None:
    """`spec` but the fields no fact reads that differ between pods of one template
    (`_UNREAD_SPEC`, `_UNREAD_CONTAINER`: the node, the service account token's volume, named
    anew for every pod, a Volcano task's index in its environment), written as JSON, with the
    namespace (inter-pod affinity reads it): equal keys, equal facts. JSON keeps what `==`
    would not (`true` is not `1`, `1.0` is not `1`). None when the spec cannot be written so (a
    key not a string, an integer past 64 bits, a date), or holds a `null`, which is also how
    NaN and infinity are written."""
    probe = dict(spec)
    for field in _UNREAD_SPEC:
        probe.pop(field, None)
    for field in ("containers", "initContainers"):
        listed = probe.get(field)
        if type(listed) is list:
            probe[field] = [
                {k: v for k, v in c.items() if k not in _UNREAD_CONTAINER} if type(c) is dict else c
                for c in listed
            ]
    try:
        text = orjson.dumps(probe, option=_SPEC_KEY_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    return None if b"null" in text else (namespace, text)


def _ports_open(res: PodResources) -> list[tuple[Raw, str]]:
    """The containers whose ports stay open: every container and every sidecar."""
    out = [(c.raw, c.path) for c in res.containers if "ports" in c.raw]
    out.extend((c.raw, c.path) for c in res.init_containers if c.restartable and "ports" in c.raw)
    return out


def _nominated(status: Raw) -> str | None:
    """`status.nominatedNodeName`, or None when absent, empty or not a string (the API server
    writes a string; anything else is read as no nomination rather than refusing the pod)."""
    node = status.get("nominatedNodeName")
    return node if isinstance(node, str) and node else None


def _started(status: Raw, label: str) -> dt.datetime | None:
    value = status.get("startTime")
    return None if value is None else timestamp(value, label, "status.startTime")


def _mattering_status(
    phase: str, *, ours: bool, node_name: str | None, deleting: bool
) -> TaskStatus | None:
    """The pod's task status, or None when it does not matter: another scheduler's pod on no
    node or finished, or a pod deleted before it was placed."""
    if not ours and (node_name is None or phase in ("Succeeded", "Failed")):
        return None
    return _task_status(phase, node_name=node_name, deleting=deleting)


def _task_status(phase: str, *, node_name: str | None, deleting: bool) -> TaskStatus | None:
    """Volcano's mapping; None for a pod deleted before it was placed (it will never run)."""
    if deleting and phase in ("Pending", "Running"):
        return TaskStatus.RELEASING if node_name else None
    if phase == "Pending":
        return TaskStatus.BOUND if node_name else TaskStatus.PENDING
    return TaskStatus(phase)


def _job(meta: Meta) -> tuple[str, str | None]:
    for key in GROUP_NAME_KEYS:
        group = meta.annotations.get(key)
        if group:
            return f"{meta.namespace}/{group}", group
    return f"{meta.namespace}/{lone_job_name(meta.uid)}", None


def _priority(spec: Raw, label: str, classes: Mapping[str, PriorityClassFacts]) -> tuple[int, str]:
    class_name = string(spec, "priorityClassName", label, "spec")
    value = spec.get("priority")
    if value is not None:
        return checked_int(
            value, label, "spec.priority", minimum=-INT32_MAX - 1, maximum=INT32_MAX
        ), class_name
    return resolve_priority(class_name, classes)


def _claims(spec: Mapping[str, object], pod: str) -> tuple[tuple[str, bool], ...]:
    """The claims of the pod's volumes (`spec.volumes`, per pod: a StatefulSet's pods share a
    spec but not their claims): a `persistentVolumeClaim`'s `claimName`, and a generic
    `ephemeral` volume's claim `<pod>-<volume>` (Kubernetes' `ephemeral.VolumeClaimName`).
    Entries the API server would have refused are skipped."""
    volumes = spec.get("volumes")
    if not isinstance(volumes, list) or not volumes:
        return ()
    claims: list[tuple[str, bool]] = []
    for volume in volumes:
        if not isinstance(volume, Mapping):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, Mapping):
            name = source.get("claimName")
            if isinstance(name, str) and name:
                claims.append((name, False))
        elif isinstance(volume.get("ephemeral"), Mapping):
            name = volume.get("name")
            if isinstance(name, str) and name:
                claims.append((f"{pod}-{name}", True))
    return tuple(claims)


def _gated(spec: Mapping[str, object]) -> bool:
    """Whether the pod has a scheduling gate (`spec.schedulingGates`, a list the API server
    checked): an empty list, or no field, is none."""
    gates = spec.get("schedulingGates")
    return isinstance(gates, list) and len(gates) > 0


def preemptable_flags(
    annotations: Mapping[str, str], labels: Mapping[str, str]
) -> tuple[bool, bool]:
    """`(preemptable, opted out)` from `volcano.sh/preemptable`, Volcano's rule: the annotation,
    else the label, read as Go's ParseBool (malformed means false). Opted out: the key is set
    and does not read true."""
    value = annotations.get(PREEMPTABLE_KEY)
    if value is None:
        value = labels.get(PREEMPTABLE_KEY)
    preemptable = value in _GO_TRUE
    return preemptable, value is not None and not preemptable


def unusual_annotations(meta: Meta, label: str) -> tuple[FieldWarning, ...]:
    """`UNUSUAL_VALUE` warnings for annotations Volcano reads without a word though they are
    likely mistakes: a `volcano.sh/preemptable` (annotation, else label) that is not a Go
    boolean (read as false), an empty group-name annotation (read as absent)."""
    out: list[FieldWarning] = []
    for source, kind in ((meta.annotations, "annotations"), (meta.labels, "labels")):
        value = source.get(PREEMPTABLE_KEY)
        if value is None:
            continue
        if value not in _GO_TRUE and value not in _GO_FALSE:
            message = (
                f"{label}: metadata.{kind}[{PREEMPTABLE_KEY}]: {value!r} is not a boolean"
                " (true or false); it is read as false, as Volcano reads it: the pod is not"
                " preemptable, no preempt or reclaim evicts it"
            )
            out.append(FieldWarning(UNUSUAL_VALUE, message))
        break
    group = next((meta.annotations[k] for k in GROUP_NAME_KEYS if meta.annotations.get(k)), "")
    for key in GROUP_NAME_KEYS:
        if meta.annotations.get(key) == "":
            instead = (
                f"the pod belongs to PodGroup {group} (another group-name annotation)"
                if group
                else "the pod is a job of its own (minMember 1), with no PodGroup"
            )
            message = (
                f"{label}: metadata.annotations[{key}]: '' is empty; it is read as absent,"
                f" as Volcano reads it: {instead}"
            )
            out.append(FieldWarning(UNUSUAL_VALUE, message))
    return tuple(out)


def task_role(annotations: Mapping[str, str], labels: Mapping[str, str]) -> str:
    """The pod's task role, Volcano's rule (`getTaskRole`): a non-empty `volcano.sh/task-spec`
    annotation, else a non-empty label of that name, else "" (no role)."""
    return annotations.get(TASK_SPEC_KEY) or labels.get(TASK_SPEC_KEY) or ""


def _index(meta: Meta) -> int | None:
    """The completion index (annotation, then label), else the numeric end of a `a-b-3` name."""
    for source in (meta.annotations, meta.labels):
        value = source.get(COMPLETION_INDEX_KEY)
        if value is not None and _is_index(value):
            return int(value)
    name = meta.name
    if name.count("-") >= 2:
        last = name[name.rfind("-") + 1 :]
        if _is_index(last):
            return int(last)
    return None


def _is_index(text: str) -> bool:
    """ASCII digits only, short enough to be an index."""
    return 0 < len(text) <= 18 and text.isascii() and text.isdigit()


def _bound_now(held: object, spec: object) -> str | None:
    """The node `spec` names when it differs from `held` (a spec naming no node) only there:
    the pod was bound. None otherwise."""
    if type(held) is not dict or type(spec) is not dict or held.get("nodeName"):
        return None
    name = spec.get("nodeName")
    if type(name) is not str or not name or {**held, "nodeName": name} != spec:
        return None
    return name


def _same_meta(held: Raw, obj: Raw) -> bool:
    """Whether the two objects' metadata agree but for what no fact reads."""
    a, b = held.get("metadata"), obj.get("metadata")
    if type(a) is not dict or type(b) is not dict:
        return False
    if (a.keys() ^ b.keys()) - _UNREAD_META:
        return False
    return all(a[k] == b[k] for k in a if k not in _UNREAD_META)

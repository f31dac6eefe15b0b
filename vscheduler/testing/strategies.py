"""Hypothesis strategies for raw cluster objects the API server accepts, odd ones included.

Owns: raw (JSON-shaped) Nodes, Pods, PodGroups, Queues and PriorityClasses as a user or a
controller could create them: extreme and odd quantities (`1e3`, `0.0001`, `9Ei`, `1e18`,
extended resources), empty and garbage annotations (on the keys vscheduler reads too, the
resource-strategy-fit pair among them), a cooldown (label or annotation, a Go duration or not)
and a PodScheduled condition's time, task
roles by label, pods' own preemptionPolicy, odd affinity terms, tolerations and spread
constraints, PodGroups whose minMember exceeds their pods or whose minResources name unknown
resources, what Volcano's CRDs let through (minTaskMember's "" key and negative minima, a
negative minMember, negative amounts, a queue weight of 0), queues with no, huge or odd
capability, nodes without allocatable (or without any status), ResourceQuotas and
PodDisruptionBudgets with odd amounts and selectors, pods' volumes and the volume objects
(`volume_strategies`), HyperNodes (membership cycles, a node in two HyperNodes, patterns that
are no regular expression, unknown member types, tiers of 0 or below) and PodGroups'
`networkTopology`; and `clusters()`, a whole consistent set of them (unique names, pods
naming existing or missing PodGroups, queues, nodes and claims).
Must not: produce what the API server's validation rejects for the fields it validates (a
negative request, an unparsable quantity, an empty topologyKey), or import the scheduler: the
objects are raw dicts, fed to the converters and cycles by the tests.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Final

from hypothesis import strategies as st

from vscheduler.testing import volume_strategies as volumes
from vscheduler.testing.vocabulary import LABEL_KEYS, LABEL_VALUES, NAMESPACES, NODE_NAMES

Raw = dict[str, Any]
SCHEDULER: Final = "vscheduler"
QUEUE_NAMES: Final = ("q0", "q1")
GROUP_NAMES: Final = ("g0", "g1", "g2")
HYPERNODE_NAMES: Final = ("h0", "h1", "h2", "h3")
TIER_NAMES: Final = ("rack", "spine")
CLASS_NAMES: Final = ("high", "low")
"""The names a cluster draws its objects from; a reference may name one not drawn (missing)."""

ODD_QUANTITIES: Final = (
    "0",
    "1",
    "1e3",
    "0.0001",
    "1n",
    "1u",
    "500m",
    "1.5",
    "2Gi",
    "0.5Ki",
    "9Ei",
    "8Ei",
    "1e18",
    "1e16",
    "10P",
    "1E",
    "123456789012345678901234567890",
    "1e30",
    "1e2000",
    "99999999999999999999m",
    "1.000000000000000000001",
    "+5",
    "5e-3",
    "100Mi",
)
SUFFIXES: Final = (
    *("", "n", "u", "m", "k", "M", "G", "T", "P", "E"),
    *("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"),
    *("e3", "e-3", "e18", "E9", "e0"),
)
RESOURCE_NAMES: Final = (
    "cpu",
    "memory",
    "ephemeral-storage",
    "pods",
    "hugepages-2Mi",
    "nvidia.com/gpu",
    "example.com/foo",
    "vendor.io/weird-thing",
)
GARBAGE: Final = (
    "",
    " ",
    "true",
    "false",
    "0",
    "-1",
    "1h30m",
    "1hr",
    "yes",
    "Not A/Name!",
    "x" * 300,
)
ANNOTATION_KEYS: Final = (
    "scheduling.k8s.io/group-name",
    "scheduling.volcano.sh/group-name",
    "scheduling.volcano.sh/queue-name",
    "volcano.sh/preemptable",
    "volcano.sh/task-spec",
    "volcano.sh/sla-waiting-time",
    "sla-waiting-time",
    "volcano.sh/revocable-zone",
    "volcano.sh/cooldown-time",
    "batch.kubernetes.io/job-completion-index",
    "example.com/anything",
)
SCORING_TYPE_KEY: Final = "volcano.sh/resource-strategy-scoring-type"
SCORING_WEIGHT_KEY: Final = "volcano.sh/resource-strategy-weight"
SCORING_WEIGHTS: Final = (
    '{"cpu": 1, "memory": 2}',
    '{"nvidia.com/gpu": 3, "pods": 1}',
    "{}",
    '{"cpu": -2, "memory": 0}',
    '{"cpu": 1.5}',
    '{"cpu": 1e2}',
    '{"cpu": true}',
    '{"cpu": 99999999999999999999}',
    '{"cpu": NaN}',
    "null",
    "[1]",
    '"cpu"',
)
"""Values of a pod's resource-strategy-fit weights: well formed, odd, and malformed JSON."""
COOLDOWN_KEY: Final = "volcano.sh/cooldown-time"
COOLDOWNS: Final = ("60s", "10m", "1h30m", "0", "1.5m", "3us", "600abcde", "10-minutes")
"""Values of `volcano.sh/cooldown-time` a label can hold (a label value: alphanumerics, `-`, `_`,
`.`, starting and ending alphanumeric): Go durations and not."""
ANNOTATED_COOLDOWNS: Final = (
    *COOLDOWNS,
    "-5m",
    ".5s",
    "10 minutes",
    "",
    "2562047h47m16.854775807s",
)
"""And those only an annotation can hold."""
TOPOLOGY_KEYS: Final = (
    "volcano.sh/task-topology-affinity",
    "volcano.sh/task-topology-anti-affinity",
    "volcano.sh/task-topology-task-order",
)
TOPOLOGIES: Final = (
    "ps,worker",
    "ps;worker",
    "worker",
    "ps,worker;ps",
    "worker,ps;worker",
    "ps,ps",
    "",
    ";;",
    ",,",
    "ps,,worker,;",
    "ps, worker",
    "ps|worker",
    "wroker",
    "ps;worker,chief",
)
"""Values of a PodGroup's task-topology annotations: sound, empty, repeated roles, roles no pod
has, other separators (the pods' roles are `ps`, `worker` and none)."""
OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@functools.cache
def quantities() -> st.SearchStrategy[str]:
    """A non-negative quantity the API server parses: the odd ones above, or made up."""
    made = st.builds(
        lambda whole, frac, suffix: f"{whole}{'.' + frac if frac else ''}{suffix}",
        st.integers(0, 10**20).map(str),
        st.sampled_from(("", "0", "5", "0001", "123456789")),
        st.sampled_from(SUFFIXES),
    )
    return st.one_of(st.sampled_from(ODD_QUANTITIES), made)


@functools.cache
def resource_lists(
    *, names: tuple[str, ...] = RESOURCE_NAMES, signed: bool = False
) -> st.SearchStrategy[Raw]:
    """A ResourceList: resource name -> quantity (empty included). `signed`: a Volcano CRD's
    list, whose quantity pattern lets a negative amount through."""
    amount = quantities()
    if signed:
        negative = quantities().filter(lambda q: not q.startswith("+")).map(lambda q: f"-{q}")
        amount = st.one_of(amount, negative)
    return st.dictionaries(st.sampled_from(names), amount, max_size=4)


@functools.cache
def annotation_maps() -> st.SearchStrategy[dict[str, str]]:
    """Empty, garbage, or plausible values on the keys vscheduler reads (and others)."""
    value = st.one_of(st.sampled_from(GARBAGE), st.text(max_size=20))
    return st.dictionaries(st.sampled_from(ANNOTATION_KEYS), value, max_size=4)


@functools.cache
def scoring_annotations() -> st.SearchStrategy[dict[str, str]]:
    """None, one or both of a pod's resource-strategy-fit annotations, well formed or not."""
    kind = st.sampled_from(("MostAllocated", "LeastAllocated", "mostallocated", *GARBAGE[:3]))
    weights = st.one_of(st.sampled_from(SCORING_WEIGHTS), st.text(max_size=20))
    return st.fixed_dictionaries({}, optional={SCORING_TYPE_KEY: kind, SCORING_WEIGHT_KEY: weights})


@functools.cache
def cooldowns() -> st.SearchStrategy[tuple[dict[str, str], dict[str, str]]]:
    """A pod's `volcano.sh/cooldown-time`: (labels, annotations) holding none, one or both, a
    Go duration or not."""
    label = st.fixed_dictionaries({}, optional={COOLDOWN_KEY: st.sampled_from(COOLDOWNS)})
    annotation = st.fixed_dictionaries(
        {}, optional={COOLDOWN_KEY: st.sampled_from(ANNOTATED_COOLDOWNS)}
    )
    return st.tuples(label, annotation)


@functools.cache
def pod_scheduled_conditions() -> st.SearchStrategy[list[Raw]]:
    """A pod's `status.conditions`: none, or a PodScheduled one (True at a time of the first
    minutes of 2026, or without a time; or False), after a Ready one or not."""
    scheduled = st.builds(
        lambda status, when: {"type": "PodScheduled", "status": status, "lastTransitionTime": when},
        st.sampled_from(("True", "True", "False")),
        st.one_of(
            st.none(),
            st.builds("2026-01-01T00:{:02d}:{:02d}Z".format, st.integers(0, 9), st.integers(0, 59)),
        ),
    )
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": None}
    return st.one_of(
        st.just([]),
        st.lists(scheduled, min_size=1, max_size=2),
        scheduled.map(lambda c: [ready, c]),
    )


@functools.cache
def labels() -> st.SearchStrategy[dict[str, str]]:
    """A few labels from a small vocabulary (so selectors sometimes match)."""
    return st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=3)


@functools.cache
def _requirement(key_field: str = "key") -> st.SearchStrategy[Raw]:
    def build(key: str, operator: str, values: list[str], number: int) -> Raw:
        out: Raw = {key_field: key, "operator": operator}
        if operator in ("In", "NotIn"):
            out["values"] = values or ["a"]
        elif operator in ("Gt", "Lt"):
            out["values"] = [str(number)]
        return out

    return st.builds(
        build,
        st.sampled_from(LABEL_KEYS),
        st.sampled_from(OPERATORS),
        st.lists(st.sampled_from(LABEL_VALUES), max_size=3),
        st.integers(-(10**12), 10**12),
    )


@functools.cache
def _node_selector_term() -> st.SearchStrategy[Raw]:
    """A node selector term as the API server accepts it: a `matchFields` requirement is on
    `metadata.name`, In or NotIn, with exactly one value (a node that exists, or not); two of
    them in one term must both hold (`In n0` and `NotIn n1`; `In n0` and `In n1`: no node)."""
    fields = st.builds(
        lambda op, name: {"key": "metadata.name", "operator": op, "values": [name]},
        st.sampled_from(("In", "NotIn")),
        st.sampled_from(("n0", "n1", "missing")),
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "matchExpressions": st.lists(
                _requirement().filter(lambda r: r["operator"] in OPERATORS), max_size=3
            ),
            "matchFields": st.lists(fields, max_size=2),
        },
    )


@functools.cache
def _label_selector() -> st.SearchStrategy[Raw]:
    return st.fixed_dictionaries(
        {},
        optional={
            "matchLabels": labels(),
            "matchExpressions": st.lists(
                _requirement().filter(lambda r: r["operator"] not in ("Gt", "Lt")), max_size=2
            ),
        },
    )


@functools.cache
def _pod_affinity_term() -> st.SearchStrategy[Raw]:
    return st.fixed_dictionaries(
        {"topologyKey": st.sampled_from(LABEL_KEYS)},
        optional={
            "labelSelector": _label_selector(),
            "namespaces": st.lists(st.sampled_from((*NAMESPACES, "elsewhere")), max_size=2),
            "namespaceSelector": _label_selector(),
            "matchLabelKeys": st.lists(st.sampled_from(("app", "zone")), max_size=1),
        },
    )


@functools.cache
def affinities() -> st.SearchStrategy[Raw]:
    """Node affinity, pod affinity and anti-affinity, required and preferred, odd terms too."""
    weighted_term = st.builds(
        lambda w, t: {"weight": w, "podAffinityTerm": t}, st.integers(1, 100), _pod_affinity_term()
    )
    pod_side = st.fixed_dictionaries(
        {},
        optional={
            "requiredDuringSchedulingIgnoredDuringExecution": st.lists(
                _pod_affinity_term(), max_size=2
            ),
            "preferredDuringSchedulingIgnoredDuringExecution": st.lists(weighted_term, max_size=2),
        },
    )
    node_side = st.fixed_dictionaries(
        {},
        optional={
            "requiredDuringSchedulingIgnoredDuringExecution": st.builds(
                lambda terms: {"nodeSelectorTerms": terms},
                st.lists(_node_selector_term(), min_size=1, max_size=2),
            ),
            "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
                st.builds(
                    lambda w, t: {"weight": w, "preference": t},
                    st.integers(1, 100),
                    _node_selector_term(),
                ),
                max_size=2,
            ),
        },
    )
    return st.fixed_dictionaries(
        {},
        optional={"nodeAffinity": node_side, "podAffinity": pod_side, "podAntiAffinity": pod_side},
    )


@functools.cache
def _tolerations() -> st.SearchStrategy[list[Raw]]:
    toleration = st.fixed_dictionaries(
        {},
        optional={
            "key": st.sampled_from(("dedicated", "node.kubernetes.io/unreachable", "")),
            "operator": st.sampled_from(("Exists", "Equal")),
            "value": st.sampled_from(("gpu", "")),
            "effect": st.sampled_from(("NoSchedule", "PreferNoSchedule", "NoExecute", "")),
            "tolerationSeconds": st.integers(0, 10**6),
        },
    )
    return st.lists(toleration, max_size=2)


@functools.cache
def _spread() -> st.SearchStrategy[list[Raw]]:
    constraint = st.fixed_dictionaries(
        {
            "maxSkew": st.integers(1, 5),
            "topologyKey": st.sampled_from(LABEL_KEYS),
            "whenUnsatisfiable": st.sampled_from(("DoNotSchedule", "ScheduleAnyway")),
        },
        optional={
            "labelSelector": _label_selector(),
            "minDomains": st.integers(1, 5),
            "nodeAffinityPolicy": st.sampled_from(("Honor", "Ignore")),
            "nodeTaintsPolicy": st.sampled_from(("Honor", "Ignore")),
            "matchLabelKeys": st.lists(st.sampled_from(("app",)), max_size=1),
        },
    )
    return st.lists(constraint, max_size=2)


@functools.cache
def _container(name: str) -> st.SearchStrategy[Raw]:
    return st.builds(
        lambda requests, limits: {
            "name": name,
            "image": "busybox",
            "resources": {
                **({"requests": requests} if requests is not None else {}),
                **({"limits": limits} if limits is not None else {}),
            },
        },
        st.none() | resource_lists(),
        st.none() | resource_lists(),
    )


@functools.cache
def nodes() -> st.SearchStrategy[Raw]:
    """A Node (named by `clusters`): odd allocatable, no allocatable, or no status at all."""
    status = st.fixed_dictionaries(
        {},
        optional={
            "allocatable": resource_lists(),
            "capacity": resource_lists(),
            "conditions": st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(("Ready", "MemoryPressure")),
                        "status": st.sampled_from(("True", "False", "Unknown")),
                    }
                ),
                max_size=2,
            ),
        },
    )
    spec = st.fixed_dictionaries(
        {},
        optional={
            "unschedulable": st.booleans(),
            "taints": st.lists(
                st.fixed_dictionaries(
                    {
                        "key": st.sampled_from(("dedicated", "example.com/odd")),
                        "effect": st.sampled_from(("NoSchedule", "PreferNoSchedule", "NoExecute")),
                    },
                    optional={"value": st.sampled_from(("gpu", ""))},
                ),
                max_size=2,
            ),
        },
    )
    return st.builds(
        lambda lbls, ann, sp, stat: {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"labels": lbls, "annotations": ann},
            "spec": sp,
            **({"status": stat} if stat is not None else {}),
        },
        labels(),
        annotation_maps(),
        spec,
        st.none() | status,
    )


@functools.cache
def pods() -> st.SearchStrategy[Raw]:
    """A pod (named by `clusters`) of this scheduler, sometimes of another or already on a node,
    odd in every field vscheduler reads (a `status.nominatedNodeName` naming a node, a missing
    one, nothing, or not a string); it names PodGroups, queues, nodes and classes from
    the cluster's vocabulary (which may not exist)."""
    group_annotations: st.SearchStrategy[dict[str, str]] = st.one_of(
        st.just({}),
        st.sampled_from((*GROUP_NAMES, "missing-group")).map(
            lambda g: {"scheduling.k8s.io/group-name": g}
        ),
    )
    queue_annotation: st.SearchStrategy[dict[str, str]] = st.one_of(
        st.just({}),
        st.sampled_from((*QUEUE_NAMES, "missing-queue")).map(
            lambda q: {"scheduling.volcano.sh/queue-name": q}
        ),
    )
    containers = st.lists(st.sampled_from(("c0", "c1", "c2")), min_size=1, max_size=3, unique=True)
    spec = st.fixed_dictionaries(
        {
            "schedulerName": st.sampled_from(
                (SCHEDULER, SCHEDULER, SCHEDULER, "default-scheduler")
            ),
            "containers": containers.flatmap(
                lambda names: st.tuples(*(_container(n) for n in names)).map(list)
            ),
        },
        optional={
            "preemptionPolicy": st.sampled_from(("PreemptLowerPriority", "Never")),
            "initContainers": st.lists(_container("init"), max_size=1),
            "overhead": resource_lists(names=("cpu", "memory")),
            "nodeSelector": labels(),
            "affinity": affinities(),
            "tolerations": _tolerations(),
            "topologySpreadConstraints": _spread(),
            "priorityClassName": st.sampled_from((*CLASS_NAMES, "")),
            "nodeName": st.sampled_from((*NODE_NAMES, "gone-node")),
            "hostNetwork": st.booleans(),
            "volumes": volumes.pod_volumes(),
            "schedulingGates": st.lists(
                st.sampled_from(
                    ("example.com/quota", "scheduling.volcano.sh/queue-allocation-gate")
                ).map(lambda name: {"name": name}),
                max_size=2,
                unique_by=lambda gate: gate["name"],
            ),
        },
    )
    role_label: st.SearchStrategy[dict[str, str]] = st.one_of(
        st.just({}),
        st.sampled_from(("worker", "ps", "")).map(lambda r: {"volcano.sh/task-spec": r}),
    )
    nominated: st.SearchStrategy[dict[str, object]] = st.one_of(
        st.just({}),
        st.sampled_from((*NODE_NAMES, "gone-node", "")).map(lambda n: {"nominatedNodeName": n}),
        st.just({"nominatedNodeName": 7}),
    )
    return st.builds(
        lambda lbls, role, ann, scoring, grp, que, sp, phase, ts, nom, cool, conds: {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": f"2026-01-01T00:00:{ts:02d}Z",
                "labels": {**lbls, **role, **cool[0]},
                "annotations": {**ann, **scoring, **grp, **que, **cool[1]},
            },
            "spec": sp,
            "status": {
                "phase": "Running" if sp.get("nodeName") and phase == "Pending" else phase,
                **nom,
                **({"conditions": conds} if conds else {}),
            },
        },
        labels(),
        role_label,
        annotation_maps(),
        scoring_annotations(),
        group_annotations,
        queue_annotation,
        spec,
        st.sampled_from(("Pending", "Pending", "Running", "Succeeded", "Failed")),
        st.integers(0, 59),
        nominated,
        cooldowns(),
        pod_scheduled_conditions(),
    )


@functools.cache
def podgroups() -> st.SearchStrategy[Raw]:
    """A PodGroup (named by `clusters`): minMember from negative (Volcano's CRDs before 1.14) to
    far above its pods, minResources with unknown names and negative amounts, minTaskMember with
    the key "" (pods without a role) and negative minima, a queue that exists or not, garbage
    annotations, task-topology annotations sound and odd (`TOPOLOGIES`), owner references (a
    controller or not)."""
    spec = st.fixed_dictionaries(
        {"minMember": st.integers(0, 2**31 - 1) | st.integers(-2, 5)},
        optional={
            "queue": st.sampled_from((*QUEUE_NAMES, "missing-queue", "")),
            "minResources": resource_lists(
                names=(*RESOURCE_NAMES, "unknown.io/thing", "requests.cpu", "count/pods"),
                signed=True,
            ),
            "minTaskMember": st.dictionaries(
                st.sampled_from(("worker", "ps", "")), st.integers(-2, 10), max_size=2
            ),
            "priorityClassName": st.sampled_from((*CLASS_NAMES, "missing-class")),
            "networkTopology": network_topologies(),
        },
    )
    owner = st.fixed_dictionaries(
        {"apiVersion": st.just("batch.volcano.sh/v1alpha1"), "kind": st.just("Job")},
        optional={"controller": st.booleans()},
    )
    topology = st.fixed_dictionaries(
        {}, optional={key: st.sampled_from(TOPOLOGIES) for key in TOPOLOGY_KEYS}
    )
    return st.builds(
        lambda ann, topo, owners, sp, phase: {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "annotations": {**ann, **topo},
                **({"ownerReferences": owners} if owners else {}),
            },
            "spec": sp,
            **({"status": {"phase": phase}} if phase else {}),
        },
        annotation_maps(),
        topology,
        st.lists(owner, max_size=2).map(_one_controller),
        spec,
        st.sampled_from(("", "Pending", "Inqueue", "Running", "Unknown")),
    )


@functools.cache
def network_topologies() -> st.SearchStrategy[Raw]:
    """A PodGroup's `spec.networkTopology`: hard or soft (or another mode, or none: the CRD's
    default), a tier from negative to above every HyperNode's, a tier name that HyperNodes have
    or not, both or neither."""
    return st.fixed_dictionaries(
        {},
        optional={
            "mode": st.sampled_from(("hard", "soft", "strict", "")),
            "highestTierAllowed": st.integers(-2, 5),
            "highestTierName": st.sampled_from((*TIER_NAMES, "missing", "")),
        },
    )


@functools.cache
def _member_selectors() -> st.SearchStrategy[Raw]:
    """A HyperNode member's selector: none, one or two of exactMatch (a node, a HyperNode, a
    missing name, ""), regexMatch (patterns that match, match nothing, are no regular
    expression, or use Go's `\\z`) and labelMatch."""
    exact = st.sampled_from((*NODE_NAMES, *HYPERNODE_NAMES, "missing", "")).map(
        lambda name: {"name": name}
    )
    regex = st.sampled_from(("^n", "n[0-9]+", "^h", "(", "[", "n1\\z", "", "x{")).map(
        lambda pattern: {"pattern": pattern}
    )
    return st.fixed_dictionaries(
        {},
        optional={"exactMatch": exact, "regexMatch": regex, "labelMatch": _label_selector()},
    )


@functools.cache
def hypernodes() -> st.SearchStrategy[Raw]:
    """A HyperNode (named by `clusters`): a tier from negative (what Volcano's CRD refuses, as
    an older CRD or a snapshot file may hold) to 3, a tier name or none, members of type Node or
    HyperNode (or an unknown type), naming nodes and HyperNodes that exist or not, themselves
    included (cycles), nodes other HyperNodes of the tier hold too."""
    member = st.fixed_dictionaries(
        {
            "type": st.sampled_from(("Node", "Node", "HyperNode", "HyperNode", "Rack", "")),
            "selector": _member_selectors(),
        }
    )
    spec = st.fixed_dictionaries(
        {"tier": st.integers(-1, 3), "members": st.lists(member, max_size=4)},
        optional={"tierName": st.sampled_from((*TIER_NAMES, ""))},
    )
    return st.builds(
        lambda sp: {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": sp,
        },
        spec,
    )


def _one_controller(refs: list[Raw]) -> list[Raw]:
    """`refs`, each its own owner, with `controller: true` on the first that has it only, as the
    API server requires."""
    seen = False
    out = []
    for i, ref in enumerate(refs):
        ref = {**ref, "name": f"job-{i}", "uid": f"job-uid-{i}"}
        if ref.get("controller") is True:
            ref["controller"] = not seen
            seen = True
        out.append(ref)
    return out


@functools.cache
def node_group_affinities() -> st.SearchStrategy[Raw]:
    """A Queue's `spec.affinity`: empty, or naming groups (node label values, repeats and the
    empty group included) under any of its four lists."""
    groups = st.lists(st.sampled_from(LABEL_VALUES), max_size=3)
    terms = st.fixed_dictionaries(
        {},
        optional={
            "requiredDuringSchedulingIgnoredDuringExecution": groups,
            "preferredDuringSchedulingIgnoredDuringExecution": groups,
        },
    )
    return st.fixed_dictionaries(
        {}, optional={"nodeGroupAffinity": terms, "nodeGroupAntiAffinity": terms}
    )


@functools.cache
def node_group_limits() -> st.SearchStrategy[str]:
    """The `volcano.sh/nodegroup-resource-limits` annotation: group -> ResourceList as JSON
    (negative amounts included), or garbage."""
    limits = st.dictionaries(
        st.sampled_from(LABEL_VALUES), resource_lists(signed=True), max_size=3
    ).map(json.dumps)
    return st.one_of(limits, st.sampled_from((*GARBAGE, "null", "[]", '{"a": 1}')))


@functools.cache
def hierarchy_paths() -> st.SearchStrategy[str]:
    """The `volcano.sh/hierarchy` annotation: one to three levels below `root` (or without it;
    an empty level; a level some other queue names too)."""
    names = st.lists(st.sampled_from(("sci", "eng", "dev", "prod", "")), min_size=0, max_size=3)
    top = st.sampled_from(("root", "root", "sci", ""))
    return st.builds(lambda head, rest: "/".join((head, *rest)), top, names)


@functools.cache
def hierarchy_weights() -> st.SearchStrategy[str]:
    """The `volcano.sh/hierarchy-weights` annotation: one to four weights, sound or not (a
    fraction, 0, negative, no number, not finite), or empty."""
    weight = st.sampled_from(("1", "2", "8", "100", "2.5", "0.5", "0", "-1", "x", "NaN", "inf"))
    weights = st.lists(weight, min_size=1, max_size=4).map("/".join)
    return st.one_of(weights, st.just(""))


@functools.cache
def queues() -> st.SearchStrategy[Raw]:
    """A Queue (named by `clusters`): capability missing, empty, huge, negative or naming odd
    resources; odd weights, 0 included (Volcano's admission writes 1 over it; older CRDs let it
    through); node-group affinity and limits (the limits annotation malformed too); a parent
    that is another queue, itself, `root`, missing or empty (hierarchical queues: cycles and
    dangling parents included); hierarchical drf's path and weights annotations, sound or
    not."""
    spec = st.fixed_dictionaries(
        {},
        optional={
            "weight": st.integers(1, 2**31 - 1) | st.integers(0, 10),
            "capability": resource_lists(signed=True),
            "deserved": resource_lists(signed=True),
            "guarantee": resource_lists(signed=True).map(lambda r: {"resource": r}),
            "reclaimable": st.booleans(),
            "priority": st.integers(-(2**31), 2**31 - 1),
            "affinity": node_group_affinities(),
            "parent": st.sampled_from((*QUEUE_NAMES, "root", "missing-queue", "")),
        },
    )
    annotations = st.fixed_dictionaries(
        {},
        optional={
            "volcano.sh/nodegroup-resource-limits": node_group_limits(),
            "volcano.sh/hierarchy": hierarchy_paths(),
            "volcano.sh/hierarchy-weights": hierarchy_weights(),
        },
    )
    return st.builds(
        lambda sp, ann, state: {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"annotations": ann} if ann else {},
            "spec": sp,
            "status": {"state": state},
        },
        spec,
        annotations,
        st.sampled_from(("Open", "Closed", "Closing", "Unknown")),
    )


@st.composite
def queue_trees(draw: st.DrawFn, *, max_queues: int = 6) -> list[tuple[str, str]]:
    """(queue, parent) pairs of a queue tree under `root` (`t0`, `t1`, ...): mostly a tree, the
    parent drawn among the queues before it; sometimes a parent that does not exist or a later
    queue (a cycle is then possible), or none (the root's child)."""
    count = draw(st.integers(1, max_queues))
    names = [f"t{i}" for i in range(count)]
    pairs: list[tuple[str, str]] = []
    for i, name in enumerate(names):
        sound = st.sampled_from(["", "root", *names[:i]])
        odd = st.sampled_from(["missing-queue", *names])
        pairs.append((name, draw(st.one_of(sound, sound, sound, odd))))
    return pairs


QUOTA_NAMES: Final = (
    *("cpu", "memory", "pods", "requests.cpu", "requests.memory", "limits.cpu"),
    *("count/pods", "requests.nvidia.com/gpu", "requests.example.com/foo"),
)


@functools.cache
def resource_quotas() -> st.SearchStrategy[Raw]:
    """A ResourceQuota (named by `clusters`): odd hard and used amounts, with or without status."""
    status = st.fixed_dictionaries(
        {},
        optional={
            "hard": resource_lists(names=QUOTA_NAMES),
            "used": resource_lists(names=QUOTA_NAMES),
        },
    )
    return st.builds(
        lambda hard, stat: {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {},
            "spec": {"hard": hard},
            **({"status": stat} if stat is not None else {}),
        },
        resource_lists(names=QUOTA_NAMES),
        st.none() | status,
    )


@functools.cache
def disruption_budgets() -> st.SearchStrategy[Raw]:
    """A PodDisruptionBudget (named by `clusters`): any selector, with or without a status."""
    status = st.fixed_dictionaries(
        {"disruptionsAllowed": st.integers(0, 2**31 - 1) | st.integers(0, 3)},
        optional={"disruptedPods": st.dictionaries(st.sampled_from(("p0", "p1")), st.just(""))},
    )
    spec = st.fixed_dictionaries(
        {"selector": _label_selector()},
        optional={
            "minAvailable": st.integers(0, 10) | st.sampled_from(("50%", "0%", "100%")),
        },
    )
    return st.builds(
        lambda sp, stat: {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {},
            "spec": sp,
            **({"status": stat} if stat is not None else {}),
        },
        spec,
        st.none() | status,
    )


def _named(obj: Raw, name: str, uid: str, namespace: str | None = None) -> Raw:
    meta = {**obj["metadata"], "name": name, "uid": uid}
    if namespace is not None:
        meta["namespace"] = namespace
    return {**obj, "metadata": meta}


@functools.cache
def priority_classes() -> st.SearchStrategy[list[Raw]]:
    """The classes `high` and `low` (values within the API's range), `high` perhaps default."""
    return st.builds(
        lambda high, low, default: [
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high"},
                "value": high,
                "globalDefault": default,
            },
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "low"},
                "value": low,
                "preemptionPolicy": "Never",
            },
        ],
        st.integers(0, 10**9),
        st.integers(-(2**31), 10**9),
        st.booleans(),
    )


@st.composite
def clusters(draw: st.DrawFn, *, max_pods: int = 8, min_hypernodes: int = 0) -> list[Raw]:
    """A whole cluster of odd objects, names unique, in the order a snapshot file lists them:
    PriorityClasses, Namespaces, Queues, Nodes, HyperNodes, ResourceQuotas,
    PodDisruptionBudgets, PodGroups, StorageClasses, PersistentVolumes, PersistentVolumeClaims,
    Pods. Some names of the vocabulary are not drawn, so references to them are missing
    objects. `min_hypernodes`: at least that many HyperNodes (up to 4)."""
    node_names = NODE_NAMES[: draw(st.integers(0, len(NODE_NAMES)))]
    queue_names = QUEUE_NAMES[: draw(st.integers(0, len(QUEUE_NAMES)))]
    group_names = GROUP_NAMES[: draw(st.integers(0, len(GROUP_NAMES)))]
    objects: list[Raw] = list(draw(priority_classes()))
    for namespace in NAMESPACES:
        labels_ = draw(labels())
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": namespace, "labels": labels_},
            }
        )
    for name in (*queue_names, *draw(st.sampled_from(((), ("default",))))):
        objects.append(_named(draw(queues()), name, f"uid-queue-{name}"))
    for name in node_names:
        node = _named(draw(nodes()), name, f"uid-node-{name}")
        node["metadata"]["labels"] = {**node["metadata"]["labels"], "kubernetes.io/hostname": name}
        objects.append(node)
    for name in HYPERNODE_NAMES[: draw(st.integers(min_hypernodes, len(HYPERNODE_NAMES)))]:
        objects.append(_named(draw(hypernodes()), name, f"uid-hypernode-{name}"))
    for i in range(draw(st.integers(0, 2))):
        namespace = draw(st.sampled_from(NAMESPACES))
        objects.append(_named(draw(resource_quotas()), f"quota{i}", f"uid-rq-{i}", namespace))
    for i in range(draw(st.integers(0, 2))):
        namespace = draw(st.sampled_from(NAMESPACES))
        objects.append(_named(draw(disruption_budgets()), f"pdb{i}", f"uid-pdb-{i}", namespace))
    for name in group_names:
        objects.append(_named(draw(podgroups()), name, f"uid-pg-{name}", "default"))
    pods_ = []
    for i in range(draw(st.integers(0, max_pods))):
        namespace = draw(st.sampled_from(NAMESPACES))
        pods_.append(_named(draw(pods()), f"p{i}", f"uid-{namespace}-p{i}", namespace))
    objects.extend(draw(volumes.storage_objects(pods_)))
    return [*objects, *pods_]


@st.composite
def topology_jobs(draw: st.DrawFn) -> list[Raw]:
    """Up to four plain nodes and one PodGroup `default/tf` with task-topology annotations sound
    and odd (`TOPOLOGIES`), and up to eight of its pods: roles `ps`, `worker`, `chief`, none or
    an empty one, as a label or an annotation; pending, or running on a node; one cpu or so each
    (the clusters of `clusters` seldom give a topology a pending pod of every role it names)."""
    names = NODE_NAMES[: draw(st.integers(1, 4))]
    objects: list[Raw] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{name}"},
            "status": {
                "allocatable": {"cpu": draw(st.sampled_from(("2", "3", "4"))), "pods": "110"}
            },
        }
        for name in names
    ]
    value = st.sampled_from(TOPOLOGIES[:5]) | st.sampled_from(TOPOLOGIES)  # sound half the time
    annotations = draw(st.fixed_dictionaries({}, optional=dict.fromkeys(TOPOLOGY_KEYS, value)))
    objects.append(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "tf", "namespace": "default", "uid": "uid-pg-tf"}
            | {"annotations": annotations, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"minMember": draw(st.integers(0, 4))},
        }
    )
    for i in range(draw(st.integers(1, 8))):
        role = draw(st.sampled_from(("ps", "worker", "ps", "worker", "chief", "", None)))
        where = draw(st.sampled_from(("labels", "annotations")))
        node = draw(st.none() | st.sampled_from(names))
        meta: Raw = {
            "name": f"tf-{i}",
            "namespace": "default",
            "uid": f"uid-tf-{i}",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {},
            "annotations": {"scheduling.k8s.io/group-name": "tf"},
        }
        if role is not None:
            meta[where] = {**meta[where], "volcano.sh/task-spec": role}
        cpu = draw(st.sampled_from(("500m", "1", "2")))
        spec: Raw = {
            "schedulerName": SCHEDULER,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        }
        if node is not None:
            spec["nodeName"] = node
        status = {"phase": "Running" if node is not None else "Pending"}
        objects.append(
            {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}
        )
    return objects

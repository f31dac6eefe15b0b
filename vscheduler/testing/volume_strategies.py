"""Hypothesis strategies for the volume objects the API server accepts, odd ones included.

Owns: raw `v1` PersistentVolumeClaims (storageClassName set, unset or "", the beta class
annotation, a volumeName that exists or not, `volume.kubernetes.io/selected-node` naming a node
that exists or not, `pv.kubernetes.io/bind-completed`, odd positive storage requests, access
modes, Filesystem or Block, a label selector, phase Pending, Bound or Lost, being deleted,
owners), `v1` PersistentVolumes (capacity, a claimRef to a claim that exists or not, with or
without its namespace and uid, required node affinity on hostnames and node labels, class,
phase, labels, a local, hostPath or CSI source), `storage.k8s.io/v1` StorageClasses
(`kubernetes.io/no-provisioner` or a provisioner, Immediate or WaitForFirstConsumer,
allowedTopologies), a pod's `spec.volumes` (claims that exist or not, generic ephemeral volumes,
volumes of no claim), and `storage_objects`, a cluster's share of them.
Must not: produce what the API server's validation rejects (`pkg/apis/core/validation`,
`pkg/apis/storage/validation`: no access mode, a storage amount that is not positive, an empty
node selector, a capacity other than storage, duplicate topology terms), or import the
scheduler: the objects are raw dicts.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from hypothesis import strategies as st

from vscheduler.testing.vocabulary import HOSTNAME, LABEL_KEYS, LABEL_VALUES, NAMESPACES, NODE_NAMES

Raw = dict[str, Any]
CLAIM_NAMES: Final = ("data", "logs", "cache")
VOLUME_NAMES: Final = ("pv0", "pv1", "pv2", "pv3")
STORAGE_CLASS_NAMES: Final = ("fast", "late", "local")
"""The names a cluster draws its volume objects from; a reference may name one not drawn."""
CLASS_REFERENCES: Final = (*STORAGE_CLASS_NAMES, "missing-class")
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
PROVISIONERS: Final = (NO_PROVISIONER, NO_PROVISIONER, "csi.example.com", "Example.COM/Odd")
SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
BETA_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS: Final = "storageclass.kubernetes.io/is-default-class"
VOLUME_LABELS: Final = (("tier", ("gold", "silver")), ("app", ("a", "b")))
DELETED_AT: Final = "2026-01-01T00:01:00Z"
STORAGE: Final = ("1Gi", "1Gi", "2Gi", "10Gi", "500Mi", "1G")
"""Common sizes, so claims and volumes often match."""
ODD_STORAGE: Final = (
    *("1", "1n", "0.5Gi", "1.5G", "1e9", "+5Gi", "5e-3", "0.0001"),
    *("1Ei", "8Ei", "9Ei", "1e18", "1e30", "123456789012345678901234567890"),
    "99999999999999999999m",
)
"""Positive amounts the API server parses (a claim's request and a volume's capacity must be
positive)."""


@functools.cache
def storage_quantities() -> st.SearchStrategy[str]:
    """A positive storage amount: common sizes mostly, odd ones too."""
    made = st.builds(
        lambda whole, suffix: f"{whole}{suffix}",
        st.integers(1, 10**20),
        st.sampled_from(("", "k", "M", "G", "Ki", "Mi", "Gi", "Ti", "m", "e3")),
    )
    return st.one_of(st.sampled_from(STORAGE), st.sampled_from(ODD_STORAGE), made)


@functools.cache
def access_modes() -> st.SearchStrategy[list[str]]:
    """At least one mode; ReadWriteOncePod only alone."""
    shared = st.lists(
        st.sampled_from(("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")),
        min_size=1,
        max_size=3,
        unique=True,
    )
    return st.one_of(st.just(["ReadWriteOnce"]), shared, st.just(["ReadWriteOncePod"]))


@functools.cache
def _label_requirement() -> st.SearchStrategy[Raw]:
    """A label selector's requirement, as `ValidateLabelSelector` accepts it."""
    key = st.sampled_from([k for k, _ in VOLUME_LABELS])
    values = st.lists(st.sampled_from(("gold", "silver", "a")), min_size=1, max_size=2)
    return st.one_of(
        st.builds(
            lambda k, op, v: {"key": k, "operator": op, "values": v},
            key,
            st.sampled_from(("In", "NotIn")),
            values,
        ),
        st.builds(
            lambda k, op: {"key": k, "operator": op},
            key,
            st.sampled_from(("Exists", "DoesNotExist")),
        ),
    )


@functools.cache
def volume_labels() -> st.SearchStrategy[dict[str, str]]:
    """Labels a claim's selector may ask for."""
    return st.fixed_dictionaries(
        {}, optional={key: st.sampled_from(values) for key, values in VOLUME_LABELS}
    )


@functools.cache
def claim_selectors() -> st.SearchStrategy[Raw]:
    """A claim's `spec.selector`: matchLabels mostly, matchExpressions sometimes, or empty."""
    return st.fixed_dictionaries(
        {},
        optional={
            "matchLabels": volume_labels(),
            "matchExpressions": st.lists(_label_requirement(), max_size=2),
        },
    )


@functools.cache
def claims() -> st.SearchStrategy[Raw]:
    """A PersistentVolumeClaim (named by `storage_objects`)."""
    spec = st.fixed_dictionaries(
        {
            "accessModes": access_modes(),
            "resources": storage_quantities().map(lambda q: {"requests": {"storage": q}}),
        },
        optional={
            "storageClassName": st.sampled_from((*CLASS_REFERENCES, "")),
            "volumeName": st.sampled_from((*VOLUME_NAMES, "missing-pv")),
            "volumeMode": st.sampled_from(("Filesystem", "Block")),
            "selector": st.one_of(
                volume_labels().map(lambda m: {"matchLabels": m}), claim_selectors()
            ),
        },
    )
    annotations = st.fixed_dictionaries(
        {},
        optional={
            SELECTED_NODE: st.sampled_from((*NODE_NAMES, "gone-node")),
            BIND_COMPLETED: st.sampled_from(("yes", "")),
            BOUND_BY_CONTROLLER: st.just("yes"),
            BETA_CLASS: st.sampled_from((*CLASS_REFERENCES, "")),
        },
    )
    status = st.fixed_dictionaries(
        {},
        optional={
            "phase": st.sampled_from(("Pending", "Bound", "Lost")),
            "accessModes": access_modes(),
            "capacity": storage_quantities().map(lambda q: {"storage": q}),
        },
    )
    owner = st.fixed_dictionaries(
        {
            "apiVersion": st.just("apps/v1"),
            "kind": st.just("StatefulSet"),
            "name": st.just("web"),
            "uid": st.just("uid-sts-web"),
        },
        optional={"controller": st.booleans()},
    )
    return st.builds(
        lambda sp, ann, stat, owners, deleting: {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "annotations": ann,
                "finalizers": ["kubernetes.io/pvc-protection"],
                **({"ownerReferences": owners} if owners else {}),
                **({"deletionTimestamp": DELETED_AT} if deleting else {}),
            },
            "spec": sp,
            **({"status": stat} if stat else {}),
        },
        spec,
        annotations,
        status,
        st.lists(owner, max_size=1),
        st.sampled_from((False, False, False, True)),
    )


@functools.cache
def _node_requirement() -> st.SearchStrategy[Raw]:
    """A node selector requirement `ValidateNodeSelectorRequirement` accepts: a hostname In the
    cluster's nodes (or one not drawn) mostly, any label and operator too."""
    hostname = st.builds(
        lambda op, names: {"key": HOSTNAME, "operator": op, "values": names},
        st.sampled_from(("In", "In", "NotIn")),
        st.lists(st.sampled_from((*NODE_NAMES, "gone-node")), min_size=1, max_size=2, unique=True),
    )
    labelled = st.builds(
        lambda key, op, values: {"key": key, "operator": op, "values": values},
        st.sampled_from(LABEL_KEYS),
        st.sampled_from(("In", "NotIn")),
        st.lists(st.sampled_from(LABEL_VALUES), min_size=1, max_size=2),
    )
    present = st.builds(
        lambda key, op: {"key": key, "operator": op},
        st.sampled_from(LABEL_KEYS),
        st.sampled_from(("Exists", "DoesNotExist")),
    )
    numeric = st.builds(
        lambda key, op, n: {"key": key, "operator": op, "values": [str(n)]},
        st.sampled_from(LABEL_KEYS),
        st.sampled_from(("Gt", "Lt")),
        st.integers(-5, 200),
    )
    return st.one_of(hostname, hostname, labelled, present, numeric)


@functools.cache
def node_affinity_terms() -> st.SearchStrategy[list[Raw]]:
    """`nodeSelectorTerms` of a volume's required node affinity: at least one term (an empty
    term included: it matches no node), a `metadata.name` field term sometimes."""
    field = st.builds(
        lambda op, name: {"key": "metadata.name", "operator": op, "values": [name]},
        st.sampled_from(("In", "NotIn")),
        st.sampled_from((*NODE_NAMES, "gone-node")),
    )
    term = st.fixed_dictionaries(
        {},
        optional={
            "matchExpressions": st.lists(_node_requirement(), max_size=2),
            "matchFields": st.lists(field, max_size=1),
        },
    )
    on_one_node = st.sampled_from(NODE_NAMES).map(
        lambda n: {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [n]}]}
    )
    return st.lists(st.one_of(on_one_node, on_one_node, term), min_size=1, max_size=2)


@functools.cache
def _claim_refs() -> st.SearchStrategy[Raw]:
    """A volume's claimRef: to a claim of the vocabulary (or not), namespace and uid optional."""
    return st.fixed_dictionaries(
        {"kind": st.just("PersistentVolumeClaim")},
        optional={
            "namespace": st.sampled_from(NAMESPACES),
            "name": st.sampled_from((*CLAIM_NAMES, "missing-claim")),
            "uid": st.sampled_from(("uid-claim-default-data", "some-other-uid")),
        },
    )


@st.composite
def volumes(draw: st.DrawFn) -> Raw:
    """A PersistentVolume (named by `storage_objects`). A `local` volume has node affinity, as
    the API server requires."""
    source = draw(st.sampled_from(("local", "local", "hostPath", "csi")))
    spec: Raw = {
        "capacity": {"storage": draw(storage_quantities())},
        "accessModes": draw(access_modes()),
        **{
            "local": {"local": {"path": "/mnt/disks/ssd1"}},
            "hostPath": {"hostPath": {"path": "/tmp/pv"}},
            "csi": {"csi": {"driver": "csi.example.com", "volumeHandle": "handle-1"}},
        }[source],
    }
    spec.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "storageClassName": st.sampled_from((*CLASS_REFERENCES, "")),
                    "claimRef": _claim_refs(),
                    "volumeMode": st.sampled_from(("Filesystem", "Block")),
                    "persistentVolumeReclaimPolicy": st.sampled_from(("Retain", "Delete")),
                    "mountOptions": st.just(["ro"]),
                },
            )
        )
    )
    if source == "local" or draw(st.booleans()):
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": draw(node_affinity_terms())}}
    annotations = draw(
        st.fixed_dictionaries(
            {},
            optional={
                BETA_CLASS: st.sampled_from(CLASS_REFERENCES),
                "pv.kubernetes.io/provisioned-by": st.just("csi.example.com"),
            },
        )
    )
    phase = draw(st.sampled_from(("Available", "Available", "Bound", "Released", "Pending", "")))
    deleting = draw(st.sampled_from((False, False, False, True)))
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "labels": draw(volume_labels()),
            "annotations": annotations,
            **({"deletionTimestamp": DELETED_AT} if deleting else {}),
        },
        "spec": spec,
        **({"status": {"phase": phase}} if phase else {}),
    }


@st.composite
def _topology_terms(draw: st.DrawFn) -> list[Raw]:
    """`allowedTopologies`: distinct terms, each of distinct keys with distinct values."""
    keys = (HOSTNAME, "zone", "disk", "topology.kubernetes.io/zone")
    values = (*NODE_NAMES, "gone-node", "a", "b", "ssd")
    terms: list[Raw] = []
    for _ in range(draw(st.integers(1, 2))):
        chosen = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True))
        term = {
            "matchLabelExpressions": [
                {
                    "key": key,
                    "values": draw(
                        st.lists(st.sampled_from(values), min_size=1, max_size=2, unique=True)
                    ),
                }
                for key in chosen
            ]
        }
        if not any(_same_term(term, other) for other in terms):
            terms.append(term)
    return terms


def _same_term(one: Raw, other: Raw) -> bool:
    def shape(term: Raw) -> dict[str, frozenset[str]]:
        return {e["key"]: frozenset(e["values"]) for e in term["matchLabelExpressions"]}

    return shape(one) == shape(other)


@functools.cache
def storage_classes() -> st.SearchStrategy[Raw]:
    """A StorageClass (named by `storage_objects`)."""
    return st.builds(
        lambda provisioner, mode, rest, default: {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"annotations": {DEFAULT_CLASS: "true"} if default else {}},
            "provisioner": provisioner,
            "volumeBindingMode": mode,
            **rest,
        },
        st.sampled_from(PROVISIONERS),
        st.sampled_from(("Immediate", "WaitForFirstConsumer", "WaitForFirstConsumer")),
        st.fixed_dictionaries(
            {},
            optional={
                "allowedTopologies": _topology_terms(),
                "reclaimPolicy": st.sampled_from(("Delete", "Retain")),
                "parameters": st.just({"type": "ssd"}),
                "allowVolumeExpansion": st.booleans(),
            },
        ),
        st.booleans(),
    )


@functools.cache
def pod_volumes() -> st.SearchStrategy[list[Raw]]:
    """A pod's `spec.volumes` (names unique): claims of the vocabulary or missing ones (one claim
    twice included), generic ephemeral volumes, and volumes of no claim."""
    claim = st.builds(
        lambda name, claim_name, read_only: {
            "name": name,
            "persistentVolumeClaim": {"claimName": claim_name, "readOnly": read_only},
        },
        st.sampled_from(("v0", "v1", "v2")),
        st.sampled_from((*CLAIM_NAMES, "missing-claim")),
        st.booleans(),
    )
    template = st.fixed_dictionaries(
        {
            "accessModes": access_modes(),
            "resources": storage_quantities().map(lambda q: {"requests": {"storage": q}}),
        },
        optional={"storageClassName": st.sampled_from(CLASS_REFERENCES)},
    )
    ephemeral = st.builds(
        lambda name, spec: {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": spec}}},
        st.sampled_from(("scratch", "v0")),
        template,
    )
    plain = st.sampled_from(
        ({"name": "tmp", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "settings"}})
    )
    return st.lists(
        st.one_of(claim, claim, ephemeral, plain), max_size=3, unique_by=lambda v: v["name"]
    )


@functools.cache
def local_volumes() -> st.SearchStrategy[Raw]:
    """A typical pre-made local volume: class `local`, Available, on one node."""
    return st.builds(
        lambda size, node, mode: {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {},
            "spec": {
                "capacity": {"storage": size},
                "accessModes": mode,
                "storageClassName": "local",
                "local": {"path": "/mnt/disks/ssd1"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": HOSTNAME, "operator": "In", "values": [node]}
                                ]
                            }
                        ]
                    }
                },
            },
            "status": {"phase": "Available"},
        },
        st.sampled_from(STORAGE),
        st.sampled_from(NODE_NAMES),
        st.sampled_from((["ReadWriteOnce"], ["ReadWriteOnce", "ReadOnlyMany"])),
    )


@functools.cache
def waiting_claims() -> st.SearchStrategy[Raw]:
    """A typical claim waiting for its first consumer: class `local`, no volume yet."""
    return st.builds(
        lambda size: {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
                "storageClassName": "local",
            },
            "status": {"phase": "Pending"},
        },
        st.sampled_from(("1Gi", "500Mi", "2Gi")),
    )


LOCAL_CLASS: Final = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {},
    "provisioner": NO_PROVISIONER,
    "volumeBindingMode": "WaitForFirstConsumer",
}
"""The typical class of pre-made local volumes."""


def _named(obj: Raw, name: str, uid: str, namespace: str | None = None) -> Raw:
    meta = {**obj["metadata"], "name": name, "uid": uid}
    if namespace is not None:
        meta["namespace"] = namespace
    return {**obj, "metadata": meta}


def claim_uid(namespace: str, name: str) -> str:
    """The uid `storage_objects` gives a claim."""
    return f"uid-claim-{namespace}-{name}"


@st.composite
def storage_objects(draw: st.DrawFn, pods: list[Raw], *, typical: bool = False) -> list[Raw]:
    """A cluster's StorageClasses, PersistentVolumes and PersistentVolumeClaims, in that order:
    some of the vocabulary's names (so references are found or missing), claims in every
    namespace, and for `pods`' generic ephemeral volumes their claims, owned by the pod, by
    another, or not made yet. Half of them are typical pre-made local ones (`LOCAL_CLASS`,
    `local_volumes`, `waiting_claims`), so claims often find volumes; `typical`: the class
    `local` always, at least two volumes and two claims a namespace, three in four typical."""
    objects: list[Raw] = []
    class_names = draw(st.lists(st.sampled_from(STORAGE_CLASS_NAMES), max_size=3, unique=True))
    for name in sorted({*class_names, "local"}) if typical else class_names:
        local = name == "local" and (typical or draw(st.booleans()))
        made = LOCAL_CLASS if local else draw(storage_classes())
        objects.append(_named(made, name, f"uid-sc-{name}"))
    odd_volumes, odd_claims = (volumes(), claims())
    if typical:  # three in four typical
        odd_volumes = st.one_of(odd_volumes, local_volumes(), local_volumes(), local_volumes())
        odd_claims = st.one_of(odd_claims, waiting_claims(), waiting_claims(), waiting_claims())
    least = 2 if typical else 0
    for name in draw(
        st.lists(st.sampled_from(VOLUME_NAMES), min_size=least, max_size=4, unique=True)
    ):
        made = draw(st.one_of(odd_volumes, local_volumes()))
        objects.append(_named(made, name, f"uid-pv-{name}"))
    for namespace in NAMESPACES:
        names = st.lists(st.sampled_from(CLAIM_NAMES), min_size=least, max_size=3, unique=True)
        for name in draw(names):
            made = draw(st.one_of(odd_claims, waiting_claims()))
            objects.append(_named(made, name, claim_uid(namespace, name), namespace))
    for pod in pods:
        meta = pod["metadata"]
        for volume in pod["spec"].get("volumes", ()):
            if "ephemeral" not in volume:
                continue
            owned = draw(st.sampled_from(("by the pod", "by the pod", "by another", "not yet")))
            if owned == "not yet":
                continue
            name = f"{meta['name']}-{volume['name']}"
            claim = _named(
                draw(claims()), name, claim_uid(meta["namespace"], name), meta["namespace"]
            )
            owner_uid = meta["uid"] if owned == "by the pod" else "uid-some-other-pod"
            claim["metadata"]["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": owner_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ]
            objects.append(claim)
    return objects


@st.composite
def volume_clusters(draw: st.DrawFn, *, max_pods: int = 6) -> list[Raw]:
    """A cluster where volumes decide: nodes with room to spare (hostname and zone labels),
    plain pods of vscheduler needing a little cpu, most using one or two claims of the vocabulary
    (the same one twice included), and `storage_objects(typical=True)` for them."""
    objects: list[Raw] = []
    for i, name in enumerate(NODE_NAMES[: draw(st.integers(1, len(NODE_NAMES)))]):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "uid": f"uid-node-{name}",
                    "labels": {HOSTNAME: name, "zone": "ab"[i % 2]},
                },
                "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
            }
        )
    existing = st.lists(st.sampled_from(CLAIM_NAMES), min_size=1, max_size=2).map(
        lambda names: [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": name}}
            for i, name in enumerate(names)
        ]
    )
    pods: list[Raw] = []
    for i in range(draw(st.integers(1, max_pods))):
        namespace = draw(st.sampled_from(NAMESPACES))
        spec = {
            "schedulerName": "vscheduler",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
            "volumes": draw(st.one_of(pod_volumes(), existing, existing)),
        }
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"p{i}",
                    "namespace": namespace,
                    "uid": f"uid-{namespace}-p{i}",
                    "creationTimestamp": f"2026-01-01T00:00:{i:02d}Z",
                },
                "spec": spec,
                "status": {"phase": "Pending"},
            }
        )
    return [*objects, *draw(storage_objects(pods, typical=True)), *pods]

"""The kinds vscheduler watches, as data: API group, version, plural, scope.

Pure description; `vscheduler.kube` turns a Kind into URLs. The policy ConfigMap is watched
through a Kind with a namespace and a field selector on its name.
"""

from __future__ import annotations

import dataclasses
from typing import Final


@dataclasses.dataclass(frozen=True, slots=True)
class Kind:
    """One watched resource."""

    name: str
    """The kind as snapshots name it (`Pod`, `PodGroup`, ...)."""
    group: str
    version: str
    plural: str
    namespaced: bool
    namespace: str | None = None
    """Watch one namespace only (None: all namespaces)."""
    field_selector: str | None = None
    optional: bool = False
    """The cluster may not serve it (a CRD that need not be installed, or not readable by the
    scheduler's role): while its list answers 404 or 403, the informer hands the sink an empty
    list, counts as synced, and lists again now and then (`informer.Informer`)."""

    @property
    def api_version(self) -> str:
        """`v1`, `scheduling.volcano.sh/v1beta1`, ..."""
        return self.version if not self.group else f"{self.group}/{self.version}"


POD: Final = Kind("Pod", "", "v1", "pods", namespaced=True)
NODE: Final = Kind("Node", "", "v1", "nodes", namespaced=False)
NAMESPACE: Final = Kind("Namespace", "", "v1", "namespaces", namespaced=False)
RESOURCE_QUOTA: Final = Kind("ResourceQuota", "", "v1", "resourcequotas", namespaced=True)
PRIORITY_CLASS: Final = Kind(
    "PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", namespaced=False
)
PDB: Final = Kind("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", namespaced=True)
PODGROUP: Final = Kind("PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups", namespaced=True)
QUEUE: Final = Kind("Queue", "scheduling.volcano.sh", "v1beta1", "queues", namespaced=False)
HYPERNODE: Final = Kind(
    "HyperNode", "topology.volcano.sh", "v1alpha1", "hypernodes", namespaced=False, optional=True
)
"""Volcano's network topology: optional (a cluster without the CRD has no HyperNodes)."""
CLAIM: Final = Kind("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", namespaced=True)
VOLUME: Final = Kind("PersistentVolume", "", "v1", "persistentvolumes", namespaced=False)
STORAGE_CLASS: Final = Kind(
    "StorageClass", "storage.k8s.io", "v1", "storageclasses", namespaced=False
)

CLUSTER_KINDS: Final = (
    PRIORITY_CLASS,
    NAMESPACE,
    NODE,
    HYPERNODE,
    QUEUE,
    PODGROUP,
    POD,
    RESOURCE_QUOTA,
    PDB,
    STORAGE_CLASS,
    VOLUME,
    CLAIM,
)
"""Every kind the scheduling cache holds, in the order their first lists are applied."""


def config_map(namespace: str, name: str) -> Kind:
    """The Kind that watches one ConfigMap (the policy)."""
    return Kind(
        "ConfigMap",
        "",
        "v1",
        "configmaps",
        namespaced=True,
        namespace=namespace,
        field_selector=f"metadata.name={name}",
    )

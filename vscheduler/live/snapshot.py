"""`vscheduler snapshot`: the live cluster's scheduling objects, in one file `simulate` reads.

Lists, as the scheduler's own informers list them (`informer.kinds.CLUSTER_KINDS`, no selector:
every pod of every phase and scheduler, as the cache holds them), Namespaces, PriorityClasses,
Nodes (in the API server's list order, which `simulate` keeps), HyperNodes, Queues, PodGroups, Pods,
ResourceQuotas and PodDisruptionBudgets, then every ConfigMap the policy's plugins read
(`runtime.watches.config_maps_read`: the reservation plugin's), by name. The Volcano kinds are
left out, with a warning, when their CRD is not installed. `NodeUsage` has no object in the
cluster (the scheduler queries Prometheus for it) and is not written.

The file is one `kind: List` (YAML, or JSON for a `.json` name); `metadata.managedFields` is
dropped (bookkeeping of the API server, often half an object's size).

Owns: what a snapshot holds and its rendering.
Must not: write to the cluster.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Final

import yaml

from vscheduler.convert.files import SourcedObject
from vscheduler.errors import NotFoundError
from vscheduler.framework.registry import Pipeline
from vscheduler.informer import kinds
from vscheduler.informer.kinds import Kind
from vscheduler.informer.ports import Raw
from vscheduler.live.source import Source
from vscheduler.runtime.watches import config_maps_read

ORDER: Final = (
    kinds.NAMESPACE,
    kinds.PRIORITY_CLASS,
    kinds.NODE,
    kinds.HYPERNODE,
    kinds.QUEUE,
    kinds.PODGROUP,
    kinds.POD,
    kinds.RESOURCE_QUOTA,
    kinds.PDB,
    kinds.STORAGE_CLASS,
    kinds.VOLUME,
    kinds.CLAIM,
)
"""The kinds listed, in the file's order (the scheduler's informers list the same set)."""
_OPTIONAL: Final = frozenset({kinds.QUEUE.name, kinds.PODGROUP.name, kinds.HYPERNODE.name})
"""Kinds of a CRD that may be missing from the cluster."""
_DUMPER: Final = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's dumper where PyYAML has it: a large cluster's pods in seconds, not minutes."""


def take(source: Source, pipeline: Pipeline, *, warn: Callable[[str], None]) -> list[Raw]:
    """Every scheduling object of the cluster, in `ORDER`, then the ConfigMaps `pipeline` reads."""
    objects: list[Raw] = []
    for kind in ORDER:
        objects.extend(_listed(source, kind, warn))
    for namespace, name in config_maps_read(pipeline):
        found = list(_listed(source, kinds.config_map(namespace, name), warn))
        if not found:
            warn(f"ConfigMap {namespace}/{name} (read by the policy) does not exist")
        objects.extend(found)
    return [_trimmed(obj) for obj in objects]


def _listed(source: Source, kind: Kind, warn: Callable[[str], None]) -> Sequence[Raw]:
    try:
        return source.list(kind)
    except NotFoundError:
        if kind.name not in _OPTIONAL:
            raise
        warn(f"the cluster has no {kind.plural}.{kind.group} (CRD not installed): none written")
        return ()


def _trimmed(obj: Raw) -> Raw:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        return {**obj, "metadata": meta}
    return obj


def document(objects: Sequence[Raw]) -> dict[str, object]:
    """The objects as one `kind: List`."""
    return {"apiVersion": "v1", "kind": "List", "items": list(objects)}


def render(objects: Sequence[Raw], fmt: str) -> str:
    """The snapshot as `yaml` or `json` text."""
    doc = document(objects)
    if fmt == "json":
        return json.dumps(doc, indent=1) + "\n"
    return str(yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=120))


def sourced(objects: Sequence[Raw]) -> list[SourcedObject]:
    """The objects as `simulate` reads them, each named `cluster: Pod ns/name` in errors."""
    out = []
    for obj in objects:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        name = str(meta.get("name", "?"))
        if meta.get("namespace"):
            name = f"{meta['namespace']}/{name}"
        out.append(SourcedObject(f"cluster: {obj.get('kind')} {name}", obj))
    return out

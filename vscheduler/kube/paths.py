"""REST paths of the API server: a `Kind` (or a group/version/plural) becomes a URL path.

Pure string work; names are percent-quoted so a strange name cannot escape its segment.
"""

from __future__ import annotations

from urllib.parse import quote

from vscheduler.informer.kinds import Kind


def group_prefix(group: str, version: str) -> str:
    """`/api/v1` for the core group, `/apis/{group}/{version}` otherwise."""
    return f"/api/{version}" if not group else f"/apis/{group}/{version}"


def collection_path(kind: Kind) -> str:
    """Where to list and watch `kind`: all namespaces unless the Kind names one."""
    prefix = group_prefix(kind.group, kind.version)
    if kind.namespaced and kind.namespace:
        return f"{prefix}/namespaces/{_q(kind.namespace)}/{kind.plural}"
    return f"{prefix}/{kind.plural}"


def object_path(
    group: str,
    version: str,
    plural: str,
    name: str,
    *,
    namespace: str | None = None,
    subresource: str | None = None,
) -> str:
    """The path of one object (or of one of its subresources)."""
    path = group_prefix(group, version)
    if namespace is not None:
        path += f"/namespaces/{_q(namespace)}"
    path += f"/{plural}/{_q(name)}"
    return f"{path}/{subresource}" if subresource else path


def namespaced_collection(group: str, version: str, plural: str, namespace: str) -> str:
    """The collection path of a namespaced resource in one namespace (to create into)."""
    return f"{group_prefix(group, version)}/namespaces/{_q(namespace)}/{plural}"


def pod_path(namespace: str, name: str, subresource: str | None = None) -> str:
    """`/api/v1/namespaces/{ns}/pods/{name}[/{subresource}]`."""
    return object_path("", "v1", "pods", name, namespace=namespace, subresource=subresource)


def _q(segment: str) -> str:
    return quote(segment, safe="")

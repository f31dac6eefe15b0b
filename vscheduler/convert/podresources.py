"""Kubernetes' arithmetic over a raw pod spec's resources: PodRequests and ComputePodQOS.

Owns: reading the containers' requests and limits (a limit stands in for a missing request, as
API-server defaulting does), pod-level resources and overhead, exactly in nano-units; the
effective request (containers summed; init containers as a running maximum, sidecars carried
into it; pod-level requests; overhead) and the QoS class; a cache of parsed ResourceLists that
pods stamped from one template share.
Must not: read anything but `spec` resources and container restart policies.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Final, NamedTuple

from vscheduler.convert.fields import Raw, as_mapping, choice, items, mapping
from vscheduler.model.quantity import parse_resource_nanos, to_resources
from vscheduler.model.resources import CPU, MEMORY, Resources
from vscheduler.model.status import QoSClass

_POD_LEVEL: Final = (CPU, MEMORY)
_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
_CACHE_LIMIT: Final = 65536
_NOTHING: Final[Mapping[str, int]] = MappingProxyType({})


class ListCache:
    """ResourceLists parsed so far, by content, for one conversion run.

    Pods stamped from one template repeat the same lists; only lists whose amounts are all
    strings are remembered (so `1` and `true` never share an entry). Results are shared and
    must not be mutated.
    """

    __slots__ = ("_containers", "_lists")

    def __init__(self) -> None:
        self._lists: dict[Hashable, Mapping[str, int]] = {}
        self._containers: dict[Hashable, tuple[Mapping[str, int], Mapping[str, int]]] = {}

    def parse(self, raw: object, label: str, path: str) -> Mapping[str, int]:
        """The exact nano-unit amounts of the ResourceList `raw` at `path` (shared; read only)."""
        if raw is None:
            return _NOTHING
        key = _content_key(raw)
        try:
            found = None if key is None else self._lists.get(key)
        except TypeError:  # an unhashable amount: the parser says what is wrong
            key = found = None
        if found is None:
            found = parse_resource_nanos(raw, where=f"{label}: {path}")
            if key is not None and _all_text(key) and len(self._lists) < _CACHE_LIMIT:
                self._lists[key] = found
        return found

    def container(
        self, raw: object, label: str, path: str
    ) -> tuple[Mapping[str, int], Mapping[str, int]]:
        """(requests, limits) of a container's `resources`, a limit standing in for a request."""
        if type(raw) is not dict:
            raw = mapping({"resources": raw}, "resources", label, path)
        requests_raw = raw.get("requests")
        limits_raw = raw.get("limits")
        requests_key = () if requests_raw is None else _content_key(requests_raw)
        limits_key = () if limits_raw is None else _content_key(limits_raw)
        key = None if requests_key is None or limits_key is None else (requests_key, limits_key)
        try:
            found = None if key is None else self._containers.get(key)
        except TypeError:  # an unhashable amount: the parser says what is wrong
            key = found = None
        if found is None:
            requests = self.parse(requests_raw, label, f"{path}.resources.requests")
            limits = self.parse(limits_raw, label, f"{path}.resources.limits")
            if limits.keys() - requests.keys():
                requests = {**limits, **requests}
            found = (requests, limits)
            if (
                key is not None
                and _all_text(key[0])
                and _all_text(key[1])
                and len(self._containers) < _CACHE_LIMIT
            ):
                self._containers[key] = found
        return found


def _content_key(raw: object) -> tuple[tuple[str, object], ...] | None:
    """The items of a ResourceList given as a dict, else None.

    Only keys whose amounts are all strings are ever stored, and a string equals no other
    type, so a hit is always a list of string amounts (`1` and `true` never share an entry).
    """
    return tuple(raw.items()) if type(raw) is dict else None


def _all_text(key: tuple[tuple[str, object], ...]) -> bool:
    return all(type(amount) is str for _, amount in key)


class Container(NamedTuple):
    """One container of a pod spec, with its resources read."""

    raw: Raw
    list_key: str
    """`containers` or `initContainers`."""
    position: int
    requests: Mapping[str, int]
    """Exact nano-unit requests, a limit standing in for a missing request (read only)."""
    limits: Mapping[str, int]
    restartable: bool
    """`restartPolicy: Always` (a sidecar, when it is an init container)."""

    @property
    def path(self) -> str:
        """`spec.containers[0]`, for messages."""
        return f"spec.{self.list_key}[{self.position}]"


class PodResources(NamedTuple):
    """The resource-bearing parts of a pod spec, exactly (read only)."""

    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    pod_requests: Mapping[str, int]
    """Pod-level requests of the supported resources (after defaulting), or empty."""
    pod_limits: Mapping[str, int]
    overhead: Mapping[str, int]


def read_pod_resources(spec: Raw, label: str, lists: ListCache) -> PodResources:
    """The containers, pod-level resources and overhead of `spec`; `label` names the pod."""
    containers = _containers(spec, "containers", label, lists)
    init_containers = _containers(spec, "initContainers", label, lists)
    pod_requests: dict[str, int] = {}
    pod_limits: dict[str, int] = {}
    if spec.get("resources") is not None:
        level = mapping(spec, "resources", label, "spec")
        pod_requests = _pod_level(
            lists.parse(level.get("requests"), label, "spec.resources.requests")
        )
        pod_limits = _pod_level(lists.parse(level.get("limits"), label, "spec.resources.limits"))
        stated = {n for c in (*containers, *init_containers) for n in c.requests}
        for name, amount in pod_limits.items():
            if name not in pod_requests and name not in stated:
                pod_requests[name] = amount
    overhead = _NOTHING
    if spec.get("overhead") is not None:
        overhead = lists.parse(spec["overhead"], label, "spec.overhead")
    return PodResources(containers, init_containers, pod_requests, pod_limits, overhead)


def _pod_level(amounts: Mapping[str, int]) -> dict[str, int]:
    """Only cpu, memory and hugepages are pod-level resources."""
    return {n: a for n, a in amounts.items() if n in _POD_LEVEL or n.startswith("hugepages-")}


def _containers(spec: Raw, key: str, label: str, lists: ListCache) -> tuple[Container, ...]:
    raws = spec.get(key)
    if raws is None:
        return ()
    if type(raws) is not list:
        raws = items(spec, key, label, "spec")
    out = []
    for i, raw in enumerate(raws):
        container = raw if type(raw) is dict else as_mapping(raw, label, f"spec.{key}[{i}]")
        resources = container.get("resources")
        requests = limits = _NOTHING
        if resources is not None:
            requests, limits = lists.container(resources, label, f"spec.{key}[{i}]")
        policy = container.get("restartPolicy")
        if policy is not None:
            policy = choice(
                container, "restartPolicy", label, f"spec.{key}[{i}]", _RESTART_POLICIES, ""
            )
        out.append(Container(container, key, i, requests, limits, policy == "Always"))
    return tuple(out)


def summarize(res: PodResources) -> tuple[Mapping[str, int], QoSClass]:
    """(`effective_nanos`, `qos_of`) in one pass over the containers of a plain pod."""
    if res.init_containers or res.pod_requests or res.pod_limits or res.overhead:
        return effective_nanos(res), qos_of(res)
    total: dict[str, int] = {}
    cpu_requested = memory_requested = cpu_limited = memory_limited = 0
    guaranteed = True
    for container in res.containers:
        requests = container.requests
        for name, amount in requests.items():
            total[name] = total.get(name, 0) + amount
        cpu_requested += requests.get(CPU, 0)
        memory_requested += requests.get(MEMORY, 0)
        limits = container.limits
        cpu = limits.get(CPU, 0)
        memory = limits.get(MEMORY, 0)
        cpu_limited += cpu
        memory_limited += memory
        guaranteed = guaranteed and cpu > 0 and memory > 0
    return total, _qos_class(
        guaranteed, (cpu_requested, memory_requested), (cpu_limited, memory_limited)
    )


def effective_request(res: PodResources) -> Resources:
    """Kubernetes' `PodRequests`: what the scheduler must find free on a node."""
    return to_resources(effective_nanos(res))


def effective_nanos(res: PodResources) -> dict[str, int]:
    """`effective_request` exactly, in nano-units (before the scheduler's ceiling)."""
    total: dict[str, int] = {}
    for container in res.containers:
        _add(total, container.requests)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in res.init_containers:
        if container.restartable:
            _add(total, container.requests)
            _add(sidecars, container.requests)
            _max(init_peak, sidecars)
        else:
            running = dict(container.requests)
            _add(running, sidecars)
            _max(init_peak, running)
    _max(total, init_peak)
    total.update(res.pod_requests)
    _add(total, res.overhead)
    return total


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def _max(total: dict[str, int], other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if name not in total or amount > total[name]:
            total[name] = amount


def qos_of(res: PodResources) -> QoSClass:
    """Kubernetes' `ComputePodQOS` over cpu and memory (requests already defaulted).

    Amounts are never negative here (the parser rejects them), so "> 0" is "non-zero".
    """
    pairs: Sequence[tuple[Mapping[str, int], Mapping[str, int] | None]]
    if res.pod_requests or res.pod_limits:
        pairs = ((res.pod_requests, res.pod_limits or None),)
    else:
        pairs = [(c.requests, c.limits) for c in (*res.containers, *res.init_containers)]
    cpu_requested = memory_requested = cpu_limited = memory_limited = 0
    guaranteed = True
    for requests, limits in pairs:
        cpu_requested += requests.get(CPU, 0)
        memory_requested += requests.get(MEMORY, 0)
        if limits is None:  # pod-level requests without pod-level limits
            continue
        cpu = limits.get(CPU, 0)
        memory = limits.get(MEMORY, 0)
        cpu_limited += cpu
        memory_limited += memory
        guaranteed = guaranteed and cpu > 0 and memory > 0
    return _qos_class(guaranteed, (cpu_requested, memory_requested), (cpu_limited, memory_limited))


def _qos_class(guaranteed: bool, requested: tuple[int, int], limited: tuple[int, int]) -> QoSClass:
    """Guaranteed: every container limits cpu and memory, and requests equal limits."""
    if not any(requested) and not any(limited):
        return QoSClass.BEST_EFFORT
    if guaranteed and requested == limited:
        return QoSClass.GUARANTEED
    return QoSClass.BURSTABLE

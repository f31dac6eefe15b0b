"""`LeaseClient`: get, create and update one `coordination.k8s.io/v1` Lease, in raw JSON.

The API calls of leader election, not the algorithm (that lives with whoever elects). Updates
carry the resourceVersion of the record they replace, so two replicas racing for the lease
cannot both win: the loser gets a `ConflictError` (409). A `create` racing another replica's
also answers 409. Times are `MicroTime` (RFC 3339 with microseconds, UTC).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from vscheduler.errors import ClusterError, NotFoundError
from vscheduler.kube.client import KubeApi
from vscheduler.kube.paths import namespaced_collection, object_path

_GROUP, _VERSION, _PLURAL = "coordination.k8s.io", "v1", "leases"


@dataclasses.dataclass(frozen=True, slots=True)
class LeaseRecord:
    """A Lease's spec, and the resourceVersion it was read at ("" for a new one)."""

    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: dt.datetime | None = None
    renew_time: dt.datetime | None = None
    lease_transitions: int = 0
    resource_version: str = ""


class LeaseClient:
    """The API calls on the Lease `namespace/name`."""

    def __init__(self, api: KubeApi, namespace: str, name: str) -> None:
        self._api = api
        self._namespace = namespace
        self._name = name

    @property
    def path(self) -> str:
        """The Lease's URL path."""
        return object_path(_GROUP, _VERSION, _PLURAL, self._name, namespace=self._namespace)

    def get(self) -> LeaseRecord | None:
        """The Lease as stored, or None when there is none."""
        try:
            return parse_lease(self._api.request("GET", self.path))
        except NotFoundError:
            return None

    def create(self, record: LeaseRecord) -> LeaseRecord:
        """Create the Lease (ConflictError when another replica created it first)."""
        collection = namespaced_collection(_GROUP, _VERSION, _PLURAL, self._namespace)
        return parse_lease(self._api.request("POST", collection, body=self._body(record)))

    def update(self, record: LeaseRecord) -> LeaseRecord:
        """Replace the Lease if it is still at `record.resource_version` (else ConflictError)."""
        if not record.resource_version:
            raise ValueError("updating a Lease needs the resourceVersion it was read at")
        return parse_lease(self._api.request("PUT", self.path, body=self._body(record)))

    def _body(self, record: LeaseRecord) -> dict[str, object]:
        metadata: dict[str, object] = {"name": self._name, "namespace": self._namespace}
        if record.resource_version:
            metadata["resourceVersion"] = record.resource_version
        spec: dict[str, object] = {"leaseTransitions": record.lease_transitions}
        if record.holder_identity is not None:
            spec["holderIdentity"] = record.holder_identity
        if record.lease_duration_seconds is not None:
            spec["leaseDurationSeconds"] = record.lease_duration_seconds
        if record.acquire_time is not None:
            spec["acquireTime"] = format_micro_time(record.acquire_time)
        if record.renew_time is not None:
            spec["renewTime"] = format_micro_time(record.renew_time)
        return {
            "apiVersion": f"{_GROUP}/{_VERSION}",
            "kind": "Lease",
            "metadata": metadata,
            "spec": spec,
        }


def parse_lease(doc: dict[str, Any]) -> LeaseRecord:
    """A Lease object as a LeaseRecord (ClusterError if the server sent something malformed)."""
    metadata, spec = _mapping(doc, "metadata"), _mapping(doc, "spec")
    holder, duration = spec.get("holderIdentity"), spec.get("leaseDurationSeconds")
    transitions = spec.get("leaseTransitions") or 0
    if not (holder is None or isinstance(holder, str)):
        raise ClusterError(f"Lease spec.holderIdentity is not a string: {holder!r}")
    if not (duration is None or isinstance(duration, int)) or not isinstance(transitions, int):
        raise ClusterError("Lease spec.leaseDurationSeconds / leaseTransitions are not integers")
    return LeaseRecord(
        holder_identity=holder,
        lease_duration_seconds=duration,
        acquire_time=parse_micro_time(spec.get("acquireTime"), "acquireTime"),
        renew_time=parse_micro_time(spec.get("renewTime"), "renewTime"),
        lease_transitions=transitions,
        resource_version=str(metadata.get("resourceVersion") or ""),
    )


def _mapping(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def format_micro_time(when: dt.datetime) -> str:
    """`2024-05-01T12:00:00.000000Z` (naive datetimes are taken as UTC)."""
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(value: object, field: str) -> dt.datetime | None:
    """A MicroTime (or Time) string as an aware UTC datetime; None when absent."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ClusterError(f"Lease spec.{field} is not a string: {value!r}")
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError as exc:
        raise ClusterError(f"Lease spec.{field} is not an RFC 3339 time: {value!r}") from exc
    return parsed.replace(tzinfo=dt.UTC) if parsed.tzinfo is None else parsed.astimezone(dt.UTC)

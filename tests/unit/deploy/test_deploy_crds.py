"""deploy/crds: Volcano's PodGroup and Queue, structural, with Volcano's field set.

The schemas are checked the way the API server applies them (types, enums, int-or-string,
unknown fields pruned) against Volcano-style objects (volcano-samples.yaml) and every PodGroup and
Queue in examples/: each fits with nothing pruned. integration/test_deploy.py does the same on a
real API server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "deploy" / "crds"
SAMPLES = Path(__file__).with_name("volcano-samples.yaml")
TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "boolean": bool,
}


def crd(plural: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(
        (CRDS / f"scheduling.volcano.sh_{plural}.yaml").read_text()
    )
    return loaded


def schema_of(kind: str) -> dict[str, Any]:
    (version,) = crd({"PodGroup": "podgroups", "Queue": "queues"}[kind])["spec"]["versions"]
    found: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return found


def problems(value: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
    """What the API server would prune or refuse in `value` under a structural `schema`."""
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, int | str):
            yield f"{path}: not an integer or string: {value!r}"
        return
    kind = schema["type"]
    if isinstance(value, bool) != (kind == "boolean") or not isinstance(value, TYPES[kind]):
        yield f"{path}: not {kind}: {value!r}"
        return
    if "enum" in schema and value not in schema["enum"]:
        yield f"{path}: {value!r} not one of {schema['enum']}"
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from problems(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict) and not path.endswith(".metadata"):
        yield from fields(value, schema, path)


def fields(value: dict[str, Any], schema: dict[str, Any], path: str) -> Iterator[str]:
    for key, item in value.items():
        if key in schema.get("properties", {}):
            yield from problems(item, schema["properties"][key], f"{path}.{key}")
        elif "additionalProperties" in schema:
            yield from problems(item, schema["additionalProperties"], f"{path}.{key}")
        else:
            yield f"{path}.{key}: unknown field (pruned)"


def unstructural(schema: dict[str, Any], path: str) -> Iterator[str]:
    """Nodes without a type: the API server refuses such a CRD."""
    if not (schema.get("type") or schema.get("x-kubernetes-int-or-string")):
        yield path
    for key, child in schema.get("properties", {}).items():
        yield from unstructural(child, f"{path}.{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from unstructural(schema[key], f"{path}.{key}")


def volcano_objects() -> list[dict[str, Any]]:
    found = [d for d in yaml.safe_load_all(SAMPLES.read_text()) if d]
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") in ("PodGroup", "Queue"):
                found.append(doc)
    return found


@pytest.mark.parametrize(
    "obj", volcano_objects(), ids=lambda o: f"{o['kind']}/{o['metadata']['name']}"
)
def test_a_volcano_object_fits_the_crd_with_nothing_pruned(obj: dict[str, Any]) -> None:
    assert list(problems(obj, schema_of(obj["kind"]), obj["kind"])) == []


@pytest.mark.parametrize("kind", ["PodGroup", "Queue"])
def test_the_schema_is_structural(kind: str) -> None:
    assert list(unstructural(schema_of(kind), kind)) == []


@pytest.mark.parametrize(
    ("kind", "spec", "expected"),
    [
        ("PodGroup", {"minMembers": 2}, ["PodGroup.spec.minMembers: unknown field (pruned)"]),
        ("PodGroup", {"minMember": "two"}, ["PodGroup.spec.minMember: not integer: 'two'"]),
        (
            "PodGroup",
            {"networkTopology": {"mode": "strict"}},
            ["PodGroup.spec.networkTopology.mode: 'strict' not one of ['hard', 'soft']"],
        ),
        ("Queue", {"reclaimable": "yes"}, ["Queue.spec.reclaimable: not boolean: 'yes'"]),
        (
            "Queue",
            {"capability": {"cpu": True}},
            ["Queue.spec.capability.cpu: not an integer or string: True"],
        ),
    ],
)
def test_a_malformed_field_is_found(kind: str, spec: dict[str, Any], expected: list[str]) -> None:
    assert list(problems({"spec": spec}, schema_of(kind), kind)) == expected


@pytest.mark.parametrize(
    ("plural", "columns"),
    [
        (
            "podgroups",
            [
                ("STATUS", ".status.phase"),
                ("minMember", ".spec.minMember"),
                ("RUNNINGS", ".status.running"),
                ("AGE", ".metadata.creationTimestamp"),
                ("QUEUE", ".spec.queue"),
            ],
        ),
        (
            "queues",
            [
                ("PARENT", ".spec.parent"),
                ("WEIGHT", ".spec.weight"),
                ("AGE", ".metadata.creationTimestamp"),
            ],
        ),
    ],
)
def test_the_printer_columns_show_declared_fields(
    plural: str, columns: list[tuple[str, str]]
) -> None:
    (version,) = crd(plural)["spec"]["versions"]
    shown = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert shown == columns
    schema = version["schema"]["openAPIV3Schema"]
    for _, json_path in shown:
        section, field = json_path.strip(".").split(".")
        if section != "metadata":  # metadata's fields are the API server's own
            assert field in schema["properties"][section]["properties"], json_path


@pytest.mark.parametrize(
    ("plural", "names", "scope"),
    [
        ("podgroups", ("PodGroup", "podgroup", ["pg", "podgroup-v1beta1"]), "Namespaced"),
        ("queues", ("Queue", "queue", ["q", "queue-v1beta1"]), "Cluster"),
    ],
)
def test_names_scope_version_and_status_subresource_are_volcanos(
    plural: str, names: tuple[str, str, list[str]], scope: str
) -> None:
    spec = crd(plural)["spec"]
    assert spec["group"] == "scheduling.volcano.sh"
    assert (spec["names"]["kind"], spec["names"]["singular"], spec["names"]["shortNames"]) == names
    assert spec["names"]["plural"] == plural
    assert spec["scope"] == scope
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1beta1", True, True)
    assert version["subresources"] == {"status": {}}


def test_the_defaults_are_the_ones_volcano_gives() -> None:
    podgroup = schema_of("PodGroup")["properties"]["spec"]["properties"]
    queue = schema_of("Queue")["properties"]["spec"]["properties"]
    assert podgroup["queue"]["default"] == "default"
    assert (queue["weight"]["default"], queue["reclaimable"]["default"]) == (1, True)

"""deploy/crds: Volcano's PodGroup and Queue, structural, with Volcano's field set.

The schemas are checked the way the API server applies them (types, enums, int-or-string,
Kubernetes' quantity pattern, minimums, unknown fields pruned) against Volcano-style objects
(volcano-samples.yaml) and every PodGroup and Queue in examples/: each fits with nothing pruned.
integration/test_deploy.py does the same on a real API server, and
integration/test_crd_validation.py shows it refusing what the schemas refuse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "deploy" / "crds"
SAMPLES = Path(__file__).with_name("volcano-samples.yaml")
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
    r"|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""The pattern Kubernetes (and Volcano's CRDs, generated from resource.Quantity) gives quantities."""
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
        elif isinstance(value, str) and not re.search(schema.get("pattern", ""), value):
            yield f"{path}: {value!r} does not match the pattern"
        return
    kind = schema["type"]
    if isinstance(value, bool) != (kind == "boolean") or not isinstance(value, TYPES[kind]):
        yield f"{path}: not {kind}: {value!r}"
        return
    if "minimum" in schema and isinstance(value, int) and value < schema["minimum"]:
        yield f"{path}: {value} is less than the minimum {schema['minimum']}"
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
        ("Queue", {"weight": 0}, ["Queue.spec.weight: 0 is less than the minimum 1"]),
        ("PodGroup", {"minMember": -1}, ["PodGroup.spec.minMember: -1 is less than the minimum 0"]),
        (
            "PodGroup",
            {"minResources": {"cpu": "abc"}},
            ["PodGroup.spec.minResources.cpu: 'abc' does not match the pattern"],
        ),
        (
            "Queue",
            {"guarantee": {"resource": {"memory": "1 Gi"}}},
            ["Queue.spec.guarantee.resource.memory: '1 Gi' does not match the pattern"],
        ),
    ],
)
def test_a_malformed_field_is_found(kind: str, spec: dict[str, Any], expected: list[str]) -> None:
    assert list(problems({"spec": spec}, schema_of(kind), kind)) == expected


def quantity_nodes(schema: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every int-or-string node of a schema: each is a resource quantity."""
    if schema.get("x-kubernetes-int-or-string"):
        yield path, schema
    for key, child in schema.get("properties", {}).items():
        yield from quantity_nodes(child, f"{path}.{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from quantity_nodes(schema[key], f"{path}.{key}")


@pytest.mark.parametrize("kind", ["PodGroup", "Queue"])
def test_every_quantity_carries_the_kubernetes_quantity_pattern(kind: str) -> None:
    found = dict(quantity_nodes(schema_of(kind), kind))
    assert found  # minResources; capability, deserved, guarantee, allocated, ...
    assert {path: node.get("pattern") for path, node in found.items()} == dict.fromkeys(
        found, QUANTITY_PATTERN
    )


@pytest.mark.parametrize(
    "text", ["1", "500m", "1.5Gi", "+2", "-1", ".5", "1e3", "2E-3", "0.1k", "128974848"]
)
def test_the_quantity_pattern_admits_what_kubernetes_parses(text: str) -> None:
    assert re.search(QUANTITY_PATTERN, text)


@pytest.mark.parametrize("text", ["abc", "lots", "1 Gi", "1Gb", "1.2.3", "", "Gi", "1ii"])
def test_the_quantity_pattern_refuses_what_is_no_quantity(text: str) -> None:
    assert not re.search(QUANTITY_PATTERN, text)


def test_weight_and_min_member_have_volcanos_lower_bounds() -> None:
    podgroup = schema_of("PodGroup")["properties"]["spec"]["properties"]
    queue = schema_of("Queue")["properties"]["spec"]["properties"]
    assert (queue["weight"]["minimum"], podgroup["minMember"]["minimum"]) == (1, 0)


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


HYPERNODE_CRD = CRDS / "topology.volcano.sh_hypernodes.yaml"


def test_the_hypernode_crd_is_volcanos_own_after_its_header() -> None:
    """Copied unchanged from volcano-sh/volcano's config/crd/volcano/bases (cluster-scoped,
    v1alpha1); the Helm chart's copy is the same file."""
    text = HYPERNODE_CRD.read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    found: dict[str, Any] = yaml.safe_load(body)
    assert found["metadata"]["name"] == "hypernodes.topology.volcano.sh"
    assert found["spec"]["scope"] == "Cluster"
    assert [v["name"] for v in found["spec"]["versions"]] == ["v1alpha1"]
    chart = ROOT / "deploy" / "helm" / "vscheduler" / "crds" / HYPERNODE_CRD.name
    assert chart.read_text() == text


def test_the_example_hypernodes_fit_the_crd_with_nothing_pruned() -> None:
    (version,) = yaml.safe_load(HYPERNODE_CRD.read_text())["spec"]["versions"]
    schema = version["schema"]["openAPIV3Schema"]
    examples = [
        doc
        for path in sorted((ROOT / "examples").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict) and doc.get("kind") == "HyperNode"
    ]
    assert examples
    for obj in examples:
        assert list(problems(obj, schema, "HyperNode")) == []

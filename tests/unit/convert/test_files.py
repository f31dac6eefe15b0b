from __future__ import annotations

import json
from pathlib import Path

import pytest

from vscheduler.convert.files import SourcedObject, load_objects
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError

NODE = "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n"


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def names(objects: list[SourcedObject]) -> list[str]:
    return [str(o.obj["metadata"]["name"]) for o in objects]  # type: ignore[index]


def test_a_multi_document_yaml_file_yields_each_object_with_its_document_number(
    tmp_path: Path,
) -> None:
    file = write(
        tmp_path / "cluster.yaml", NODE.format(name="a") + "---\n---\n" + NODE.format(name="b")
    )
    objects = load_objects([file])
    assert [(o.source, names([o])[0]) for o in objects] == [(f"{file}#1", "a"), (f"{file}#3", "b")]


def test_a_folder_is_read_recursively_in_path_order(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", NODE.format(name="b"))
    write(tmp_path / "a" / "z.yml", NODE.format(name="az"))
    write(
        tmp_path / "c.json",
        json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c"}}),
    )
    write(tmp_path / "notes.txt", "not a snapshot")
    assert names(load_objects([str(tmp_path)])) == ["az", "b", "c"]


def test_files_are_read_in_the_order_given(tmp_path: Path) -> None:
    second = write(tmp_path / "a.yaml", NODE.format(name="second"))
    first = write(tmp_path / "b.yaml", NODE.format(name="first"))
    assert names(load_objects([first, second])) == ["first", "second"]


def test_a_kind_list_yields_its_items(tmp_path: Path) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
        ],
    }
    file = write(tmp_path / "list.json", json.dumps(doc))
    objects = load_objects([file])
    assert [o.source for o in objects] == [f"{file}#1.items[0]", f"{file}#1.items[1]"]
    assert [o.obj["kind"] for o in objects] == ["Node", "Namespace"]


def test_a_typed_list_gives_its_items_their_kind_and_api_version(tmp_path: Path) -> None:
    doc = {"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "a"}}]}
    objects = load_objects([write(tmp_path / "nodes.json", json.dumps(doc))])
    assert [dict(o.obj) for o in objects] == [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}
    ]


def test_timestamps_stay_text_as_the_api_server_reads_them(tmp_path: Path) -> None:
    text = NODE.format(name="a") + "  creationTimestamp: 2024-01-01T00:00:00Z\n"
    (obj,) = load_objects([write(tmp_path / "n.yaml", text)])
    assert obj.obj["metadata"] == {"name": "a", "creationTimestamp": "2024-01-01T00:00:00Z"}


def test_loaded_objects_build_a_snapshot(tmp_path: Path) -> None:
    text = NODE.format(name="n1") + "status:\n  allocatable: {cpu: 2, memory: 4Gi}\n"
    snap = build_snapshot(load_objects([write(tmp_path / "c.yaml", text)]))
    assert snap.nodes[0].allocatable.milli_cpu == 2000


def test_a_conversion_error_names_the_file_and_document(tmp_path: Path) -> None:
    text = (
        NODE.format(name="n1")
        + "---\n"
        + NODE.format(name="n2")
        + "status:\n  capacity: {cpu: 2x}\n"
    )
    file = write(tmp_path / "cluster.yaml", text)
    with pytest.raises(InputError) as caught:
        build_snapshot(load_objects([file]))
    assert str(caught.value) == (
        f"{file}#2: Node n2: status.capacity.cpu: invalid quantity '2x': unknown suffix 'x'"
    )


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(InputError, match=f"^{missing}: no such file or directory$"):
        load_objects([missing])


def test_a_yaml_syntax_error_names_the_document_and_line(tmp_path: Path) -> None:
    file = write(tmp_path / "bad.yaml", NODE.format(name="a") + "---\nkind: [Node\n")
    with pytest.raises(InputError) as caught:
        load_objects([file])
    message = str(caught.value)
    assert message.startswith(f"{file}#2: YAML syntax error at line 7, column 1:")


def test_an_unclosed_bracket_is_reported_with_the_line_where_it_opens(tmp_path: Path) -> None:
    file = write(tmp_path / "bad.yaml", "kind: Node\nmetadata: {name: a\nspec: {}\n")
    with pytest.raises(InputError) as caught:
        load_objects([file])
    assert str(caught.value) == (
        f"{file}#1: YAML syntax error at line 3, column 5: did not find expected ',' or '}}'"
        " (while parsing a flow mapping at line 2, column 11)"
    )


def test_a_json_syntax_error_names_the_line(tmp_path: Path) -> None:
    file = write(tmp_path / "bad.json", '{\n  "kind": }\n')
    with pytest.raises(
        InputError, match=r"bad.json: JSON syntax error at line 2, column 11: Expecting value$"
    ):
        load_objects([file])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("- a\n- b\n", "must be a mapping (a Kubernetes object), got a list"),
        ("just text\n", "must be a mapping (a Kubernetes object), got 'just text'"),
        ("kind: Node\nmetadata: {name: a}\n", "missing 'apiVersion'"),
        ("apiVersion: v1\nmetadata: {name: a}\n", "missing 'kind'"),
        ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "items: must be a list"),
    ],
)
def test_a_document_that_is_no_object_is_an_error(tmp_path: Path, text: str, problem: str) -> None:
    file = write(tmp_path / "x.yaml", text)
    with pytest.raises(InputError) as caught:
        load_objects([file])
    assert str(caught.value) == f"{file}#1: {problem}"


def test_a_list_item_that_is_no_object_is_an_error(tmp_path: Path) -> None:
    file = write(tmp_path / "x.yaml", "apiVersion: v1\nkind: List\nitems: [3]\n")
    with pytest.raises(
        InputError, match=r"#1.items\[0\]: must be a mapping \(a Kubernetes object\), got 3$"
    ):
        load_objects([file])


def test_a_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"kind: \xff\n")
    with pytest.raises(InputError, match="not UTF-8 text"):
        load_objects([str(path)])


def test_an_empty_file_holds_nothing(tmp_path: Path) -> None:
    assert load_objects([write(tmp_path / "empty.yaml", "")]) == []

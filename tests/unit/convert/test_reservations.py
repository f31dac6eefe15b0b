"""A reservation ConfigMap becomes a book of reservations; an entry that does not read is a
problem naming the ConfigMap, the key and the field, and is left out while the others stay."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from vscheduler.convert.files import SourcedObject
from vscheduler.convert.reservation import guarded_book, read_book
from vscheduler.convert.snapshot import build_snapshot
from vscheduler.errors import InputError
from vscheduler.model.reservation import Reservation, ReservationBook
from vscheduler.model.resources import Resources
from vscheduler.testing.reservations import config_map, entry

LABEL = "ConfigMap kube-system/vscheduler-reservations"
NOON = dt.datetime(2026, 1, 25, 12, 0, tzinfo=dt.UTC)
GOOD = entry("n1", "team/train-0", "2026-01-25T12:00:00Z", cpu="2", memory="4Gi")


def test_every_entry_becomes_a_reservation_sorted_by_key() -> None:
    later = entry("n2", "team/train-1", "2026-01-25T14:00:00+02:00", **{"nvidia.com/gpu": "1"})
    book = read_book(config_map({"train-1": later, "train-0": GOOD}))

    assert book == ReservationBook(
        namespace="kube-system",
        name="vscheduler-reservations",
        entries=(
            Reservation(
                key="train-0",
                node="n1",
                pod="team/train-0",
                resources=Resources(cpu=2000, memory=4 << 30),
                expires_at=NOON,
            ),
            Reservation(
                key="train-1",
                node="n2",
                pod="team/train-1",
                resources=Resources({"nvidia.com/gpu": 1}),
                expires_at=NOON,
            ),
        ),
    )
    assert book.key == "kube-system/vscheduler-reservations"


def test_a_reservation_holds_until_its_expiry_time_exclusive() -> None:
    (reservation,) = read_book(config_map({"r": GOOD})).entries

    assert not reservation.expired(NOON - dt.timedelta(seconds=1))
    assert reservation.expired(NOON)


def test_a_config_map_without_data_holds_no_reservation() -> None:
    raw = config_map({})
    del raw["data"]

    assert read_book(raw) == ReservationBook(
        namespace="kube-system", name="vscheduler-reservations"
    )


def good_fields(**changes: Any) -> str:
    fields: dict[str, Any] = {
        "node": "n1",
        "pod": "team/train-0",
        "resources": {"cpu": "2"},
        "expiresAt": "2026-01-25T12:00:00Z",
    }
    fields.update(changes)
    return json.dumps({k: v for k, v in fields.items() if v is not None})


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            "{node: n1}",
            "data.bad: not JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)",
            id="not-json",
        ),
        pytest.param('["n1"]', "data.bad: must be a JSON object, got a list", id="not-an-object"),
        pytest.param(
            good_fields(expireAt="2026-01-25T12:00:00Z"),
            "data.bad.expireAt: unknown field; the fields are node, pod, resources, expiresAt",
            id="unknown-field",
        ),
        pytest.param(
            good_fields(expiresAt=None), "data.bad.expiresAt: is required", id="missing-field"
        ),
        pytest.param(good_fields(node=""), "data.bad.node: must be a node name, got ''", id="node"),
        pytest.param(
            good_fields(pod="train-0"),
            "data.bad.pod: must be 'namespace/name', got 'train-0'",
            id="pod-without-namespace",
        ),
        pytest.param(
            good_fields(pod="team/a/b"),
            "data.bad.pod: must be 'namespace/name', got 'team/a/b'",
            id="pod-with-two-slashes",
        ),
        pytest.param(
            good_fields(resources={"cpu": "two"}),
            "data.bad.resources.cpu: invalid quantity 'two': no digits",
            id="bad-quantity",
        ),
        pytest.param(
            good_fields(resources={"cpu": "0"}),
            "data.bad.resources: must reserve a non-zero amount of some resource",
            id="nothing-reserved",
        ),
        pytest.param(
            good_fields(expiresAt="tomorrow"),
            "data.bad.expiresAt: must be an RFC3339 time like 2006-01-02T15:04:05Z, got 'tomorrow'",
            id="bad-time",
        ),
    ],
)
def test_an_entry_that_does_not_read_is_a_problem_and_the_others_stay(
    value: str, problem: str
) -> None:
    book = read_book(config_map({"bad": value, "good": GOOD}))

    assert [r.key for r in book.entries] == ["good"]
    assert book.problems == (f"{LABEL}: {problem}",)


def test_a_value_that_is_not_a_string_is_a_problem() -> None:
    raw = config_map({})
    raw["data"] = {"bad": 3}

    assert read_book(raw).problems == (
        f"{LABEL}: data.bad: must be a JSON object in a string, got 3",
    )


def test_data_that_is_not_a_mapping_is_a_problem_of_the_whole_config_map() -> None:
    raw = config_map({})
    raw["data"] = ["r1"]

    book = read_book(raw)

    assert book.entries == ()
    assert book.problems == (f"{LABEL}: data: must be a mapping, got a list",)


def test_unreadable_metadata_is_an_error_read_strictly_and_a_problem_read_leniently() -> None:
    raw = config_map({"r": GOOD})
    raw["metadata"] = {"namespace": "kube-system"}

    with pytest.raises(InputError, match=r"ConfigMap \(unnamed\): metadata.name"):
        read_book(raw)
    assert guarded_book(raw) == ReservationBook(
        namespace="",
        name="",
        problems=("ConfigMap (unnamed): metadata.name: must be a non-empty string",),
    )


def test_a_snapshot_holds_the_book_of_every_config_map_by_namespace_and_name() -> None:
    objects = [
        SourcedObject("cluster.yaml#1", config_map({"r": GOOD})),
        SourcedObject("cluster.yaml#2", config_map({}, name="other", namespace="team")),
    ]

    snap = build_snapshot(objects)

    assert list(snap.reservations) == ["kube-system/vscheduler-reservations", "team/other"]
    assert [r.key for r in snap.reservations["kube-system/vscheduler-reservations"].entries] == [
        "r"
    ]
    assert len(snap.config_maps) == 2

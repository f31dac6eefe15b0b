"""`quick_init` and `replaced`: the same objects as the dataclass's own `__init__` and
`dataclasses.replace`, made quicker."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import inspect
from typing import Any

import pytest
from hypothesis import given, strategies as st

from vscheduler.model.facts import LIFE_FIELDS, JobFacts, NodeFacts, TaskFacts
from vscheduler.model.frozen import quick_init, replaced
from vscheduler.model.resources import Resources
from vscheduler.model.status import TaskStatus


def _sample(*, quick: bool) -> type:
    """Every kind of field: positional and keyword-only, defaults, factories, init=False ones
    with a default, a factory or neither, and a `__post_init__` that reads them."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Sample:
        a: int
        b: str = "b"
        c: list[int] = dataclasses.field(default_factory=list)
        d: int = dataclasses.field(default=4, kw_only=True)
        e: dict[str, int] = dataclasses.field(default_factory=dict, kw_only=True)
        f: int = dataclasses.field(kw_only=True)
        g: int = dataclasses.field(default=7, init=False)
        h: list[int] = dataclasses.field(default_factory=lambda: [8], init=False)
        i: int = dataclasses.field(init=False, compare=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "i", self.a + self.d + self.f)

    return quick_init(Sample) if quick else Sample


QUICK, PLAIN = _sample(quick=True), _sample(quick=False)


def _slots(obj: object) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


@given(
    a=st.integers(),
    rest=st.fixed_dictionaries(
        {},
        optional={
            "b": st.text(max_size=3),
            "c": st.lists(st.integers(), max_size=2),
            "d": st.integers(),
            "e": st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
        },
    ),
    f=st.integers(),
    positional=st.booleans(),
)
def test_the_same_object_as_the_dataclass_init_makes(
    a: int, rest: dict[str, Any], f: int, positional: bool
) -> None:
    args = (a, rest.pop("b", "b")) if positional else ()
    kwargs = {**rest, "f": f} if positional else {"a": a, **rest, "f": f}
    quick, plain = QUICK(*args, **kwargs), PLAIN(*args, **kwargs)
    assert _slots(quick) == _slots(plain)
    assert _parameters(QUICK) == _parameters(PLAIN)


def _parameters(cls: type) -> list[tuple[str, object]]:
    """The `__init__` parameters' names and kinds (a factory's default is each one's sentinel)."""
    return [(p.name, p.kind) for p in inspect.signature(cls).parameters.values()]


def test_factories_are_called_for_each_object_and_the_class_stays_frozen() -> None:
    one, two = QUICK(1, f=2), QUICK(1, f=2)
    assert one.c is not two.c
    assert one.e is not two.e
    assert one.h is not two.h
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 3
    assert copy.deepcopy(one) == one
    assert dataclasses.replace(one, d=10).i == 13
    with pytest.raises(TypeError, match="required keyword-only argument: 'f'"):
        QUICK(1)


def test_refuses_what_it_cannot_make() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        scale: dataclasses.InitVar[int] = 1

    for cls in (NoSlots, NotFrozen, WithInitVar):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)


def _twin(cls: type) -> type:
    """`cls` made again by `dataclasses` from its own fields, with the dataclass's `__init__`."""
    spec = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
    extra = {"__post_init__": cls.__post_init__} if hasattr(cls, "__post_init__") else {}
    return dataclasses.make_dataclass(
        cls.__name__, spec, frozen=True, slots=True, kw_only=True, namespace=extra
    )


TASK: dict[str, Any] = {
    "uid": "u",
    "namespace": "ns",
    "name": "p",
    "job": "ns/p",
    "group_name": None,
    "resreq": Resources({"cpu": 100}),
    "status": TaskStatus.PENDING,
}
"""A pending pod's required fields."""


@pytest.mark.parametrize(
    ("cls", "required"),
    [
        (TaskFacts, TASK),
        (JobFacts, {"uid": "g", "namespace": "ns", "name": "g"}),
        (NodeFacts, {"name": "n1", "allocatable": Resources({}), "capacity": Resources({})}),
    ],
)
def test_the_facts_are_made_as_their_dataclass_makes_them(
    cls: type, required: dict[str, Any]
) -> None:
    twin = _twin(cls)
    quick, plain = cls(**required), twin(**required)
    assert _slots(quick) == _slots(plain)
    assert _parameters(cls) == _parameters(twin)
    given_all = {f.name: getattr(quick, f.name) for f in dataclasses.fields(cls) if f.init}
    assert _slots(cls(**given_all)) == _slots(twin(**given_all)) == _slots(quick)


# --- replaced ----------------------------------------------------------------------------------
@given(
    changes=st.fixed_dictionaries(
        {},
        optional={
            "a": st.integers(),
            "b": st.text(max_size=3),
            "c": st.lists(st.integers(), max_size=2),
            "d": st.integers(),
            "e": st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
            "f": st.integers(),
        },
    )
)
def test_replaced_makes_what_dataclasses_replace_makes(changes: dict[str, Any]) -> None:
    quick: Any = QUICK(1, "x", [2], d=3, e={"k": 4}, f=5)
    plain: Any = PLAIN(1, "x", [2], d=3, e={"k": 4}, f=5)
    object.__setattr__(quick, "g", 70)  # an init=False field is made anew, not copied
    object.__setattr__(plain, "g", 70)
    new: Any = replaced(quick, **changes)
    assert _slots(new) == _slots(dataclasses.replace(plain, **changes))
    assert (new.g, new.h, new.i) == (7, [8], new.a + new.d + new.f)
    assert new.h is not quick.h
    assert _slots(quick)["a"] == 1  # the old object is left as it was
    assert type(new) is QUICK


def test_replaced_refuses_a_name_that_is_no_init_field_and_falls_back_for_other_classes() -> None:
    one = QUICK(1, f=2)
    with pytest.raises(TypeError):
        replaced(one, z=1)
    with pytest.raises(TypeError):
        replaced(one, g=1)  # init=False (dataclasses.replace raises ValueError)
    plain = PLAIN(1, f=2)
    assert _slots(replaced(plain, a=5)) == _slots(dataclasses.replace(plain, a=5))

    @dataclasses.dataclass(frozen=True, slots=True)
    class Clash:
        old: int

    with pytest.raises(TypeError, match="cannot name a field old"):
        quick_init(Clash)


def test_replaced_drops_the_template_key_and_restated_carries_it() -> None:
    task = TaskFacts(**TASK)
    made = task.template_key()  # its memo made: a replaced task makes its own
    started = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    changes: dict[str, Any] = {"status": TaskStatus.BOUND, "node_name": "n1", "started": started}
    new = replaced(task, **changes)
    assert _slots(new) == {**_slots(dataclasses.replace(task, **changes)), "_template": None}
    assert (new.status, new.node_name, task.node_name) == (TaskStatus.BOUND, "n1", None)
    # restated: the same object, its template key carried (none of its parts changed)
    again = task.restated(**changes)
    assert _slots(again) == {**_slots(new), "_template": made}
    assert again.template_key() is made == new.template_key()
    with pytest.raises(TypeError, match="resreq is no field of a pod's life"):
        task.restated(resreq=Resources({"cpu": 200}))


def test_a_pods_life_is_no_part_of_its_template_key() -> None:
    base = TaskFacts(**TASK)
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    lives: dict[str, Any] = {
        "status": TaskStatus.RUNNING,
        "node_name": "n1",
        "started": at,
        "nominated_node": "n2",
        "scheduled_at": at,
        "eviction_refused": True,
    }
    assert set(lives) == LIFE_FIELDS
    for name, value in lives.items():  # made afresh: the key restated would carry
        fresh = dataclasses.replace(base, **{name: value})
        assert fresh.template_key() == base.template_key(), name

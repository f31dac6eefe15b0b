"""`quick_init`: the same objects as the dataclass's own `__init__`, made quicker."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from typing import Any

import pytest
from hypothesis import given, strategies as st

from vscheduler.model.facts import JobFacts, NodeFacts, TaskFacts
from vscheduler.model.frozen import quick_init
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


@pytest.mark.parametrize(
    ("cls", "required"),
    [
        (
            TaskFacts,
            {
                "uid": "u",
                "namespace": "ns",
                "name": "p",
                "job": "ns/p",
                "group_name": None,
                "resreq": Resources({"cpu": 100}),
                "status": TaskStatus.PENDING,
            },
        ),
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

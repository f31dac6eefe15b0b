"""The load-time check of a plugin against the extension-point Protocols.

Owns: `problems(name, factory)`, run once per policy plugin entry by `registry.build` (a problem
is a `PolicyError` there, naming plugin and method). For every class the factory declares
(`PluginFactory.plugin`), every public method the class defines or inherits (Protocol machinery
and `object` aside) must be a point's method; a hook must come with its point's Protocol among
the class's bases; and it must take the Protocol's number of positional parameters. A misspelt
hook (`filter_nodez`) is a load error with a suggestion, not a hook that silently never runs.
Helpers on a plugin class are therefore private (`_x`).
Must not: run per call. The dispatcher trusts a checked class and adds nothing to the hot path.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Protocol

from vscheduler.framework import points


class Declares(Protocol):
    """What the check needs of a factory: the class (or classes) its `open` returns."""

    @property
    def plugin(self) -> type | tuple[type, ...]: ...


def problems(name: str, factory: Declares) -> list[str]:
    """Every way the classes `factory` declares break the contract (empty: none)."""
    declared = getattr(factory, "plugin", None)
    if declared is None:
        return [f"plugin '{name}': its factory declares no `plugin` class"]
    classes = declared if isinstance(declared, tuple) else (declared,)
    out: list[str] = []
    for cls in classes:
        out.extend(class_problems(name, cls))
    return out


def class_problems(name: str, cls: type) -> list[str]:
    """Every way `cls`, a per-session class of plugin `name`, breaks the contract."""
    out: list[str] = []
    mro = cls.__mro__
    for method, fn in sorted(_public_methods(cls).items()):
        where = f"plugin '{name}': {cls.__name__}.{method}"
        point = points.BY_METHOD.get(method)
        if point is None:
            close = difflib.get_close_matches(method, points.BY_METHOD, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else " (make a helper private: '_x')"
            out.append(f"{where} is not an extension point's method{hint}")
            continue
        if point.protocol not in mro:
            out.append(
                f"{where} serves {point.name} but the class does not subclass "
                f"{point.protocol.__name__} (vscheduler.plugin_api)"
            )
            continue
        want = _positional(getattr(point.protocol, method))
        got = _positional(fn)
        if got != want:
            out.append(f"{where} takes {got} positional parameter(s); {point.name} passes {want}")
    return out


def _public_methods(cls: type) -> dict[str, object]:
    """Public methods (static and class methods too) `cls` defines or inherits from its own
    (non-Protocol) bases; attributes and properties (`node_local`) are not hooks."""
    found: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if base is object or _is_protocol(base):
            continue
        for attr, value in vars(base).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                found[attr] = value.__func__  # no hook is static: the arity check says so
            elif inspect.isfunction(value):
                found[attr] = value
    return found


def _is_protocol(cls: type) -> bool:
    return bool(getattr(cls, "_is_protocol", False)) or cls.__module__ == "typing"


def _positional(fn: object) -> int:
    """Positional parameters besides `self` (-1: takes any number)."""
    params = list(inspect.signature(fn).parameters.values())[1:]  # type: ignore[arg-type]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return -1
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))

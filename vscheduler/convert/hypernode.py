"""A raw `topology.volcano.sh/v1alpha1` HyperNode becomes a `HyperNodeFacts`.

Owns: `spec.tier` (default 0), `spec.tierName` and `spec.members[]`, each of type `Node` or
`HyperNode` with one selector: `exactMatch.name`, `regexMatch.pattern` (a regular expression
searched in a node's name, as Go's `regexp.MatchString`; Go's `\\z` is read as Python's `\\Z`)
or `labelMatch` (a label selector). A field that cannot be read (a wrong type, a pattern that is
no regular expression, a malformed label selector) is the HyperNode's `problem`, naming the
field: the tree leaves the HyperNode out (`model.topology`). What Volcano's CRD refuses but its
scheduler reads is read as it reads it, with a warning: a negative tier, no member, a member of
an unknown type (ignored), a selector with none or several of the three (none selects nothing;
several select the union), an empty exact name (selects nothing) or pattern (every node).
Must not: resolve members to nodes or HyperNodes (`model.topology.build_topology` does).
"""

from __future__ import annotations

import re
import warnings as python_warnings
from collections.abc import Mapping
from typing import Final

from vscheduler.convert.fields import (
    Raw,
    as_mapping,
    error,
    integer,
    items,
    mapping,
    read_meta,
    show,
    string,
)
from vscheduler.convert.pdb import convert_selector
from vscheduler.errors import InputError
from vscheduler.model.facts import UNUSUAL_VALUE, FieldWarning
from vscheduler.model.topology import (
    KIND,
    MEMBER_HYPERNODE,
    MEMBER_NODE,
    MEMBER_TYPES,
    HyperNodeFacts,
    MemberFacts,
)

_SELECTORS: Final = ("exactMatch", "regexMatch", "labelMatch")
_TIER_MAX: Final = 2**31 - 1
_TIER_NAME_MAX: Final = 253


def convert_hypernode(obj: Mapping[str, object]) -> HyperNodeFacts:
    """The facts of a raw HyperNode (cluster-scoped). Raises `InputError` only for metadata
    that names no object; anything wrong in the spec is the facts' `problem`."""
    meta = read_meta(obj, KIND, namespaced=False)
    notes: list[FieldWarning] = []
    try:
        return _read(obj, meta.name, meta.label, notes)
    except InputError as err:
        return HyperNodeFacts(name=meta.name, problem=str(err), warnings=tuple(notes))


def _read(obj: Raw, name: str, label: str, notes: list[FieldWarning]) -> HyperNodeFacts:
    spec = mapping(obj, "spec", label, "")
    tier = integer(spec, "tier", label, "spec", 0, minimum=-_TIER_MAX - 1, maximum=_TIER_MAX)
    if tier < 0:
        notes.append(
            _warning(
                label, "spec.tier", f"{tier} is below 0 (Volcano's CRD refuses it); read as written"
            )
        )
    tier_name = string(spec, "tierName", label, "spec")
    if len(tier_name) > _TIER_NAME_MAX:
        raise error(label, "spec.tierName", f"must be at most {_TIER_NAME_MAX} characters")
    raw_members = items(spec, "members", label, "spec")
    if not raw_members:
        notes.append(_warning(label, "spec.members", "no member: the HyperNode holds no node"))
    members: list[MemberFacts] = []
    for i, raw in enumerate(raw_members):
        member = _member(as_mapping(raw, label, f"spec.members[{i}]"), label, i, notes)
        if member is not None:
            members.append(member)
    return HyperNodeFacts(
        name=name,
        tier=tier,
        tier_name=tier_name,
        members=tuple(members),
        warnings=tuple(notes),
    )


def _member(raw: Raw, label: str, i: int, notes: list[FieldWarning]) -> MemberFacts | None:
    path = f"spec.members[{i}]"
    kind = string(raw, "type", label, path)
    if kind not in MEMBER_TYPES:
        notes.append(
            _warning(
                label,
                f"{path}.type",
                f"{show(kind)} is not Node or HyperNode; the member is ignored, as Volcano"
                " ignores it",
            )
        )
        return None
    selector = mapping(raw, "selector", label, path)
    where = f"{path}.selector"
    given = [key for key in _SELECTORS if selector.get(key) is not None]
    if not given:
        notes.append(
            _warning(
                label, where, "names no exactMatch, regexMatch or labelMatch: it selects nothing"
            )
        )
    elif len(given) > 1:
        notes.append(
            _warning(
                label,
                where,
                f"gives {' and '.join(given)} (Volcano's CRD allows one); it selects what each"
                " selects, as Volcano's scheduler reads it",
            )
        )
    exact = ""
    if "exactMatch" in given:
        exact = string(
            mapping(selector, "exactMatch", label, where), "name", label, f"{where}.exactMatch"
        )
        if not exact:
            notes.append(
                _warning(label, f"{where}.exactMatch.name", "is empty: it selects nothing")
            )
    pattern = None
    if "regexMatch" in given:
        text = string(
            mapping(selector, "regexMatch", label, where), "pattern", label, f"{where}.regexMatch"
        )
        pattern = _compiled(text, label, f"{where}.regexMatch.pattern")
        if not text and kind == MEMBER_NODE:
            notes.append(
                _warning(label, f"{where}.regexMatch.pattern", "is empty: it matches every node")
            )
    labels = None
    if "labelMatch" in given:
        labels = convert_selector(selector.get("labelMatch"), label, f"{where}.labelMatch")
        if labels.is_empty and kind == MEMBER_NODE:
            notes.append(
                _warning(
                    label,
                    f"{where}.labelMatch",
                    "has no matchLabels and no matchExpressions: it selects no node, as Volcano"
                    " reads it",
                )
            )
    if kind == MEMBER_HYPERNODE:
        return MemberFacts(MEMBER_HYPERNODE, exact, pattern, labels)
    return MemberFacts(MEMBER_NODE, exact, pattern, labels)


def _compiled(text: str, label: str, path: str) -> re.Pattern[str]:
    """`text` as a regular expression (Go's `\\z`, end of text, read as Python's `\\Z`)."""
    source = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", text)
    try:
        with python_warnings.catch_warnings():
            python_warnings.simplefilter("ignore")
            return re.compile(source)
    except (re.error, RecursionError, OverflowError) as exc:
        raise error(label, path, f"{show(text)} is not a regular expression: {exc}") from exc


def _warning(label: str, path: str, text: str) -> FieldWarning:
    return FieldWarning(UNUSUAL_VALUE, f"{label}: {path}: {text}")


def guarded_hypernode(obj: Mapping[str, object]) -> HyperNodeFacts:
    """`convert_hypernode`, never raising: metadata that names no object gives a nameless
    HyperNode carrying the message (the cache never hands one over: it reads the identity
    first)."""
    try:
        return convert_hypernode(obj)
    except InputError as err:
        return HyperNodeFacts(name="", problem=str(err))

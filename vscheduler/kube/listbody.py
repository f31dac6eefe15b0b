"""`ListBody`: a list response's JSON read as it arrives, its items handed on as they come.

The API server streams a list (`{"kind":..,"apiVersion":..,"metadata":{..},"items":[..]}`): at
50,000 pods the body is ~100 MB and takes it ~2.5 s to send. Read whole and then decoded, the
scheduler waited for the last byte before converting the first pod; read as it arrives, each pod
is decoded (and, by the informer's sink, converted) while the rest is still coming.

`fields_before_items()` reads the top-level fields up to the items (or the object's end);
`items()` yields the items as they come in, then reads the fields after them (`fields` holds them
all once the object is read). The whole items in each piece are decoded together by orjson
(`_batch`, `kube.jsondecode`), the one split across two pieces alone by the standard library
(`json.JSONDecoder.raw_decode`), scanned again once more text came. A number at the end of the
text read so far (`12`, `0.`, `1e`) is scanned again once more text came (it may go on).
Anything that is not a JSON object with these fields raises `ClusterError` naming the path.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import Any

from vscheduler.errors import ClusterError
from vscheduler.kube import jsondecode

_WHITESPACE = frozenset(" \t\n\r")
_NUMBER_GOES_ON = frozenset("0123456789.eE+-")
_BEFORE, _ITEMS, _AFTER, _DONE = range(4)


class ListBody:
    """One list response's body, read through `read` (bytes; empty at the end); whole items
    decoded by `loads` (`python -m bench.list_decode` passes the standard library's too)."""

    def __init__(
        self,
        read: Callable[[], bytes],
        path: str,
        *,
        loads: Callable[[str], Any] = jsondecode.loads,
    ) -> None:
        self._read = read
        self._loads = loads
        self._path = path
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._scan = json.JSONDecoder().raw_decode
        self._text = ""
        self._pos = 0
        self._eof = False
        self._state = _BEFORE
        self._opening: str | None = None
        """How an item that follows another begins: `},` and the first item's first field."""
        self.fields: dict[str, Any] = {}
        """The top-level fields read so far (`items` only when it is not a list)."""

    def fields_before_items(self) -> dict[str, Any]:
        """The fields before the items (all of them when the object has no item list)."""
        if self._state == _BEFORE:
            self._expect("{")
            if self._peek() == "}":
                self._pos += 1
                self._state = _DONE
            else:
                self._read_fields()
        return self.fields

    def items(self) -> Iterator[Any]:
        """Each item as it is read; then the fields after the items are read into `fields`."""
        self.fields_before_items()
        if self._state != _ITEMS:
            return
        if self._peek() == "]":
            self._pos += 1
        else:
            while True:
                yield from self._batch()
                yield self._value()
                if self._expect(",]") == "]":
                    break
        self._state = _AFTER
        if self._expect(",}") == ",":
            self._read_fields()
        else:
            self._state = _DONE

    def finish(self) -> None:
        """Read the body to its end (after the list object only whitespace may come), so its
        connection can carry another request."""
        for _ in self.items():
            pass
        if self._peek():
            raise self._malformed("more after the list object")

    def _batch(self) -> list[Any]:
        """The whole items in the text read so far, but the last, decoded in one call; [] when
        that fails (the caller then reads on item by item).

        One decoding call shares its field-name strings among all the objects it makes (orjson
        keeps the names it met in a cache, the standard library per call); decoded one by one
        with `json`, 50,000 pods held ~240 MB more of the same names. An item's end is
        guessed: the last place the text holds `},` followed by the way the first item began
        (`{"metadata":` for a pod). Should that place be inside an item, the text before it is
        not a JSON array's elements and fails to decode; decoded, it is exactly the items
        before it."""
        self._peek()
        text, pos = self._text, self._pos
        if self._opening is None:
            colon = text.find(":", pos)
            if colon < 0:
                return []
            self._opening = "}," + text[pos : colon + 1]
        cut = text.rfind(self._opening, pos)
        if cut <= pos:
            return []
        try:
            batch: list[Any] = self._loads(f"[{text[pos : cut + 1]}]")
        except ValueError:
            return []
        self._pos = cut + 2
        return batch

    def _read_fields(self) -> None:
        """`"key": value` pairs until the items' `[` or the object's `}`."""
        while True:
            key = self._value()
            if not isinstance(key, str):
                raise self._malformed("a field name that is not a string")
            self._expect(":")
            if key == "items" and self._peek() == "[":
                if self._state != _BEFORE:
                    raise self._malformed("a second `items` list")
                self._pos += 1
                self._state = _ITEMS
                return
            self.fields[key] = self._value()
            if self._expect(",}") == "}":
                self._state = _DONE
                return

    def _more(self) -> bool:
        """Append the next read to the text (dropping what was consumed); False at the end."""
        if self._eof:
            return False
        data = self._read()
        try:
            text = self._utf8.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise self._malformed(f"not UTF-8 ({exc.reason})") from exc
        if not data:
            self._eof = True
        self._text = self._text[self._pos :] + text
        self._pos = 0
        return bool(data)

    def _peek(self) -> str:
        """The next character that is not whitespace (reading on as needed); "" at the end."""
        while True:
            text, pos, end = self._text, self._pos, len(self._text)
            while pos < end and text[pos] in _WHITESPACE:
                pos += 1
            self._pos = pos
            if pos < end:
                return text[pos]
            if not self._more():
                return ""

    def _expect(self, allowed: str) -> str:
        """Consume the next character, one of `allowed`."""
        found = self._peek()
        if not found or found not in allowed:
            what = repr(found) if found else "the end of the body"
            raise self._malformed(f"{what} where one of {allowed!r} belongs")
        self._pos += 1
        return found

    def _value(self) -> Any:
        """The next whole JSON value."""
        while True:
            if not self._peek():
                raise self._malformed("the body ends before a value")
            try:
                value, end = self._scan(self._text, self._pos)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                raise self._malformed(exc.msg) from exc
            if (
                isinstance(value, int | float)
                and (end == len(self._text) or self._text[end] in _NUMBER_GOES_ON)
                and self._more()
            ):
                continue  # a number at the end of the text so far ("12", "0.") may go on
            self._pos = end
            return value

    def _malformed(self, what: str) -> ClusterError:
        return ClusterError(f"malformed list from {self._path}: {what}")

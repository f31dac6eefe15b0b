"""ReservationBooks: the cache's view of the watched reservation ConfigMaps.

Owns: checking a ConfigMap as it arrives (its unreadable entries are its problem, reported with
the cache's other problems), its `ReservationBook` for snapshots (each ConfigMap read once until
it changes), and when the next reservation expires: an expiry frees what the reservation held, a
change the next cycle must see though no object changed.
Must not: lock (the cache does), or decide what a reservation keeps off a node (the plugin does).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

from vscheduler.cache.entries import Converted, Converters, kept_raw
from vscheduler.cache.malformed import Identity
from vscheduler.convert.fields import Raw
from vscheduler.convert.memo import FactsMemo
from vscheduler.convert.reservation import KIND, guarded_book
from vscheduler.model.reservation import ReservationBook


def checked(converters: Converters, obj: Raw, who: Identity) -> Converted[Raw]:
    """A ConfigMap (only reservation ConfigMaps are watched into the cache) is kept; its
    unreadable entries are its problem (they are left out of its book)."""
    kept = kept_raw(KIND, namespaced=True)(converters, obj, who)
    if kept.problem:
        return kept
    return Converted(obj, "; ".join(guarded_book(obj).problems))


class ReservationBooks:
    """The books of the ConfigMaps held, and the time of the next expiry. Not thread-safe."""

    __slots__ = ("_memo", "_next_expiry", "_seen")

    def __init__(self) -> None:
        self._memo = FactsMemo(guarded_book)
        self._seen: tuple[ReservationBook, ...] = ()
        self._next_expiry: dt.datetime | None = None

    def books(self, config_maps: Mapping[str, Raw]) -> dict[str, ReservationBook]:
        """The book of each ConfigMap (key -> raw object), by `namespace/name`."""
        return {book.key: book for book in self._memo.facts(config_maps)}

    def expired(self, config_maps: Mapping[str, Raw], now: dt.datetime) -> bool:
        """Whether a reservation expired since the last call (or since its ConfigMap changed,
        which is a change of its own)."""
        books = self._memo.facts(config_maps)
        if books is not self._seen:
            self._seen = books
            self._next_expiry = _next_expiry(books, now)
            return False
        if self._next_expiry is None or now < self._next_expiry:
            return False
        self._next_expiry = _next_expiry(books, now)
        return True


def _next_expiry(books: Iterable[ReservationBook], now: dt.datetime) -> dt.datetime | None:
    """The earliest expiry of a reservation still holding at `now`."""
    return min(
        (r.expires_at for book in books for r in book.entries if r.expires_at > now),
        default=None,
    )

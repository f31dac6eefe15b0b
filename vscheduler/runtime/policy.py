"""PolicyHolder: the policy in force, swapped whole when a valid new one arrives.

A new policy text (from the watched ConfigMap or a polled file) is parsed and built with the
built-in registry; if that succeeds it applies from the next cycle, if not the last good policy
stays and the rejection is reported (a Warning Event on the ConfigMap, a log line naming every
error, a metric) through `on_rejected`. A policy that loads but lacks `tiers`, `predicates` or
`gang` is logged with the same warnings `validate-config` prints. Until a valid policy has
arrived, the built-in default policy is in force (as Volcano falls back to its default
configuration).

`read_policy_file` is how every command reads a policy file: a file that cannot be read or is not
UTF-8 text is an InputError of one line naming the file (and the first bad byte), as snapshot
files are reported.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping

from vscheduler import catalog
from vscheduler.conf.advice import policy_warnings
from vscheduler.errors import InputError, PolicyError
from vscheduler.framework.registry import Pipeline
from vscheduler.informer.kinds import Kind
from vscheduler.informer.ports import Raw, WatchEvent

logger = logging.getLogger(__name__)


def read_policy_file(path: str) -> str:
    """The text of a policy file; InputError (one line, naming the file) if it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def kept_policy(source: str) -> str:
    """The policy that stays when a new one is rejected, as a user reads it: the text last loaded
    from `source` (the ConfigMap the rejected text came from, as edited before), or the default."""
    if source == "default policy":
        return "the built-in default policy"
    return f"the policy last loaded from {source}"


@dataclasses.dataclass(frozen=True, slots=True)
class Rejection:
    """A policy text that did not load, and why."""

    source: str
    errors: tuple[str, ...]
    uid: str = ""
    """The uid of the object the policy came from (so its Events attach to it), if any."""


class PolicyHolder:
    """Holds the pipeline in force; thread-safe."""

    def __init__(
        self,
        *,
        on_loaded: Callable[[str], None] = lambda _source: None,
        on_rejected: Callable[[Rejection], None] = lambda _rejection: None,
    ) -> None:
        self._lock = threading.Lock()
        self._pipeline = catalog.load_pipeline(None)
        self._text: str | None = None
        self._rejected_text: str | None = None
        self._source = "default policy"
        self.generation = 0
        self._on_loaded = on_loaded
        self._on_rejected = on_rejected

    @property
    def current(self) -> Pipeline:
        """The pipeline the next cycle runs."""
        with self._lock:
            return self._pipeline

    @property
    def source(self) -> str:
        """Where the policy in force came from."""
        with self._lock:
            return self._source

    def offer(self, text: str | None, source: str, *, uid: str = "") -> bool:
        """Load `text` (None: back to the default policy). True if it is now in force; a text
        already rejected is not reported again (an unrelated edit of the ConfigMap)."""
        with self._lock:
            if text == self._text:
                return True
            if text is not None and text == self._rejected_text:
                return False
        try:
            pipeline = catalog.load_pipeline(text, source=source)
        except PolicyError as exc:
            logger.error(
                "policy %s rejected, keeping %s: %s", source, kept_policy(self.source), exc
            )
            with self._lock:
                self._rejected_text = text
            self._on_rejected(Rejection(source, exc.errors, uid))
            return False
        with self._lock:
            self._pipeline, self._text, self._source = pipeline, text, source
            self.generation += 1
        logger.info("policy %s in force", source)
        if text is not None:
            for warning in policy_warnings(catalog.parse(text, source=source)):
                logger.warning("policy %s: %s", source, warning)
        self._on_loaded(source)
        return True

    def reject(self, rejection: Rejection) -> None:
        """Report a policy that could not even be read; the policy in force stays."""
        logger.error("policy %s rejected: %s", rejection.source, "; ".join(rejection.errors))
        self._on_rejected(rejection)


class ConfigMapPolicy:
    """An informer sink for the policy ConfigMap: hands the key's text to the holder.

    A ConfigMap deleted once it has been read leaves the policy in force, whether the watch
    shows the deletion or a relist (after a 410 Gone) finds the ConfigMap gone."""

    def __init__(self, holder: PolicyHolder, *, key: str) -> None:
        self._holder = holder
        self._key = key
        self._seen = False

    def replace(self, kind: Kind, items: Iterable[Raw]) -> None:
        """The ConfigMap as listed (absent at the first list: the default policy)."""
        items = list(items)
        if not items and self._seen:
            logger.warning("policy ConfigMap deleted; keeping the policy in force")
            return
        if not items:
            logger.warning("policy ConfigMap not found; the built-in default policy is in force")
            self._holder.offer(None, "default policy")
            return
        self._take(items[0])

    def apply(self, kind: Kind, event: WatchEvent) -> None:
        """A change to the ConfigMap."""
        if event.type == "DELETED":
            logger.warning("policy ConfigMap deleted; keeping the policy in force")
            return
        self._take(event.obj)

    def _take(self, obj: Raw) -> None:
        self._seen = True
        meta = obj.get("metadata")
        name = meta.get("name", "?") if isinstance(meta, Mapping) else "?"
        namespace = meta.get("namespace", "?") if isinstance(meta, Mapping) else "?"
        source = f"ConfigMap {namespace}/{name} key {self._key}"
        uid = str(meta.get("uid", "")) if isinstance(meta, Mapping) else ""
        data = obj.get("data")
        text = data.get(self._key) if isinstance(data, Mapping) else None
        if not isinstance(text, str):
            self._holder.reject(Rejection(source, (f"data.{self._key}: missing",), uid))
            return
        self._holder.offer(text, source, uid=uid)


class FilePolicy:
    """A policy file (for example a mounted ConfigMap), re-read when it changes."""

    def __init__(self, holder: PolicyHolder, path: str) -> None:
        self._holder = holder
        self._path = path
        self._seen: tuple[float, int] | None = None

    def poll(self) -> None:
        """Offer the file's text to the holder if it changed since the last poll; a file that is
        not UTF-8 text is rejected (reported, the policy in force stays)."""
        try:
            stat = os.stat(self._path)
        except OSError as exc:
            if self._seen is not None:
                logger.error("policy file %s unreadable (%s); keeping the policy", self._path, exc)
                self._seen = None
            return
        seen = (stat.st_mtime, stat.st_size)
        if seen == self._seen:
            return
        try:
            text = read_policy_file(self._path)
        except InputError as exc:
            self._seen = seen
            self._holder.reject(Rejection(self._path, (str(exc),)))
            return
        self._seen = seen
        self._holder.offer(text, self._path)

"""Structured logging: text or JSON lines, with the current cycle id on every record.

`setup_logging(level, fmt)` installs one handler on the root logger (replacing the one a previous
call installed). A JSON line is one object: `time` (RFC 3339, UTC, milliseconds), `level`,
`logger`, `message`, then every field given through `extra=` (`pod`, `podgroup`, `node`, ...)
and `cycle` when a cycle is running; a text line puts the same fields after the message as
`key=value`. The cycle id lives in a ContextVar set by `cycle_context`, so the loop sets it once
and every log call beneath it (same thread or task) carries it; `CycleFilter` copies it onto
records.

The thread that logs only puts the record on a queue, its message and cycle id made first; one
writer thread formats and writes it (`QueuedHandler`), a warning or an error before the call
that logged it returns (a crash right after loses no problem). A thread writing to the stream
gives the interpreter away during the write; written from the thread that logged, the next
thread to log waited on the handler's lock for that write, and the writer then for the
interpreter: the bind workers, which log every bind, queued there. The handler's `flush()` and
`close()` (which `logging.shutdown` calls at exit) return once every record queued so far is
written.

This module owns log formatting only; it never reads a clock (records carry their own time).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import datetime as dt
import json
import logging
import queue
import sys
import threading
from collections.abc import Iterator
from typing import IO, Final, Literal

LogFormat = Literal["text", "json"]

CYCLE_ID: Final[contextvars.ContextVar[str | None]] = contextvars.ContextVar(
    "vscheduler_cycle_id", default=None
)
"""The id of the scheduling cycle running in this context (None outside a cycle)."""

_STANDARD: Final = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime"}
)
"""Attributes every LogRecord has; anything else on a record came through `extra=`."""
_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
_MARK: Final = "_vscheduler_handler"


@contextlib.contextmanager
def cycle_context(cycle_id: str) -> Iterator[None]:
    """Log records made inside the block carry `cycle=cycle_id`."""
    token = CYCLE_ID.set(cycle_id)
    try:
        yield
    finally:
        CYCLE_ID.reset(token)


class CycleFilter(logging.Filter):
    """Puts the current cycle id on each record as `cycle` (unless `extra=` already did)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate; never drops a record."""
        if not hasattr(record, "cycle"):
            cycle = CYCLE_ID.get()
            if cycle is not None:
                record.cycle = cycle
        return True


def extra_fields(record: logging.LogRecord) -> dict[str, object]:
    """The fields a record got through `extra=` (and the filter), in the order they were set."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


def _timestamp(record: logging.LogRecord) -> str:
    when = dt.datetime.fromtimestamp(record.created, dt.UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        """time, level, logger, message, the extra fields, and `exc` when there is a traceback."""
        out: dict[str, object] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in extra_fields(record).items():
            out.setdefault(key, value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message key=value ...` for humans."""

    def format(self, record: logging.LogRecord) -> str:
        """The line, then the traceback if any."""
        fields = "".join(f" {k}={_text_value(v)}" for k, v in extra_fields(record).items())
        line = (
            f"{_timestamp(record)} {record.levelname:<7} {record.name}: "
            f"{record.getMessage()}{fields}"
        )
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


def _text_value(value: object) -> str:
    text = str(value)
    return json.dumps(text) if not text or any(c in text for c in ' "=\n') else text


def parse_level(level: str) -> int:
    """`debug`, `info`, `warning`, `error` or `critical` (any case) as a logging level."""
    try:
        return _LEVELS[level.lower()]
    except KeyError:
        raise ValueError(f"log level {level!r}: expected one of {', '.join(_LEVELS)}") from None


class QueuedHandler(logging.Handler):
    """Puts each record on a queue; one thread (`log-writer`) writes them through `target`.
    A record at `WARNING` or above is written before the call that logged it returns."""

    def __init__(self, target: logging.Handler) -> None:
        super().__init__()
        self._target = target
        self._records: queue.SimpleQueue[logging.LogRecord | threading.Event | None]
        self._records = queue.SimpleQueue()
        self._closed = False
        self._writer = threading.Thread(target=self._write, name="log-writer", daemon=True)
        self._writer.start()

    def emit(self, record: logging.LogRecord) -> None:
        """Queue a copy with its message made now (its arguments may change after the call);
        the rest, a traceback included, is formatted by the writer."""
        try:
            record = copy.copy(record)
            record.msg, record.args = record.getMessage(), None
        except Exception:  # a record whose message cannot be made, as Handler.emit reports it
            self.handleError(record)
            return
        self._records.put(record)
        if record.levelno >= logging.WARNING:
            self.flush()

    def flush(self) -> None:
        """Return once every record queued so far is written."""
        if self._closed or threading.current_thread() is self._writer:
            return
        written = threading.Event()
        self._records.put(written)
        while not written.wait(1.0):
            if not self._writer.is_alive():  # gone: nothing is written any more
                return

    def close(self) -> None:
        """Write what is queued and stop the writer."""
        if not self._closed:
            self.flush()
            self._closed = True
            self._records.put(None)
            self._writer.join()
        super().close()

    def _write(self) -> None:
        while (item := self._records.get()) is not None:
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                self._target.handle(item)
            except Exception:  # the writer lives on: the next record is written
                self.handleError(item)


def setup_logging(level: str, fmt: LogFormat, *, stream: IO[str] | None = None) -> QueuedHandler:
    """Log to `stream` (stderr) at `level` in `fmt`; returns the handler installed on the root
    logger, replacing (and closing) the one a previous call installed."""
    if fmt not in ("text", "json"):
        raise ValueError(f"log format {fmt!r}: expected text or json")
    threshold = parse_level(level)
    target = logging.StreamHandler(stream if stream is not None else sys.stderr)
    target.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler = QueuedHandler(target)
    handler.addFilter(CycleFilter())
    setattr(handler, _MARK, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(threshold)
    return handler

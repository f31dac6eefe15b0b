"""setup_logging writes structured lines (JSON or text) carrying extra fields and the cycle id."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import re
import threading
from collections.abc import Iterator

import pytest

from vscheduler.obs.logs import CYCLE_ID, QueuedHandler, cycle_context, setup_logging

log = logging.getLogger("vscheduler.test")


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[str]:
    for handler in logging.getLogger().handlers:
        handler.flush()  # the writer thread has written every record logged so far
    return stream.getvalue().splitlines()


def test_a_json_line_has_time_level_logger_message_and_the_extra_fields() -> None:
    stream = io.StringIO()
    setup_logging("info", "json", stream=stream)

    log.info("bound %s", "default/p1", extra={"pod": "default/p1", "node": "n1"})

    [line] = lines(stream)
    record = json.loads(line)
    assert record == {
        "time": record["time"],
        "level": "info",
        "logger": "vscheduler.test",
        "message": "bound default/p1",
        "pod": "default/p1",
        "node": "n1",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["time"])


def test_records_inside_a_cycle_context_carry_the_cycle_id_and_others_do_not() -> None:
    stream = io.StringIO()
    setup_logging("info", "json", stream=stream)

    with cycle_context("cycle-7"):
        log.info("pending", extra={"podgroup": "default/train"})
    log.info("between cycles")

    inside, outside = (json.loads(line) for line in lines(stream))
    assert inside["cycle"] == "cycle-7"
    assert inside["podgroup"] == "default/train"
    assert "cycle" not in outside
    assert CYCLE_ID.get() is None


def test_an_explicit_cycle_extra_wins_over_the_context() -> None:
    stream = io.StringIO()
    setup_logging("info", "json", stream=stream)

    with cycle_context("cycle-7"):
        log.info("late bind", extra={"cycle": "cycle-6"})

    assert json.loads(lines(stream)[0])["cycle"] == "cycle-6"


def test_an_exception_is_one_json_line_with_its_traceback() -> None:
    stream = io.StringIO()
    setup_logging("info", "json", stream=stream)

    try:
        raise ValueError("bad quantity")
    except ValueError:
        log.exception("conversion failed")

    [line] = lines(stream)
    record = json.loads(line)
    assert record["level"] == "error"
    assert "ValueError: bad quantity" in record["exc"]


def test_values_json_cannot_encode_are_written_as_text() -> None:
    stream = io.StringIO()
    setup_logging("info", "json", stream=stream)

    log.info("odd", extra={"waited": dt.timedelta(seconds=3), "obj": object()})

    record = json.loads(lines(stream)[0])
    assert record["waited"] == "0:00:03"
    assert record["obj"].startswith("<object object")


def test_a_text_line_puts_extra_fields_after_the_message_as_key_value() -> None:
    stream = io.StringIO()
    setup_logging("debug", "text", stream=stream)

    with cycle_context("cycle-3"):
        log.debug("unschedulable", extra={"pod": "default/p1", "reason": "0/3 nodes fit"})

    [line] = lines(stream)
    assert re.fullmatch(
        r'\S+ DEBUG   vscheduler\.test: unschedulable pod=default/p1 reason="0/3 nodes fit" '
        r"cycle=cycle-3",
        line,
    )


def test_the_level_filters_records() -> None:
    stream = io.StringIO()
    setup_logging("WARNING", "text", stream=stream)

    log.info("hidden")
    log.warning("shown")

    assert [line.split(": ", 1)[1] for line in lines(stream)] == ["shown"]


def test_setting_up_again_replaces_the_handler_instead_of_doubling_lines() -> None:
    first, second = io.StringIO(), io.StringIO()
    setup_logging("info", "text", stream=first)
    setup_logging("info", "json", stream=second)

    log.info("once")

    assert lines(first) == []
    assert len(lines(second)) == 1


def test_an_unknown_level_or_format_is_refused_before_anything_changes() -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    with pytest.raises(ValueError, match="log level 'loud'"):
        setup_logging("loud", "json")
    with pytest.raises(ValueError, match="log format 'xml'"):
        setup_logging("info", "xml")  # type: ignore[arg-type]
    assert root.handlers == before


class _HeldStream(io.StringIO):
    """A stream whose writes wait until `release` is set (a slow or full pipe)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.writing = threading.Event()

    def write(self, text: str) -> int:
        self.writing.set()
        assert self.release.wait(10), "the test never released the stream"
        return super().write(text)


def test_a_thread_that_logs_does_not_wait_for_the_stream() -> None:
    stream = _HeldStream()
    setup_logging("info", "json", stream=stream)

    log.info("first")
    assert stream.writing.wait(10)  # the writer is inside a write that does not return
    log.info("second")  # returns: the record waits on the queue, not the caller
    log.info("third")
    stream.release.set()

    assert [json.loads(line)["message"] for line in lines(stream)] == ["first", "second", "third"]


def test_the_message_is_made_when_logged_and_the_cycle_id_read_in_the_caller() -> None:
    stream = io.StringIO()
    setup_logging("info", "json", stream=stream)
    nodes = ["n1"]

    with cycle_context("cycle-9"):
        log.info("nodes %s", nodes)
    nodes.append("n2")  # changed before the writer formats the record

    record = json.loads(lines(stream)[0])
    assert (record["message"], record["cycle"]) == ("nodes ['n1']", "cycle-9")


def test_a_new_setup_writes_what_the_old_one_queued_then_replaces_it() -> None:
    first, second = io.StringIO(), io.StringIO()
    old = setup_logging("info", "json", stream=first)
    log.info("to the first")
    setup_logging("info", "text", stream=second)
    log.info("to the second")

    assert [json.loads(line)["message"] for line in first.getvalue().splitlines()] == [
        "to the first"
    ]
    assert lines(second)[0].endswith("vscheduler.test: to the second")
    assert old not in logging.getLogger().handlers


def test_a_warning_is_written_before_the_call_returns() -> None:
    stream = io.StringIO()
    setup_logging("info", "text", stream=stream)

    log.info("bound default/p1 to n1")
    log.warning("policy rejected")

    written = stream.getvalue().splitlines()  # no flush: the warning waited for its write
    assert [line.split(": ", 1)[1] for line in written] == [
        "bound default/p1 to n1",
        "policy rejected",
    ]


class _Failing(logging.Handler):
    """A target whose handling raises for one message (a broken filter, say)."""

    def __init__(self, stream: io.StringIO) -> None:
        super().__init__()
        self.stream = stream

    def handle(self, record: logging.LogRecord) -> bool:
        if record.getMessage() == "breaks":
            raise RuntimeError("a filter that raises")
        self.stream.write(record.getMessage() + "\n")
        return True


def test_the_writer_goes_on_after_a_record_it_could_not_write(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stream = io.StringIO()
    handler = QueuedHandler(_Failing(stream))
    try:
        for message in ("before", "breaks", "after"):
            handler.handle(logging.LogRecord("t", logging.INFO, __file__, 1, message, None, None))
        handler.flush()
        assert stream.getvalue().splitlines() == ["before", "after"]
        assert "RuntimeError: a filter that raises" in capsys.readouterr().err
    finally:
        handler.close()

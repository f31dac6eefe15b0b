"""sla: a job that has waited longer than its waiting time goes first and is let through.

A job's waiting time is its PodGroup annotation `volcano.sh/sla-waiting-time`, else its
annotation `sla-waiting-time` (Volcano reads both, in that order), else the plugin argument
`sla-waiting-time`; without any, the job has no SLA. Values are Go durations ("1h30m",
"90s"); its deadline is the PodGroup's creation time plus the waiting time. A lone pod's job
reads the pod's annotations. Time is the session's clock.

Registers (Volcano's sla plugin):
    compare_jobs     a job with a deadline before one without; earlier deadline first
    job_order_key    the same as a key: (no deadline, the deadline) (jobOrderKey, ours)
    vote_enqueue     PERMIT once the deadline is reached (now >= deadline), else ABSTAIN
    vote_pipelined   the same: a late job may keep a pipelined gang
    validate_job     a job whose annotation is not a positive Go duration is invalid, with a
                     message naming the PodGroup, the annotation and the value

Arguments:
    sla-waiting-time   Go duration > 0, no default: the waiting time of jobs without their own

Differences from Volcano, on purpose:
- A malformed or non-positive annotation makes the job invalid (it is not admitted and its pods
  say why) instead of a log line and the global waiting time; for the same reason its
  vote_enqueue is REJECT.
- A malformed or non-positive argument is a policy error; Volcano logs it and runs without a
  global waiting time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    JobEnqueueable,
    JobOrder,
    JobOrderKey,
    JobPipelined,
    JobState,
    JobValid,
    PluginArgsError,
    PluginSession,
    Status,
    Vote,
    parse_go_duration,
    unresolvable,
)

NAME: Final = "sla"
WAITING_TIME: Final = "sla-waiting-time"
ANNOTATIONS: Final = ("volcano.sh/sla-waiting-time", WAITING_TIME)
"""The PodGroup annotations holding a job's own waiting time, in order of precedence."""


def own_waiting_time(annotations: Mapping[str, str]) -> dt.timedelta | str | None:
    """The waiting time the annotations give, None when they give none, or the problem (a
    message naming the annotation and its value) when the first one present is not a positive
    Go duration."""
    for key in ANNOTATIONS:
        text = annotations.get(key)
        if text is None:
            continue
        try:
            seconds = parse_go_duration(text)
        except ValueError:
            return f"annotation {key}: must be a Go duration like '1h30m', got '{text}'"
        if seconds <= 0:
            return f"annotation {key}: must be a positive duration, got '{text}'"
        return dt.timedelta(seconds=seconds)
    return None


class Sla(JobOrder, JobOrderKey, JobValid, JobEnqueueable, JobPipelined):
    """The per-session plugin: every job's deadline (or problem), read once."""

    def __init__(self, session: PluginSession, default: dt.timedelta | None) -> None:
        self._session = session
        self.now = session.now
        self.deadlines: dict[str, dt.datetime | None] = {}
        self.problems: dict[str, str] = {}
        for key, job in session.jobs.items():
            wait = own_waiting_time(_annotations(job))
            if isinstance(wait, str):
                self.problems[key] = wait
                wait = None
            wait = wait or default
            self.deadlines[key] = None if wait is None else job.created + wait

    def compare_jobs(self, a: JobState, b: JobState) -> int:
        """Jobs with a deadline first, the earlier deadline first."""
        da, db = self.deadlines.get(a.key), self.deadlines.get(b.key)
        if da is None or db is None:
            return (da is None) - (db is None)
        return (da > db) - (da < db)

    def job_order_key(self, job: JobState) -> tuple[bool, dt.datetime | None]:
        """`compare_jobs` as a key: (no deadline, the deadline); two jobs without one are
        equal (`None == None`: their deadlines are never ordered)."""
        deadline = self.deadlines.get(job.key)
        return (deadline is None, deadline)

    def validate_job(self, job: JobState) -> Status | None:
        """Invalid when its waiting-time annotation cannot be read."""
        problem = self.problems.get(job.key)
        return None if problem is None else unresolvable(problem)

    def vote_enqueue(self, job: JobState) -> Vote:
        """PERMIT a job past its deadline; REJECT (with a note) one whose annotation is bad."""
        problem = self.problems.get(job.key)
        if problem is not None:
            self._session.note_job(job, f"podgroup {job.key} is not valid: {problem}")
            return Vote.REJECT
        return self.vote_pipelined(job)

    def vote_pipelined(self, job: JobState) -> Vote:
        """PERMIT a job past its deadline, ABSTAIN otherwise."""
        deadline = self.deadlines.get(job.key)
        if deadline is None or self.now < deadline:
            return Vote.ABSTAIN
        return Vote.PERMIT


def _annotations(job: JobState) -> Mapping[str, str]:
    """The PodGroup's annotations; a lone pod's job (no PodGroup object) has its pod's."""
    lone = next(iter(job.tasks.values()), None) if job.facts.synthetic else None
    return job.facts.annotations if lone is None else lone.facts.annotations


class Factory:
    """Lives as long as the policy; holds the global waiting time."""

    name = NAME
    plugin = Sla

    def __init__(self, default: dt.timedelta | None) -> None:
        self.default = default

    def open(self, session: PluginSession) -> Sla:
        """A fresh plugin for `session`."""
        return Sla(session, self.default)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read `sla-waiting-time` (a positive Go duration; absent: no global waiting time)."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    seconds = reader.duration(WAITING_TIME, 0.0)
    extra: tuple[str, ...] = ()
    if WAITING_TIME in arguments and seconds == 0 and not reader.problems:
        extra = (
            f"plugin {NAME}: arguments.{WAITING_TIME}: must be a positive duration, "
            f"got '{arguments[WAITING_TIME]}'",
        )
    try:
        reader.finish()
    except PluginArgsError as err:
        raise PluginArgsError(*err.problems, *extra) from None
    if extra:
        raise PluginArgsError(*extra)
    return Factory(dt.timedelta(seconds=seconds) if seconds else None)

"""overcommit: admit PodGroups while the overcommitted cluster can hold their minResources.

At session open: `idle = total * factor - used`, where `total` is the allocatable of the Ready
nodes, each resource multiplied by its factor (rounded down to whole units), and `used` is what
the pods on those nodes hold (Volcano's `node.Used`: every non-pipelined pod placed there,
releasing ones included). `inqueue` is what admitted jobs hold of that budget: for every job
admitted before this session, its reservation (the minResources of an Inqueue PodGroup; for a
Running PodGroup whose gang is placed, the part of its minResources not yet allocated) while its
queue would let it progress (`session.queue_allows_progress`: the allocatable point allows one
of its pending tasks, or it has none yet), and the minResources of every job admitted in this
session. The cluster totals and the reservation are the queue accounting's
(`cluster_total_and_used`, `reserved`), as proportion counts them. Which admitted jobs can
progress is asked once, at the first vote, when every plugin of the session is open.

Registers (Volcano's overcommit plugin):
    vote_enqueue   a PodGroup without minResources: PERMIT; otherwise PERMIT when
                   `inqueue + minResources <= idle` in every resource the minResources names
                   (a positive amount), else a REJECT `Refusal` naming the amounts (the pods'
                   pending message gives them)
    on_enqueued    the admitted PodGroup's minResources join `inqueue`

Arguments (Volcano's names):
    overcommit-factor            the factor for every resource (default 1.2)
    overcommit-factor.<resource> the factor for one resource, e.g. `overcommit-factor.cpu: 1.5`
Every factor must be a number >= 1.0; a smaller one is a policy error (Volcano logs a warning and
uses 1.2 instead).

As in Volcano, `pods` in a minResources is not compared, nor are names Volcano does not count
(`count/...`, `requests.*`, `limits.*`). A factor is applied as written in decimal (1.15 is
exactly 23/20), where Volcano multiplies float64s and can land a hair below the intended amount.

Difference from Volcano, on purpose (issue 11; volcano-sh/volcano#2304, #5006): Volcano counts
every admitted job in `inqueue`, including one its queue will never let allocate (proportion
holds the queue at its deserved share, or the queue is Closed). Such jobs then hold the budget
other queues need: queues weighted 1 and 3, 20 one-CPU jobs each, 16 CPU: queue a's surplus
jobs, admitted but held at a's deserved 4, fill the 19.2 CPU budget and queue b stays below
its deserved 12 with CPU idle. Here they hold nothing from the next session on, and the split
is 4 : 12. A job admitted in the session counts at once, so each session's admissions are
Volcano's. A queue with room for one more task keeps all its waiting jobs counted until that
room is taken, a cycle later.
"""

from __future__ import annotations

import fractions
from collections.abc import Mapping
from typing import Final

from vscheduler.plugin_api import (
    EMPTY,
    ArgumentReader,
    JobEnqueueable,
    JobEnqueued,
    JobState,
    PluginSession,
    Refusal,
    Resources,
    Vote,
    cluster_total_and_used,
    counted,
    format_amount,
    reserved,
    ungated_minimum,
)

NAME: Final = "overcommit"
FACTOR: Final = "overcommit-factor"
FACTOR_PREFIX: Final = "overcommit-factor."
DEFAULT_FACTOR: Final = 1.2


class Factors:
    """The overcommit factor of every resource: its own if given, else the default."""

    __slots__ = ("default", "own")

    def __init__(self, default: float, own: Mapping[str, float]) -> None:
        self.default = _exact(default)
        self.own = {name: _exact(value) for name, value in own.items()}

    def scale(self, res: Resources) -> Resources:
        """Each amount times its factor, rounded down."""
        return Resources({n: int(a * self.own.get(n, self.default)) for n, a in res.items()})


def _exact(value: float) -> fractions.Fraction:
    """The factor as its shortest decimal reads (1.2 is 6/5, not the float below it)."""
    return fractions.Fraction(repr(value))


class Overcommit(JobEnqueueable, JobEnqueued):
    """The per-session plugin: idle (overcommitted) and inqueue resources of the cluster."""

    def __init__(self, session: PluginSession, factors: Factors) -> None:
        total, used = cluster_total_and_used(session)
        self.idle = factors.scale(total) - used
        self._session = session
        self._held = [
            (job, held)
            for job in session.podgroup_jobs
            if job.facts.min_resources is not None and (held := reserved(job))
        ]
        """The jobs admitted before this session and what their minResources still reserve."""
        self._inqueue: Resources | None = None

    @property
    def inqueue(self) -> Resources:
        """What admitted jobs hold of the budget: the reservation of each job admitted before
        this session whose queue would let it progress (asked at the first vote, once every
        plugin is open), plus the minResources of every job admitted in this session."""
        if self._inqueue is None:
            progress = self._session.queue_allows_progress
            self._inqueue = EMPTY
            for job, held in self._held:
                if progress(job):
                    self._inqueue = self._inqueue + held
        return self._inqueue

    def vote_enqueue(self, job: JobState) -> Vote | Refusal:
        """PERMIT when the job's minResources fit beside what is already admitted; else a
        `Refusal` with the amounts."""
        if job.facts.min_resources is None:
            return Vote.PERMIT
        minimum = counted(job.facts.min_resources)
        wanted = self.inqueue + minimum
        short = [n for n, a in minimum.items() if a > 0 and wanted.get(n) > self.idle.get(n)]
        if not short:
            return Vote.PERMIT

        def only(res: Resources) -> str:
            return ", ".join(f"{n} {format_amount(n, res.get(n))}" for n in short)

        return Refusal(
            f"minResources {only(minimum)} + what admitted jobs hold ({only(self.inqueue)})"
            " exceed the Ready nodes' allocatable times the overcommit factor, less what is in"
            f" use ({only(self.idle)})"
        )

    def on_enqueued(self, job: JobState) -> None:
        """The admitted job's minResources are now reserved."""
        if job.facts.min_resources is not None:
            self._inqueue = self.inqueue + ungated_minimum(job)


class Factory:
    """Lives as long as the policy; holds the parsed factors."""

    name = NAME
    plugin = Overcommit

    def __init__(self, factors: Factors) -> None:
        self.factors = factors

    def open(self, session: PluginSession) -> Overcommit:
        """A fresh plugin for `session`."""
        return Overcommit(session, self.factors)


def build(arguments: Mapping[str, object]) -> Factory:
    """Read `overcommit-factor` (default 1.2) and any `overcommit-factor.<resource>`."""
    reader = ArgumentReader(arguments, owner=f"plugin {NAME}")
    default = reader.float(FACTOR, DEFAULT_FACTOR, minimum=1.0)
    own = {
        key.removeprefix(FACTOR_PREFIX): reader.float(key, default, minimum=1.0)
        for key in reader.keys_with_prefix(FACTOR_PREFIX)
    }
    reader.finish()
    return Factory(Factors(default, own))

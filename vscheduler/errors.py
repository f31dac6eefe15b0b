"""The exception tree. Every error a user can meet names the object and the field.

VSchedulerError
├── ConfigError                  the scheduler policy is wrong
│   ├── PolicyError              parse / structure errors (carries every error found)
│   └── PluginArgsError          a plugin's or action's arguments are wrong
├── InputError                   a Kubernetes object (or a snapshot file) is malformed
│   └── QuantityError            a resource quantity string is malformed
├── ClusterError                 a call to the API server failed
│   ├── TransientClusterError    worth retrying with backoff (429, 5xx, reset, timeout)
│   │   └── UnreachableError     no HTTP answer at all: part of an outage
│   ├── ConflictError            the object changed or is already bound: drop the decision
│   ├── NotFoundError            the object is gone
│   ├── DisruptionBudgetError    a PodDisruptionBudget refused an eviction (429)
│   └── ExpiredError             the watch's resourceVersion is too old (410): list again
├── NotSentError                 a write refused before it left the process
│   ├── FencedError              this replica no longer holds the lease
│   ├── ReadOnlyError            the client is read-only (dry run, the live tools)
│   └── StaleDecisionError       checked against the cache, the decision no longer holds
└── InvariantError               the framework broke its own bookkeeping: abort the cycle

tests/unit/docs/test_front_doors.py keeps this tree equal to the classes below.
"""

from __future__ import annotations

from collections.abc import Sequence


class VSchedulerError(Exception):
    """Root of every error vscheduler raises on purpose."""


class ConfigError(VSchedulerError):
    """The scheduler policy is wrong."""


def one_line(text: str) -> str:
    """`text` with every unprintable character (newline, tab, zero-width space) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


class PolicyError(ConfigError):
    """One or more errors in a policy document; `errors` lists each, precisely, each on one line
    (a key or value that holds a newline or another unprintable character shows it escaped)."""

    def __init__(self, errors: Sequence[str], *, source: str = "policy") -> None:
        self.errors = tuple(one_line(error) for error in errors)
        self.source = source
        super().__init__(f"{source}: " + "; ".join(self.errors))


class PluginArgsError(ConfigError):
    """A plugin's or an action's `arguments` are wrong; `problems` lists each one."""

    def __init__(self, *problems: str) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class InputError(VSchedulerError):
    """A Kubernetes object or snapshot document is malformed."""


class QuantityError(InputError):
    """A resource quantity string (`500m`, `1Gi`, `2e3`) is malformed."""


class ClusterError(VSchedulerError):
    """A call to the API server failed; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class TransientClusterError(ClusterError):
    """Worth retrying with backoff (429 throttling, 5xx, connection reset, timeout).

    `maybe_applied`: the request may have reached the API server and taken effect although no
    answer came back (a connection reset or a read timeout after sending, a 500 or 504); a
    bind that ends so is resolved from the watch, never decided again at once."""

    def __init__(
        self, message: str, *, status: int | None = None, maybe_applied: bool = False
    ) -> None:
        self.maybe_applied = maybe_applied
        super().__init__(message, status=status)


class UnreachableError(TransientClusterError):
    """The API server could not be reached or the connection broke (no HTTP answer): part of an
    outage, which `vscheduler.kube.client` reports once, with its duration, when it ends; the
    callers log each such failure at info level only."""


class ConflictError(ClusterError):
    """The object changed or is already bound: drop the decision, let the watch resync."""


class NotFoundError(ClusterError):
    """The object is gone."""


class DisruptionBudgetError(ClusterError):
    """The Eviction API refused: a PodDisruptionBudget allows no disruption now (429).
    `retry_after`: the seconds the API server asked to wait (its `Retry-After` header, else the
    Status's `details.retryAfterSeconds`), None when it named none."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, status=status)


class ExpiredError(ClusterError):
    """The watch's resourceVersion is too old (410 Gone): list again."""


class NotSentError(VSchedulerError):
    """A write refused before it left the process: nothing reached the API server."""


class FencedError(NotSentError):
    """A write refused before it left the process: this replica no longer holds the lease (or
    the write was queued under an earlier lease)."""


class ReadOnlyError(NotSentError):
    """A write refused before it left the process: the client is read-only (`run --dry-run`,
    `snapshot`, `explain`, `queues`, `compare-decisions`)."""


class StaleDecisionError(NotSentError):
    """A write refused before it left the process: checked against the cache just before
    sending, the decision no longer holds (the node is gone or cordoned, the pod was deleted,
    replaced or bound meanwhile)."""


class InvariantError(VSchedulerError):
    """The framework found its own bookkeeping broken; nothing of the cycle is committed."""

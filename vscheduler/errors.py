"""The exception tree. Every error a user can meet names the object and the field.

VSchedulerError
├── ConfigError             the scheduler policy is wrong
│   ├── PolicyError         parse / structure errors (carries every error found)
│   └── PluginArgsError     a plugin's or action's arguments are wrong
├── InputError              a Kubernetes object (or a snapshot file) is malformed
│   └── QuantityError       a resource quantity string is malformed
└── InvariantError          the framework broke its own bookkeeping: abort the cycle
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
    """Worth retrying with backoff (429 throttling, 5xx, connection reset, timeout)."""


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


class FencedError(VSchedulerError):
    """A write refused before it left the process: this replica no longer holds the lease."""


class InvariantError(VSchedulerError):
    """The framework found its own bookkeeping broken; nothing of the cycle is committed."""

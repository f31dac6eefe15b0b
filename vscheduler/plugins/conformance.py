"""conformance: critical pods are never victims.

Registers `select_preemptees`, `select_reclaimees` and `select_gang_victims` (unifiedEvictable,
for gangpreempt and gangreclaim): from the candidates it keeps every pod
except those of priority class `system-cluster-critical` or `system-node-critical` and those in
namespace `kube-system` (Volcano's conformance plugin). It takes no arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    ArgumentReader,
    EvictionContext,
    PluginSession,
    Preemptable,
    Reclaimable,
    TaskState,
    UnifiedEvictable,
)

NAME: Final = "conformance"
CRITICAL_CLASSES: Final = frozenset({"system-cluster-critical", "system-node-critical"})
SYSTEM_NAMESPACE: Final = "kube-system"


def is_critical(task: TaskState) -> bool:
    """A pod the cluster cannot do without."""
    facts = task.facts
    return facts.priority_class_name in CRITICAL_CLASSES or facts.namespace == SYSTEM_NAMESPACE


class Conformance(Preemptable, Reclaimable, UnifiedEvictable):
    """The per-session plugin."""

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Every candidate but the critical ones."""
        return tuple(t for t in candidates if not is_critical(t))

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Every candidate but the critical ones."""
        return tuple(t for t in candidates if not is_critical(t))

    def select_gang_victims(
        self, context: EvictionContext, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """Every candidate but the critical ones."""
        return tuple(t for t in candidates if not is_critical(t))


class Factory:
    """Lives as long as the policy."""

    name = NAME
    plugin = Conformance

    def open(self, session: PluginSession) -> Conformance:
        """A fresh plugin for `session`."""
        return Conformance()


def build(arguments: Mapping[str, object]) -> Factory:
    """conformance takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()

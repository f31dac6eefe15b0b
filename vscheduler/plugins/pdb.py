"""pdb: never choose a victim whose eviction a PodDisruptionBudget forbids (Volcano's pdb plugin).

Registers:

- `filter_victims(victims)` (victimFilter): the victims kept, in their order, greedily: a victim
  is kept only if every budget selecting it still allows a disruption, and keeping it uses one
  disruption of each of them. A victim no budget selects is always kept.
- `select_preemptees(preemptor, candidates)` / `select_reclaimees(reclaimer, candidates)`
  (preemptable, reclaimable): the same filter over the candidates, so preempt and reclaim never
  choose a protected pod. Always answers (never ABSTAIN).
- `on_deallocate` / `on_allocate` (event handlers): an eviction made in this session uses one
  disruption of every budget selecting the pod; an eviction rolled back gives it back. Each
  filter call starts from what is left, so several preemptors in one cycle cannot overdraw a
  budget together.

A budget selects a pod of its own namespace whose labels match its selector (policy/v1: a null
selector selects nothing, an empty one every pod of the namespace). It allows
`status.disruptionsAllowed` disruptions; a pod the budget already lists in
`status.disruptedPods` is not counted against it (the API server counted it), as in Volcano. A
malformed PodDisruptionBudget reaches the plugin as a budget protecting its whole namespace.

Differences from Volcano. Volcano registers this filter as a victim-tasks function, whose
answers the shuffle action unions with the other plugins' proposals: pdb would then propose
every running pod it does not protect. Here it is a filter (its own extension point,
`victimFilter`), asked after the proposals, that may only remove victims. Volcano also counts a
rejected victim against its budgets and reads a pod without labels as selected by no budget
(policy/v1beta1's empty selector); here a rejected victim uses nothing and an empty selector
selects every pod of the namespace, as the Eviction API does. It takes no arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    AllocateEvent,
    ArgumentReader,
    DeallocateEvent,
    DisruptionBudget,
    PluginSession,
    Preemptable,
    Reclaimable,
    TaskState,
    TaskStatus,
    VictimFilter,
    spend,
)

NAME: Final = "pdb"


class Pdb(Preemptable, Reclaimable, VictimFilter, AllocateEvent, DeallocateEvent):
    """The per-session plugin: the budgets, and the disruptions this session has used."""

    def __init__(self, session: PluginSession) -> None:
        self._budgets: tuple[DisruptionBudget, ...] = session.snapshot.disruption_budgets
        self._by_namespace: dict[str, list[int]] = {}
        for k, budget in enumerate(self._budgets):
            if budget.selector is not None:
                self._by_namespace.setdefault(budget.namespace, []).append(k)
        self._used = [0] * len(self._budgets)
        self._evicted: set[str] = set()
        self._counting: dict[str, tuple[int, ...]] = {}

    def _budgets_of(self, task: TaskState) -> tuple[int, ...]:
        """Indices of the budgets that select `task` and count its disruption."""
        found = self._counting.get(task.uid)
        if found is None:
            facts = task.facts
            found = tuple(
                k
                for k in self._by_namespace.get(facts.namespace, ())
                if self._budgets[k].counts(facts.namespace, facts.name, facts.labels)
            )
            self._counting[task.uid] = found
        return found

    def filter_victims(self, victims: Sequence[TaskState]) -> tuple[TaskState, ...]:
        """The victims every selecting budget still allows, in order, greedily."""
        pairs = zip(self._budgets, self._used, strict=True)
        left = [budget.disruptions_allowed - used for budget, used in pairs]
        return tuple(t for t in victims if spend(left, self._budgets_of(t)) is None)

    def select_preemptees(
        self, preemptor: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """The candidates no budget protects (greedily, in order)."""
        return self.filter_victims(candidates)

    def select_reclaimees(
        self, reclaimer: TaskState, candidates: Sequence[TaskState]
    ) -> tuple[TaskState, ...]:
        """The candidates no budget protects (greedily, in order)."""
        return self.filter_victims(candidates)

    def on_deallocate(self, task: TaskState) -> None:
        """An eviction in this session uses a disruption of each budget selecting the pod."""
        if task.status is TaskStatus.RELEASING and task.uid not in self._evicted:
            self._evicted.add(task.uid)
            for k in self._budgets_of(task):
                self._used[k] += 1

    def on_allocate(self, task: TaskState) -> None:
        """An eviction rolled back gives its disruptions back."""
        if task.uid in self._evicted:
            self._evicted.discard(task.uid)
            for k in self._budgets_of(task):
                self._used[k] -= 1


class Factory:
    """Lives as long as the policy; holds no state across cycles (the budgets' status does)."""

    name = NAME
    plugin = Pdb

    def open(self, session: PluginSession) -> Pdb:
        """A fresh plugin for `session`."""
        return Pdb(session)


def build(arguments: Mapping[str, object]) -> Factory:
    """pdb takes no arguments."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()

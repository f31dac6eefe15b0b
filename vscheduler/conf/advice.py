"""Warnings about a valid policy that probably does not do what its author wants.

`validate-config` prints them (exit code 0: the policy loads): no `tiers`, or no plugin in them
(nothing filters, orders or keeps gangs whole); no `predicates` (taints, tolerations, node
selectors and affinity are ignored); no `gang` (a gang's pods may bind one by one, a part of a
gang may run); gangpreempt or gangreclaim in the actions beside preempt or reclaim (Volcano's
design says not to: both kinds then evict in one cycle, each by its own rules; Volcano does not
refuse such a policy, nor does vscheduler). Pure: reads a parsed Policy, decides nothing about
validity.
"""

from __future__ import annotations

from vscheduler.conf.schema import Policy


def policy_warnings(policy: Policy) -> tuple[str, ...]:
    """Each warning a sentence naming the missing key or plugin."""
    if not policy.tiers:
        return (
            "tiers: missing or empty: no plugin runs, so taints, tolerations and affinity are "
            "ignored and gangs may split",
        )
    names = {plugin.name for plugin in policy.plugins()}
    found: list[str] = []
    if "predicates" not in names:
        found.append(
            "tiers: no 'predicates' plugin: taints, tolerations, node selectors and affinity "
            "are ignored"
        )
    if "gang" not in names:
        found.append(
            "tiers: no 'gang' plugin: gangs may split (a PodGroup's pods bind one by one, "
            "whatever its minMember)"
        )
    found.extend(_mixed_eviction(policy))
    return tuple(found)


def _mixed_eviction(policy: Policy) -> list[str]:
    """A warning when the gang-aware actions share the action list with the legacy ones."""
    gang = [a for a in policy.actions if a in ("gangpreempt", "gangreclaim")]
    legacy = [a for a in policy.actions if a in ("preempt", "reclaim")]
    if not gang or not legacy:
        return []
    return [
        f"actions: {', '.join(gang)} configured with {', '.join(legacy)}: Volcano's design"
        " says the gang-aware actions must not be configured together with the legacy ones"
        " (both kinds evict in the same cycle, each by its own rules)"
    ]

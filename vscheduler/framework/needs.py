"""What a plugin factory declares it needs of the rest of the policy and of the scheduler.

Owns `Needs` (an optional `needs` attribute of a plugin factory, read with `needs_of`) and the
rules it can declare: the node-usage periods the plugin reads, the ConfigMaps it reads from the
snapshot, the plugins it conflicts with in one tier when one of its flags is on, whether binds
bind their pods' volumes first, and how long a bind waits for them.
`framework.registry.build` collects every factory's needs in one place, so the config layer
never names a plugin. Must not know any plugin by name: each plugin declares its own needs.
"""

from __future__ import annotations

import dataclasses
from typing import Final


@dataclasses.dataclass(frozen=True, slots=True)
class TierConflict:
    """With the declaring plugin's `flag` on, `plugin` must not be in the same tier."""

    flag: str
    plugin: str

    def problem(self, declarer: str) -> str:
        """The error, as a policy's reader sees it."""
        return f"{declarer} with {self.flag}: true conflicts with {self.plugin} in one tier"


@dataclasses.dataclass(frozen=True, slots=True)
class Needs:
    """A factory's declared needs; a factory without a `needs` attribute needs nothing.

    `usage_periods`: the averaging periods of node usage the plugin reads (the collector queries
    each; one that is not a PromQL duration is left out: the plugin reports its own argument
    error, or finds no value). `config_maps`: the (namespace, name) of every ConfigMap the plugin
    reads from the snapshot (the runtime watches them, `snapshot` and `simulate` load them).
    `conflicts`: rules checked once per tier by `registry.build`. `volume_binding`: before a
    pod's Binding, the effects bind its volumes to the node and wait for them to be bound
    (kube-scheduler's VolumeBinding PreBind; on when some plugin of the policy declares it, as
    Volcano runs the PreBind only when its predicates plugin enables volume binding).
    `volume_bind_timeout`: the seconds a bind waits for its pod's volumes to be bound (the
    effects read it from the `Pipeline`; the first plugin declaring one sets it; None: no
    opinion).
    """

    usage_periods: tuple[str, ...] = ()
    config_maps: tuple[tuple[str, str], ...] = ()
    conflicts: tuple[TierConflict, ...] = ()
    volume_binding: bool = False
    volume_bind_timeout: float | None = None


NOTHING: Final = Needs()


def needs_of(factory: object) -> Needs:
    """The factory's `needs` attribute, or `NOTHING` when it declares none."""
    needs = getattr(factory, "needs", NOTHING)
    if not isinstance(needs, Needs):
        raise TypeError(f"plugin factory {factory!r}: needs must be a Needs, got {needs!r}")
    return needs

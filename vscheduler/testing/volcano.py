"""Volcano's unit-test tiers as policy text: the one place scenario tests transcribe a Go
`[]conf.Tier` built by hand.

    POLICY = go_tiers("reclaim", gang=("enableReclaimable", "enableJobStarving"), ...)

Volcano's tests build their `conf.PluginOption`s without the defaults the configuration loader
applies, so an option left nil there is *off* (`framework/util.go` `isEnabled`); the policy
written here switches every point flag of every plugin explicitly: on for the flags named, off
for the others. A named flag that is no point's but a plugin entry's (`enableHierarchy`) is
written on; the others of its kind are left out, as the Go option leaves them nil. Any other
name is an error (a misspelt flag would otherwise leave its point silently off).
Must not: know any plugin's behaviour.
"""

from __future__ import annotations

from typing import Final

from vscheduler.conf.schema import ENABLE_FLAGS
from vscheduler.framework.points import POINTS

FLAGS: Final = tuple(sorted({p.flag for p in POINTS if p.flag}))
"""Every point flag a plugin entry accepts."""


def go_tiers(actions: str, *tiers: dict[str, tuple[str, ...]], **one: tuple[str, ...]) -> str:
    """Policy text running `actions` over `tiers` (each: plugin name -> the flags its Go option
    enables), or over the one tier given as keyword arguments."""
    lines = [f'actions: "{actions}"', "tiers:"]
    for tier in (*tiers, *((one,) if one else ())):
        lines.append("- plugins:")
        for name, enabled in tier.items():
            unknown = sorted(set(enabled) - set(FLAGS) - set(ENABLE_FLAGS))
            if unknown:
                raise ValueError(f"{name}: not a plugin entry's flag: {', '.join(unknown)}")
            lines.append(f"  - name: {name}")
            lines += [f"    {flag}: {'true' if flag in enabled else 'false'}" for flag in FLAGS]
            lines += [f"    {flag}: true" for flag in enabled if flag not in FLAGS]
    return "\n".join(lines) + "\n"

"""The profiled child: `vscheduler <argv>` in this process with cProfile on every thread.

Owns: `profiled_child` (run by `python -m bench.runtime --profiled-child OUT -- ARGV...`) and the
merged profile plus per-thread-group summary it writes.
Must not: be imported by the scheduler; it patches `threading.Thread.run` for its own process.
"""

from __future__ import annotations

import cProfile
import pstats
import re
import threading
from collections.abc import Sequence


def profiled_child(out: str, argv: Sequence[str]) -> int:
    """Run `vscheduler <argv>` in this process with cProfile on every thread; on exit, write the
    merged profile to `out` and a per-thread-group summary to `out`.txt."""
    from vscheduler import cli

    profiles: list[tuple[str, cProfile.Profile]] = []
    lock = threading.Lock()
    original = threading.Thread.run

    def run(self: threading.Thread) -> None:
        prof = cProfile.Profile()
        with lock:
            profiles.append((self.name, prof))
        prof.enable()
        try:
            original(self)
        finally:
            prof.disable()

    threading.Thread.run = run  # type: ignore[method-assign]
    main = cProfile.Profile()
    profiles.append(("main", main))
    main.enable()
    try:
        return cli.main(list(argv))
    finally:
        main.disable()
        _write_profiles(out, profiles)


def _write_profiles(out: str, profiles: list[tuple[str, cProfile.Profile]]) -> None:
    groups: dict[str, pstats.Stats] = {}
    merged: pstats.Stats | None = None
    for name, prof in profiles:
        prof.create_stats()
        if not getattr(prof, "stats", None):
            continue
        group = re.sub(r"\d+", "N", name)
        if group in groups:
            groups[group].add(prof)
        else:
            groups[group] = pstats.Stats(prof)
        if merged is None:
            merged = pstats.Stats(prof)
        else:
            merged.add(prof)
    if merged is None:
        return
    merged.dump_stats(out)
    with open(f"{out}.txt", "w", encoding="utf-8") as handle:
        for group, stats in sorted(groups.items()):
            handle.write(f"==================== thread group {group}\n")
            stats.stream = handle  # type: ignore[attr-defined]
            stats.sort_stats("cumulative").print_stats(35)
            stats.sort_stats("tottime").print_stats(25)

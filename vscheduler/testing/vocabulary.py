"""The names fuzzed clusters draw their objects from (`strategies`, `volume_strategies`).

Owns: the namespaces, node names and label vocabulary every generated object shares, so a
reference (a selector, a node affinity term, a claim's selected node) sometimes matches.
Must not: hold strategies, or names only one kind of object uses.
"""

from __future__ import annotations

from typing import Final

NAMESPACES: Final = ("default", "team-a")
NODE_NAMES: Final = ("n0", "n1", "n2")
"""A cluster's nodes are a prefix of these; a reference may name one not drawn (missing)."""
HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_KEYS: Final = (
    *("zone", "disk", HOSTNAME, "example.com/odd-key", "app"),
    "volcano.sh/nodegroup-name",
)
LABEL_VALUES: Final = ("a", "b", "ssd", "1", "100", "", "x-y.z")

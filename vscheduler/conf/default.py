"""The built-in scheduler policy, used when no policy is given.

Volcano's default actions and tiers, with binpack in the second tier as Volcano's documented default
configuration and its installers ship it. `config/default-policy.yaml` holds the same text.
"""

from __future__ import annotations

from typing import Final

DEFAULT_POLICY_TEXT: Final[str] = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""

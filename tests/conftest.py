"""Hypothesis profiles for every test: `unit` (the default, bounded) and `nightly` (at length).

HYPOTHESIS_PROFILE=nightly scripts/check --unit runs the property and fuzz tests that take their
example count from the profile (those without their own `max_examples`) twenty times longer.
"""

from __future__ import annotations

import os

from hypothesis import settings

# No per-example deadline: a deadline is a timed assertion, and on a loaded 2-core machine an
# example that takes 200 ms is no failure of the code (it made a property test fail as Flaky).
settings.register_profile("unit", max_examples=100, deadline=None)
settings.register_profile("nightly", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "unit"))

"""Waiting for the cluster: poll a check until it holds, or fail saying what was awaited.

Owns: `wait_for`, the one polling loop of the tests (every 0.1 s, up to a timeout).
Must not: know any object or backend (callers pass the check).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(what: str, check: Callable[[], T | None], timeout: float = 30.0) -> T:
    """Poll `check` every 0.1 s until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)

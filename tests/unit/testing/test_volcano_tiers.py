"""`go_tiers`: Volcano's hand-built tiers as policy text."""

from __future__ import annotations

import pytest

from vscheduler.testing.volcano import go_tiers


def test_the_flags_named_are_on_and_every_other_point_flag_is_off() -> None:
    text = go_tiers("allocate", capacity=("enabledAllocatable",))

    assert "    enabledAllocatable: true\n" in text
    assert "    enableJobEnqueued: false\n" in text


def test_a_misspelt_flag_is_an_error_not_a_point_left_off() -> None:
    with pytest.raises(ValueError, match="capacity: not a plugin entry's flag: enableAllocatable"):
        go_tiers("allocate", capacity=("enableAllocatable",))


def test_a_plugin_entrys_flag_that_is_no_points_is_written_on() -> None:
    text = go_tiers("allocate", drf=("enableHierarchy",))

    assert "    enableHierarchy: true\n" in text

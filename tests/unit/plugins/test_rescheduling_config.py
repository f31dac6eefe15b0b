"""rescheduling's arguments: Volcano's names and defaults, vscheduler's safety arguments, Go
durations, and one clear message per problem naming the plugin and the argument's path."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from vscheduler import catalog
from vscheduler.errors import PluginArgsError, PolicyError
from vscheduler.plugins import rescheduling
from vscheduler.plugins.rescheduling.config import Config, LnuParams, parse

OWNER = "plugin rescheduling: arguments."


def problems(arguments: dict[str, object]) -> list[str]:
    with pytest.raises(PluginArgsError) as caught:
        parse(arguments)
    return [p.removeprefix(OWNER) for p in caught.value.problems]


def test_the_defaults_are_volcanos_and_do_nothing_until_thresholds_are_set() -> None:
    config = parse({})

    assert config == Config()
    assert config.interval == dt.timedelta(minutes=5)
    assert config.metrics_period == "10m"
    assert config.strategies == ("lowNodeUtilization",)
    assert config.lnu.thresholds == {"cpu": 100, "memory": 100, "pods": 100}
    assert config.lnu.targets == {"cpu": 100, "memory": 100, "pods": 100}
    assert config.queues == frozenset()
    assert config.labels == {}
    assert config.consecutive == 3
    assert config.cooldown == dt.timedelta(minutes=15)
    assert config.avoid_for == dt.timedelta(minutes=10)


def test_the_design_documents_example_is_read_whole() -> None:
    config = parse(
        {
            "interval": "5m",
            "metricsPeriod": "5m",
            "strategies": [
                {"name": "offlineOnly"},
                {"name": "lowPriorityFirst"},
                {
                    "name": "lowNodeUtilization",
                    "params": {
                        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
                        "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50},
                    },
                },
            ],
            "queueSelector": ["default", "test-queue"],
            "labelSelector": {"business": "offline", "team": "test"},
        }
    )

    assert config.strategies == ("offlineOnly", "lowPriorityFirst", "lowNodeUtilization")
    assert config.lnu == LnuParams(
        thresholds={"cpu": 20, "memory": 20, "pods": 20},
        targets={"cpu": 50, "memory": 50, "pods": 50},
    )
    assert config.metrics_period == "5m"
    assert config.queues == frozenset({"default", "test-queue"})
    assert config.labels == {"business": "offline", "team": "test"}


def test_unset_thresholds_keep_100_and_volcanos_extra_lnu_params_are_accepted() -> None:
    config = parse(
        {
            "strategies": [
                {
                    "name": "lowNodeUtilization",
                    "params": {
                        "thresholds": {"cpu": 20},
                        "targetThresholds": {"cpu": 80.5},
                        "thresholdPriorityClassName": "system-cluster-critical",
                        "nodeFit": True,
                    },
                }
            ]
        }
    )

    assert config.lnu.thresholds == {"cpu": 20, "memory": 100, "pods": 100}
    assert config.lnu.targets == {"cpu": 80.5, "memory": 100, "pods": 100}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("90s", 90), ("1h30m", 5400), ("0s", 0), ("2m30s", 150), ("500ms", 0.5)],
)
def test_durations_are_read_as_go_reads_them(text: str, expected: float) -> None:
    config = parse({"interval": text, "workloadCooldown": text, "avoidNodeFor": text})

    seconds = dt.timedelta(seconds=expected)
    assert (config.interval, config.cooldown, config.avoid_for) == (seconds, seconds, seconds)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            {"interval": "5 minutes"},
            "interval: must be a duration like '30s', '5m', '1h30m' or '500ms', got '5 minutes'",
            id="interval",
        ),
        pytest.param(
            {"workloadCooldown": 15},
            "workloadCooldown: must be a duration like '30s', '5m', '1h30m' or '500ms', got 15",
            id="cooldown as a number",
        ),
        pytest.param(
            {"avoidNodeFor": "-1m"},
            "avoidNodeFor: must not be negative, got '-1m'",
            id="negative",
        ),
        pytest.param(
            {"metricsPeriod": "1.5h"},
            "metricsPeriod: must be a duration like '10m', '1h' or '1h30m', got '1.5h'",
            id="a period Prometheus cannot read",
        ),
        pytest.param(
            {"metricsPeriod": "0m"},
            "metricsPeriod: must be a duration like '10m', '1h' or '1h30m', got '0m'",
            id="an empty period",
        ),
        pytest.param(
            {"consecutiveCollections": 0},
            "consecutiveCollections: must be an integer >= 1 and <= 10, got 0",
            id="no collection",
        ),
        pytest.param(
            {"consecutiveCollections": 11},
            "consecutiveCollections: must be an integer >= 1 and <= 10, got 11",
            id="more than the collector keeps",
        ),
        pytest.param(
            {"queueSelector": "default"},
            "queueSelector: must be a list of names, got 'default'",
            id="one queue not in a list",
        ),
        pytest.param(
            {"labelSelector": {"offline": True}},
            "labelSelector.offline: must be a string (quote it), got True",
            id="an unquoted boolean label value",
        ),
        pytest.param(
            {"labelSelector": ["a=b"]},
            "labelSelector: must be a mapping of labels, got a list",
            id="a selector string list",
        ),
        pytest.param(
            {"strategies": []},
            "strategies: must be a non-empty list of {name, params}, got a list",
            id="no strategy",
        ),
        pytest.param(
            {"strategies": ["offlineOnly"]},
            "strategies[0]: must be a mapping {name, params}, got 'offlineOnly'",
            id="a bare name",
        ),
        pytest.param(
            {"strategies": [{"params": {}}]},
            "strategies[0].name: is required",
            id="no name",
        ),
        pytest.param(
            {"intervall": "5m"},
            "intervall: unknown argument; did you mean 'interval'?",
            id="a misspelt argument",
        ),
    ],
)
def test_a_malformed_argument_is_named_with_what_was_expected(
    arguments: dict[str, object], expected: str
) -> None:
    assert problems(arguments) == [expected]


def test_an_unknown_strategy_is_named_with_a_suggestion() -> None:
    assert problems({"strategies": [{"name": "lowNodeUtilisation"}]}) == [
        "strategies[0].name: must be one of 'bigObjectFirst', 'lowNodeUtilization', "
        "'lowPriorityFirst', 'moreReplicasFirst', 'offlineOnly', 'shortLifeTimeFirst', "
        "got 'lowNodeUtilisation'; did you mean 'lowNodeUtilization'?"
    ]


def test_problems_inside_a_strategy_name_their_path() -> None:
    found = problems(
        {
            "strategies": [
                {"name": "offlineOnly", "params": {"x": 1}},
                {"name": "offlineOnly"},
                {
                    "name": "lowNodeUtilization",
                    "params": {
                        "thresholds": {"cpu": 90, "memroy": 10},
                        "targetThresholds": {"cpu": 80, "memory": "high", "pods": 101},
                    },
                },
            ]
        }
    )

    assert sorted(found) == [
        "strategies[0].params: offlineOnly takes no params",
        "strategies[1].name: 'offlineOnly' is listed twice",
        "strategies[2].params.targetThresholds.memory: must be a number >= 0 and <= 100, "
        "got 'high'",
        "strategies[2].params.targetThresholds.pods: must be a number >= 0 and <= 100, got 101",
        "strategies[2].params.thresholds.cpu: must not exceed targetThresholds.cpu (80), got 90",
        "strategies[2].params.thresholds.memroy: unknown argument; "
        "did you mean 'strategies[2].params.thresholds.memory'?",
    ]


def test_a_threshold_map_that_is_not_a_map_is_named() -> None:
    found = problems({"strategies": [{"name": "lowNodeUtilization", "params": {"thresholds": 20}}]})

    assert found == ["strategies[0].params.thresholds: must be a mapping, got 20"]


def test_a_bad_policy_fails_to_load_naming_the_plugin_entry() -> None:
    text = yaml.safe_dump(
        {
            "actions": "shuffle",
            "tiers": [{"plugins": [{"name": "rescheduling", "arguments": {"interval": "often"}}]}],
        }
    )

    with pytest.raises(PolicyError) as caught:
        catalog.load_pipeline(text)

    assert caught.value.errors == (
        "tiers[0].plugins[0]: plugin rescheduling: arguments.interval: must be a duration like "
        "'30s', '5m', '1h30m' or '500ms', got 'often'",
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2562047h", 2562047 * 3600), ("9223372036854775807ns", 9223372036.854775807)],
)
def test_a_duration_up_to_gos_longest_is_read(text: str, seconds: float) -> None:
    assert parse({"interval": text}).interval == dt.timedelta(seconds=seconds)


AT_MOST_GOS_LONGEST = "must be at most 2562047h47m16.854775807s (Go's longest duration)"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("9223372036854775808ns", AT_MOST_GOS_LONGEST),
        ("2562048h", AT_MOST_GOS_LONGEST),
        ("2562047h47m16.854775808s", AT_MOST_GOS_LONGEST),
        ("-2562048h", "must not be negative"),
    ],
)
def test_a_duration_beyond_gos_range_fails_the_policy_as_in_go(text: str, problem: str) -> None:
    """Go's time.ParseDuration refuses these (an int64 of nanoseconds overflows)."""
    plugin = {"name": "rescheduling", "arguments": {"interval": text}}
    policy = yaml.safe_dump({"actions": "shuffle", "tiers": [{"plugins": [plugin]}]})

    with pytest.raises(PolicyError) as caught:
        catalog.load_pipeline(policy)

    assert caught.value.errors == (
        f"tiers[0].plugins[0]: plugin rescheduling: arguments.interval: {problem}, got '{text}'",
    )


def test_build_makes_a_factory_with_an_empty_memory() -> None:
    factory = rescheduling.build({})

    assert factory.name == "rescheduling"
    assert factory.config == Config()
    assert factory.last_run is None
    assert factory.memory.cooldown == {}
    assert factory.memory.avoid == {}

"""Policy hot reload: a valid change applies, an invalid one is reported and the last good stays."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from vscheduler.informer.kinds import config_map
from vscheduler.informer.ports import WatchEvent
from vscheduler.runtime.policy import (
    ConfigMapPolicy,
    FilePolicy,
    PolicyHolder,
    Rejection,
    kept_policy,
)

GOOD = "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n"
OTHER = "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n"
BAD = "actions: alocate\ntiers: []\n"
KIND = config_map("vscheduler-system", "policy")


def configmap(text: str | None, key: str = "volcano-scheduler.conf") -> dict[str, object]:
    data = {} if text is None else {key: text}
    return {"metadata": {"name": "policy", "namespace": "vscheduler-system"}, "data": data}


def holder_with_log() -> tuple[PolicyHolder, list[str], list[Rejection]]:
    loaded: list[str] = []
    rejected: list[Rejection] = []
    return PolicyHolder(on_loaded=loaded.append, on_rejected=rejected.append), loaded, rejected


def test_the_default_policy_is_in_force_until_a_policy_arrives() -> None:
    holder, _, _ = holder_with_log()
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate", "backfill"]
    assert holder.source == "default policy"


def test_a_valid_configmap_change_applies_and_bumps_the_generation() -> None:
    holder, loaded, _ = holder_with_log()
    sink = ConfigMapPolicy(holder, key="volcano-scheduler.conf")
    sink.replace(KIND, [configmap(GOOD)])
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate"]
    first = holder.generation
    sink.apply(KIND, WatchEvent("MODIFIED", configmap(OTHER)))
    assert [a.name for a in holder.current.actions] == ["allocate"]
    assert holder.generation == first + 1
    assert loaded == [
        "ConfigMap vscheduler-system/policy key volcano-scheduler.conf",
        "ConfigMap vscheduler-system/policy key volcano-scheduler.conf",
    ]


def test_an_invalid_change_is_rejected_with_its_errors_and_the_last_good_policy_stays() -> None:
    holder, _, rejected = holder_with_log()
    sink = ConfigMapPolicy(holder, key="volcano-scheduler.conf")
    sink.replace(KIND, [configmap(GOOD)])
    generation = holder.generation
    sink.apply(KIND, WatchEvent("MODIFIED", configmap(BAD)))
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate"]
    assert holder.generation == generation
    [rejection] = rejected
    assert rejection.errors == ("actions: unknown action 'alocate'; did you mean 'allocate'?",)


def test_a_configmap_without_the_key_is_rejected_naming_the_key() -> None:
    holder, _, rejected = holder_with_log()
    ConfigMapPolicy(holder, key="volcano-scheduler.conf").replace(KIND, [configmap(None)])
    assert rejected[0].errors == ("data.volcano-scheduler.conf: missing",)
    assert holder.source == "default policy"


def test_a_deleted_configmap_keeps_the_policy_in_force() -> None:
    holder, _, _ = holder_with_log()
    sink = ConfigMapPolicy(holder, key="volcano-scheduler.conf")
    sink.replace(KIND, [configmap(GOOD)])
    sink.apply(KIND, WatchEvent("DELETED", configmap(GOOD)))
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate"]


def test_a_configmap_found_gone_at_a_relist_keeps_the_policy_in_force() -> None:
    holder, _, _ = holder_with_log()
    sink = ConfigMapPolicy(holder, key="volcano-scheduler.conf")
    sink.replace(KIND, [configmap(GOOD)])
    sink.replace(KIND, [])  # the watch expired (410 Gone) after the deletion; the relist is empty
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate"]
    assert holder.source == "ConfigMap vscheduler-system/policy key volcano-scheduler.conf"


def test_a_configmap_absent_at_the_first_list_leaves_the_default_policy() -> None:
    holder, _, _ = holder_with_log()
    ConfigMapPolicy(holder, key="volcano-scheduler.conf").replace(KIND, [])
    assert holder.source == "default policy"


def test_the_policy_kept_after_a_rejection_is_named_as_the_one_last_loaded() -> None:
    # The rejected text came from the same ConfigMap: "ConfigMap x stays in force" read as if
    # the edit just rejected were running.
    source = "ConfigMap vscheduler-system/policy key volcano-scheduler.conf"
    assert kept_policy(source) == f"the policy last loaded from {source}"
    assert kept_policy("default policy") == "the built-in default policy"


def test_a_policy_file_is_reloaded_when_it_changes(tmp_path: Path) -> None:
    holder, _, rejected = holder_with_log()
    path = tmp_path / "policy.yaml"
    path.write_text(GOOD)
    source = FilePolicy(holder, str(path))
    source.poll()
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate"]
    path.write_text(BAD + "\n# changed\n")
    source.poll()
    assert rejected
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate"]
    path.write_text(OTHER)
    source.poll()
    assert [a.name for a in holder.current.actions] == ["allocate"]


def test_a_policy_file_that_is_not_utf8_is_rejected_once_and_the_last_good_policy_stays(
    tmp_path: Path,
) -> None:
    holder, _, rejected = holder_with_log()
    path = tmp_path / "policy.yaml"
    path.write_text(GOOD)
    source = FilePolicy(holder, str(path))
    source.poll()
    path.write_bytes(b"actions: allocate\n# caf\xe9 latin-1, longer than before\n")
    source.poll()
    source.poll()
    assert [rejection.errors for rejection in rejected] == [
        (f"{path}: not UTF-8 text (invalid continuation byte at byte 23)",)
    ]
    assert [a.name for a in holder.current.actions] == ["enqueue", "allocate"]


def test_a_policy_without_predicates_is_logged_with_validate_configs_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    holder, _, _ = holder_with_log()
    with caplog.at_level(logging.WARNING, logger="vscheduler.runtime.policy"):
        assert holder.offer(GOOD, "ConfigMap vscheduler-system/policy")
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "policy ConfigMap vscheduler-system/policy: tiers: no 'predicates' plugin: taints, "
        "tolerations, node selectors and affinity are ignored"
    ]

"""deploy/monitoring/prometheusrule.yaml: the alerts are valid PromQL over metrics vscheduler
exports, and fire exactly on the cases of alerts.promtool.yaml (`promtool test rules`).

promtool comes with Prometheus (`scripts/prometheus ensure`, which scripts/check runs first);
`$PROMETHEUS`'s directory is searched before PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from vscheduler.obs.metrics import SchedulerMetrics

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "deploy" / "monitoring" / "prometheusrule.yaml"
CASES = Path(__file__).with_name("alerts.promtool.yaml")
ALERTS = [
    "VSchedulerNoLeader",
    "VSchedulerCycleLatencyHigh",
    "VSchedulerPendingWithoutProgress",
    "VSchedulerUsageDataStale",
    "VSchedulerPolicyReloadFailed",
    "VSchedulerCyclesFailing",
    "VSchedulerCycleErrors",
]
RUNBOOKS = ROOT / "docs" / "runbooks.md"


def promtool() -> str:
    override = os.environ.get("PROMETHEUS")
    candidates = [str(Path(override).with_name("promtool"))] if override else []
    found = shutil.which("promtool")
    candidates += [found] if found else []
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("no promtool ($PROMETHEUS's directory or PATH): run scripts/prometheus ensure")


def rules() -> list[dict[str, Any]]:
    (group,) = yaml.safe_load(RULES.read_text())["spec"]["groups"]
    found: list[dict[str, Any]] = group["rules"]
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *args], capture_output=True, text=True, timeout=60, check=False
    )


def exported_series() -> set[str]:
    """Every series name a fresh SchedulerMetrics exposes (histograms as _bucket, ...)."""
    registry = CollectorRegistry()
    SchedulerMetrics(registry)
    names: set[str] = set()
    for family in registry.collect():
        names.update(sample.name for sample in family.samples)
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}
        names.update(family.name + s for s in suffixes.get(family.type, ("",)))
    return names


def test_the_rule_file_names_the_alerts_that_matter() -> None:
    assert [r["alert"] for r in rules()] == ALERTS
    assert all(r["labels"]["severity"] in ("warning", "critical") for r in rules())
    assert all(
        r["annotations"].keys() == {"summary", "description", "runbook_url"} for r in rules()
    )


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings: lower case, punctuation dropped, spaces to dashes."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_alert_links_to_its_own_section_of_docs_runbooks_md() -> None:
    found = anchors(RUNBOOKS.read_text(encoding="utf-8"))
    for rule in rules():
        path, _, anchor = rule["annotations"]["runbook_url"].partition("#")
        assert path == "docs/runbooks.md", rule["alert"]
        assert anchor == rule["alert"].lower(), rule["alert"]
        assert anchor in found, rule["alert"]


def test_every_alert_reads_metrics_that_vscheduler_exports() -> None:
    exported = exported_series()
    for rule in rules():
        used = set(re.findall(r"\bvscheduler_[a-z0-9_]+", rule["expr"]))
        assert used, rule["alert"]
        assert used <= exported, (rule["alert"], used - exported)
        assert 'job="vscheduler"' in rule["expr"], rule["alert"]


@pytest.mark.timeout(60)
def test_promtool_accepts_the_rules(tmp_path: Path) -> None:
    spec = yaml.safe_load(RULES.read_text())["spec"]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(spec))
    checked = run("check", "rules", str(tmp_path / "rules.yaml"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in checked.stdout


@pytest.mark.timeout(60)
def test_each_alert_fires_on_its_cases_and_stays_quiet_otherwise(tmp_path: Path) -> None:
    spec = yaml.safe_load(RULES.read_text())["spec"]
    for rule in spec["groups"][0]["rules"]:
        del rule["annotations"]  # rendered text is not under test here; the expressions are
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(spec))
    cases = yaml.safe_load(CASES.read_text())
    cases["rule_files"] = ["rules.yaml"]
    tested = {t["alertname"] for case in cases["tests"] for t in case["alert_rule_test"]}
    assert tested == set(ALERTS)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    result = run("test", "rules", str(tmp_path / "cases.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout

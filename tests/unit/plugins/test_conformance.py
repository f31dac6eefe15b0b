from __future__ import annotations

import dataclasses

import pytest

from vscheduler.errors import PluginArgsError
from vscheduler.framework.session import Session
from vscheduler.model.facts import TaskFacts
from vscheduler.plugins import conformance
from vscheduler.plugins.conformance import Conformance
from vscheduler.testing import sessions
from vscheduler.testing.builders import PodBuilder, node, pod, podgroup, snapshot

POLICY = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
"""


def running(name: str, namespace: str = "default") -> PodBuilder:
    return pod(name, namespace).requests(cpu="1").on("n1")


def of_class(builder: PodBuilder, priority_class: str) -> TaskFacts:
    return dataclasses.replace(builder.build(), priority_class_name=priority_class)


def open_session() -> tuple[Session, Conformance]:
    session = sessions.open_session(
        snapshot(
            node("n1").resources(cpu="64"),
            podgroup("pg").inqueue(),
            pod("preemptor").group("pg").requests(cpu="1").priority(100),
            running("plain"),
            of_class(running("cluster-critical"), "system-cluster-critical"),
            of_class(running("node-critical"), "system-node-critical"),
            of_class(running("high"), "high-priority"),
            running("dns", "kube-system"),
        ),
        policy=POLICY,
    )
    plugin = session.plugins["conformance"]
    assert isinstance(plugin, Conformance)
    return session, plugin


@pytest.mark.parametrize(
    ("candidate", "victim"),
    [
        pytest.param("default/plain", True, id="ordinary-pod"),
        pytest.param("default/high", True, id="other-priority-class"),
        pytest.param("default/cluster-critical", False, id="system-cluster-critical"),
        pytest.param("default/node-critical", False, id="system-node-critical"),
        pytest.param("kube-system/dns", False, id="kube-system-namespace"),
    ],
)
def test_critical_pods_are_never_victims(candidate: str, victim: bool) -> None:
    session, plugin = open_session()
    preemptor, task = session.tasks["default/preemptor"], session.tasks[candidate]
    expected = (task,) if victim else ()

    assert plugin.select_preemptees(preemptor, [task]) == expected
    assert plugin.select_reclaimees(preemptor, [task]) == expected


def test_conformance_keeps_the_other_candidates_in_order() -> None:
    session, plugin = open_session()
    keys = ["default/high", "kube-system/dns", "default/plain", "default/node-critical"]
    candidates = [session.tasks[k] for k in keys]
    preemptor = session.tasks["default/preemptor"]

    assert [t.key for t in plugin.select_preemptees(preemptor, candidates)] == [
        "default/high",
        "default/plain",
    ]
    assert plugin.select_reclaimees(preemptor, []) == ()


def test_conformance_takes_no_arguments() -> None:
    assert conformance.build({}).name == "conformance"
    with pytest.raises(PluginArgsError, match="plugin conformance"):
        conformance.build({"conformance.strict": True})

"""predicateNode and nodeOrderNode: each plugin's answer for one node in scalars equals its
answer for an array of that one node, bit for bit, whatever the pods and nodes (GPUs, a node
without memory, host ports, taints, selectors, anti-affinity, a full node), before and after
some of the pods are placed."""

from __future__ import annotations

from typing import Protocol, cast

import numpy as np
from hypothesis import given, settings, strategies as st

from vscheduler.framework.session import Session
from vscheduler.model.status import TaskStatus
from vscheduler.plugin_api import NodeOrder, NodeOrderNode
from vscheduler.plugins.predicates.plugin import Predicates
from vscheduler.testing import sessions
from vscheduler.testing.builders import NodeBuilder, PodBuilder, node, pod, pod_term, snapshot

POLICY = """\
actions: ""
tiers:
- plugins:
  - name: predicates
  - name: nodeorder
    arguments:
      mostrequested.weight: {most}
      leastrequested.weight: {least}
      balancedresource.weight: {balanced}
  - name: binpack
    arguments:
      binpack.cpu: 2
      binpack.resources: nvidia.com/gpu
      binpack.resources.nvidia.com/gpu: 3
"""
HOST = "kubernetes.io/hostname"


class Scorer(NodeOrder, NodeOrderNode, Protocol):
    """nodeorder and binpack: both forms."""


def check(session: Session) -> None:
    predicates = cast(Predicates, session.plugins["predicates"])
    scorers = [cast(Scorer, session.plugins[name]) for name in ("nodeorder", "binpack")]
    for task in session.tasks.values():
        if task.status is not TaskStatus.PENDING:
            continue
        for i in range(len(session.ledger)):
            one = np.array((i,), dtype=np.int64)
            assert predicates.filter_node(task, i) is bool(predicates.filter_nodes(task, one)[0])
            for plugin in scorers:
                scalar = plugin.score_node(task, i)
                assert isinstance(scalar, float)
                scores = plugin.score_nodes(task, one)
                assert scores is not None
                assert scalar == float(scores[0]), (plugin, task.key, i)


def draw_node(data: st.DataObject, i: int) -> NodeBuilder:
    amounts: dict[str, str | int] = {"cpu": data.draw(st.integers(1, 8))}
    if data.draw(st.integers(0, 4)):  # now and then a node without memory
        amounts["memory"] = f"{data.draw(st.integers(1, 16))}Gi"
    if data.draw(st.booleans()):
        amounts["nvidia.com/gpu"] = data.draw(st.integers(0, 4))
    made = node(f"n{i}").resources(pods=data.draw(st.integers(1, 3)), **amounts)
    made = made.labels(zone=f"z{i % 2}", **{HOST: f"n{i}"})
    return made.taint("dedicated", "x") if data.draw(st.integers(0, 3)) == 0 else made


def draw_pod(data: st.DataObject, k: int, nodes: int) -> PodBuilder:
    asked: dict[str, str | int] = {"cpu": data.draw(st.sampled_from(["100m", "1", "2500m"]))}
    if data.draw(st.booleans()):
        asked["memory"] = f"{data.draw(st.integers(1, 6))}Gi"
    if data.draw(st.integers(0, 3)) == 0:
        asked["nvidia.com/gpu"] = 1
    made = pod(f"p{k}").requests(**asked).labels(app=f"a{k % 2}")
    if data.draw(st.integers(0, 4)) == 0:
        made = made.host_port(8080)
    if data.draw(st.integers(0, 4)) == 0:
        made = made.selector(zone="z0")
    if data.draw(st.integers(0, 5)) == 0:
        made = made.anti_affinity(pod_term(HOST, app=f"a{k % 2}"))
    if data.draw(st.integers(0, 3)) == 0:
        made = made.on(f"n{data.draw(st.integers(0, nodes - 1))}")
    return made


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_one_node_in_scalars_answers_as_an_array_of_it(data: st.DataObject) -> None:
    nodes = [draw_node(data, i) for i in range(data.draw(st.integers(1, 4)))]
    pods = [draw_pod(data, k, len(nodes)) for k in range(data.draw(st.integers(1, 6)))]
    weights = {w: data.draw(st.integers(0, 3)) for w in ("most", "least", "balanced")}
    session = sessions.open_session(snapshot(*nodes, *pods), POLICY.format(**weights))
    check(session)
    stmt = session.statement()
    for task in list(session.tasks.values()):
        if task.status is TaskStatus.PENDING and data.draw(st.booleans()):
            stmt.allocate(task, data.draw(st.integers(0, len(nodes) - 1)))
    check(session)

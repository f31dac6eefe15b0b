"""binpack's arguments as Volcano reads them, from Volcano's
`pkg/scheduler/plugins/binpack/binpack_test.go` `TestArguments`: the weights a policy's binpack
arguments give, read here through the whole policy loader (the catalog) rather than the plugin's
builder alone.

`TestNode` (both cases: every task's score on every node) is transcribed in
`tests/unit/plugins/test_binpack.py` (`test_volcanos_binpack_table`), as it asks the plugin's
node-order function directly.
"""

from __future__ import annotations

from vscheduler import catalog
from vscheduler.plugins import binpack

POLICY = """\
actions: "allocate"
tiers:
- plugins:
  - name: binpack
    enableNodeOrder: true
    arguments:
      binpack.weight: 10
      binpack.cpu: 5
      binpack.memory: 2
      binpack.resources: "nvidia.com/gpu, example.com/foo"
      binpack.resources.nvidia.com/gpu: 7
      binpack.resources.example.com/foo: -3
"""


def test_the_arguments_give_each_weight_and_a_negative_resource_weight_counts_as_1() -> None:
    """TestArguments: weight 10, cpu 5, memory 2, nvidia.com/gpu 7, and example.com/foo 1 (its
    -3 is taken as 1); no other resource has a weight."""
    (tier,) = catalog.load_pipeline(POLICY).tiers
    (entry,) = tier
    factory = entry.factory

    assert isinstance(factory, binpack.Factory)
    assert factory.weights == binpack.Weights(
        weight=10,
        resources={"nvidia.com/gpu": 7, "example.com/foo": 1, "cpu": 5, "memory": 2},
    )

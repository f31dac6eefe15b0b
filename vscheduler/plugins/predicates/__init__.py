"""predicates: which nodes a task may go to at all (Volcano's predicates plugin).

Registers:

- `filter_nodes(task, idx)`: vectorised over node indices; a node passes when every check
  below passes.
- `explain_node(task, i)`: the first check node `i` fails, as a Status with kube's or Volcano's
  reason text, in this order:

  1. the node is Ready ("node(s) were not ready"; Volcano leaves such nodes out of its snapshot);
  2. it holds fewer pods than its `pods` allocatable ("node(s) pod number exceeded", Volcano's
     text; pipelined, releasing and this session's placements count);
  3. it is not cordoned, unless the pod tolerates `node.kubernetes.io/unschedulable:NoSchedule`
     ("node(s) were unschedulable");
  4. `nodeSelector` and required node affinity match ("node(s) didn't match Pod's node
     affinity/selector"): terms ORed, expressions ANDed, In/NotIn/Exists/DoesNotExist/Gt/Lt on
     labels, In/NotIn on `metadata.name`; an empty or malformed term matches no node, an empty
     term list matches nothing;
  5. every NoSchedule and NoExecute taint is tolerated ("node(s) had untolerated taint {k: v}",
     naming the first one);
  6. the pod's host ports are free ("node(s) didn't have free ports for the requested pod
     ports"): a port is taken by pods bound, running, releasing or pipelined on the node and by
     this session's placements; 0.0.0.0 conflicts with every IP of the same port and protocol.

  Codes: 2 and 6 are Unschedulable, the others UnschedulableAndUnresolvable.
- `on_allocate` / `on_deallocate`: keep the host ports in use current as the session places,
  pipelines, evicts and undoes.

Arguments (Volcano's names and defaults):

- `predicate.NodeAffinityEnable` (true): check 4; `predicate.NodePortsEnable` (true): check 6;
  `predicate.TaintTolerationEnable` (true): check 5. Checks 1-3 are always on.
- `predicate.CacheEnable` (false): accepted; the per-class evaluation is always cached, and the
  cache is exact, so the flag changes nothing.
- `predicate.ProportionalEnable` (false), `predicate.resources` ("", comma-separated resource
  names) and `predicate.resources.<name>.cpu` / `.memory` (1.0; a negative rate means 1.0):
  read and kept; the proportional check itself is not applied yet.
- Accepted without effect (vscheduler has no such check): `predicate.PodAffinityEnable`,
  `predicate.NodeVolumeLimitsEnable`, `predicate.VolumeZoneEnable`,
  `predicate.PodTopologySpreadEnable`, `predicate.VolumeBindingEnable` (all true),
  `predicate.DynamicResourceAllocationEnable`, `predicate.GPUSharingEnable`,
  `predicate.GPUNumberEnable`, and the old `predicate.MemoryPressureEnable`,
  `predicate.DiskPressureEnable`, `predicate.PIDPressureEnable` (all false),
  `volumebinding.weight` (1), `volumebinding.bindTimeoutSeconds` (30), `volumebinding.shape`,
  `dynamicresources.filterTimeoutSeconds` (10).

`checks` holds the per-node checks, `vectorised` the all-nodes forms, `plugin` the adapter.
"""

from __future__ import annotations

from vscheduler.plugins.predicates.plugin import NAME, Config, Factory, Predicates, build

__all__ = ["NAME", "Config", "Factory", "Predicates", "build"]

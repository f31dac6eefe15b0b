"""predicates: which nodes a task may go to at all (Volcano's predicates plugin).

Registers:

- `filter_nodes(task, idx)`: vectorised over node indices; a node passes when every check
  below passes.
- `explain_node(task, i)`: the first check node `i` fails, as a Status with kube's or Volcano's
  reason text, in this order:

  1. the node is Ready ("node(s) were not ready"; Volcano leaves such nodes out of its snapshot);
  2. it holds fewer pods than its `pods` allocatable once its releasing pods are gone ("node(s)
     pod number exceeded", Volcano's text; pipelined pods and this session's placements count,
     a pod this session evicts frees its slot at once). Binding also wants the slot free now:
     the session's fit (framework/placement.py) counts one pod slot for every task, as Volcano
     counts one `pods` in every request, with or without this plugin;
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
     this session's placements; 0.0.0.0 conflicts with every IP of the same port and protocol;
  7. inter-pod affinity (kube's InterPodAffinity filter, see `interpod`): required affinity
     ("node(s) didn't match pod affinity rules"), required anti-affinity ("node(s) didn't match
     pod anti-affinity rules"), and placed pods' required anti-affinity against this pod
     ("node(s) didn't satisfy existing pods anti-affinity rules"); pods count while they hold a
     node, this session's placements included;
  8. topology spread (kube's PodTopologySpread filter over `DoNotSchedule` constraints, see
     `spread`): "node(s) didn't match pod topology spread constraints", or "... (missing
     required label)";
  9. the proportional share (Volcano's, see `proportional`): "proportional of resource <name>
     check failed".

  Codes: 2, 6, the anti-affinity rules of 7 and a too large skew in 8 are Unschedulable
  (kube's InterPodAffinity and PodTopologySpread codes, which Volcano keeps since 1.13), the
  others UnschedulableAndUnresolvable.
- `filter_nodes_resolvable(task, idx)` (predicateResolvable): the node passes every
  UnschedulableAndUnresolvable check, so evicting pods may let the task in: preempt and
  reclaim try such nodes (Volcano's `PredicateForPreemptAction`).
- `on_allocate` / `on_deallocate`: keep the host ports in use and the pods counted by 7 and 8
  current as the session places, pipelines, evicts and undoes.
- `node_local`: False in a session where some pending pod has required inter-pod terms or hard
  spread constraints, or a placed pod has required anti-affinity (7 and 8 then apply); the
  session then evaluates the plugin for every node and task instead of caching per class.

Arguments (Volcano's names and defaults):

- `predicate.NodeAffinityEnable` (true): check 4; `predicate.NodePortsEnable` (true): check 6;
  `predicate.TaintTolerationEnable` (true): check 5; `predicate.PodAffinityEnable` (true):
  check 7; `predicate.PodTopologySpreadEnable` (true): check 8. Checks 1-3 are always on.
- `predicate.CacheEnable` (false): accepted; the per-class evaluation is always cached, and the
  cache is exact, so the flag changes nothing.
- `predicate.ProportionalEnable` (false): check 9, with `predicate.resources` ("",
  comma-separated resource names) and `predicate.resources.<name>.cpu` / `.memory` (1.0 core /
  1.0 GB per unit; a negative rate means 1.0).
- `predicate.VolumeBindingEnable` (true): volume binding, as Volcano's VolumeBinding plugin:
  the checks of a pod's claims (`volumes`: a prePredicate and a per-node check, policy.md's
  check V), and, declared as `Needs.volume_binding`, the writes
  binding a pod's claims before its Binding and the wait for them (`effects.volumes`,
  `effects.volume_wait`); off, none of them.
- Accepted without effect (vscheduler has no such check): `predicate.NodeVolumeLimitsEnable`,
  `predicate.VolumeZoneEnable` (both true),
  `predicate.DynamicResourceAllocationEnable`, `predicate.GPUSharingEnable`,
  `predicate.GPUNumberEnable`, and the old `predicate.MemoryPressureEnable`,
  `predicate.DiskPressureEnable`, `predicate.PIDPressureEnable` (all false),
  `volumebinding.weight` (1), `volumebinding.shape`, `dynamicresources.filterTimeoutSeconds`
  (10).
- `volumebinding.bindTimeoutSeconds` (600, Volcano's and kube's default; not negative): how long
  a bind waits for its pod's volumes to be bound before it fails (declared as
  `Needs.volume_bind_timeout`; the effects wait, `effects.volume_wait`).

`checks` holds the per-node checks, `vectorised` the all-nodes forms, `interpod`, `spread` and
`proportional` the checks 7-9, `plugin` the adapter.
"""

from __future__ import annotations

from vscheduler.plugins.predicates.plugin import NAME, Config, Factory, Predicates, build

__all__ = ["NAME", "Config", "Factory", "Predicates", "build"]

"""nodeorder: kube-scheduler's scores for a node, weighted (Volcano's nodeorder plugin).

Registers:

- `score_nodes(task, idx)` (nodeOrder), vectorised over node indices, the sum of:
  - leastrequested (kube NodeResourcesFit, LeastAllocated, cpu and memory weighted equally):
    per resource `(alloc - req) * 100 // alloc` (0 if req > alloc), then the integer mean over
    the resources the node has (alloc > 0);
  - mostrequested (MostAllocated, cpu and memory weight 1): per resource
    `min(req, alloc) * 100 // alloc`, integer mean likewise;
  - balancedresource (NodeResourcesBalancedAllocation over cpu, memory and nvidia.com/gpu, the
    GPU only when the task requests it): fractions `min(req / alloc, 1)`; std is `|f1 - f2| / 2`
    for two resources, the population standard deviation for three, 0 otherwise; score
    `int((1 - std) * 100)`;
  - nodeaffinity: the sum of the weights of the preferred terms the node matches, not
    normalised (Volcano calls kube's Score without NormalizeScore);
  - imagelocality (kube ImageLocality): for each of the task's images on the node,
    `int(size * nodes_with_image / all_nodes)`, summed, clamped to [23 MiB, 1000 MiB * images],
    scaled to 0..100 with integer division;

  where `req` is the node's used resources (`ledger.used`: tasks allocated, binding, bound,
  running or releasing there) plus the task's request, `alloc` the node's allocatable, and each
  score is multiplied by its weight.
- `batch_score_nodes(task, idx)` (batchNodeOrder), over the feasible nodes `idx`, the sum of:
  - tainttoleration, the count of PreferNoSchedule taints the task does not tolerate
    (tolerations with effect PreferNoSchedule or empty), normalised over `idx` as kube's
    DefaultNormalizeScore(reverse): `100 - 100 * count // max`, times the weight; no opinion
    when no node of `idx` has such a taint (kube would give every node the same 100 * weight,
    which cannot change the choice);
  - podaffinity and podtopologyspread (kube's InterPodAffinity and PodTopologySpread scores,
    see `topology`), each normalised over `idx` and times its weight; no opinion on a class
    with no preferred pod-affinity term, no ScheduleAnyway spread constraint, and no pod of
    the session whose preferred term may select it.
  None when no part has an opinion.
- `on_allocate` / `on_deallocate`: keep the pods counted by podaffinity and podtopologyspread
  current as the session places and removes pods (nothing to do in a session where no pod has
  inter-pod terms or spread constraints).

Arguments (Volcano's names; defaults as in Volcano's nodeorder.go): `leastrequested.weight` (1),
`mostrequested.weight` (0), `balancedresource.weight` (1), `nodeaffinity.weight` (2),
`imagelocality.weight` (1), `tainttoleration.weight` (3), `podaffinity.weight` (2),
`podtopologyspread.weight` (2), and, accepted but not scored, `selectorspread.weight` (0) and
`volumebinding.weight` (1). A weight of 0 skips its score.

Differences from kube, all small: requests are the pods' effective requests (kube scores cpu and
memory of containers without requests as 100m and 200Mi in least/mostrequested); imagelocality
counts each distinct image once (kube counts containers); balancedresource and the
requested-to-capacity scores see pipelined tasks only once they are allocated; kube's
system-default spreading (for pods without constraints, a selector built from the Services and
controllers selecting them) is not applied, as vscheduler does not watch those objects.

`formulas` holds kube's formulas, `topology` the scores that look at other pods, `plugin` the
adapter.
"""

from __future__ import annotations

from vscheduler.plugins.nodeorder.formulas import (
    balanced_allocation,
    image_locality,
    least_requested,
    most_requested,
    reverse_normalised,
    term_matches,
    tolerates,
)
from vscheduler.plugins.nodeorder.plugin import ARGUMENTS, NAME, Factory, NodeOrder, Weights, build

__all__ = [
    "ARGUMENTS",
    "NAME",
    "Factory",
    "NodeOrder",
    "Weights",
    "balanced_allocation",
    "build",
    "image_locality",
    "least_requested",
    "most_requested",
    "reverse_normalised",
    "term_matches",
    "tolerates",
]

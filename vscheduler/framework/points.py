"""The extension-point table: every point, the plugin method that serves it, the Volcano flag
that switches it, and how the session combines the answers. This is the single source of truth;
`framework.dispatch` implements each combination once.

Each point's exact signature is its Protocol in `framework.protocols` (named after the point:
jobOrder -> `JobOrder`, eventHandlers -> `AllocateEvent` / `DeallocateEvent`, ...).

| point | method | flag | combination |
|---|---|---|---|
| jobOrder | compare_jobs | enableJobOrder | first non-zero, then creation time, uid |
| jobOrderKey | job_order_key | enableJobOrder | jobOrder as one tuple: each key, creation, uid |
| taskOrder | compare_tasks | enableTaskOrder | first non-zero, then index, creation, uid |
| queueOrder | compare_queues | enableQueueOrder | first non-zero, then creation time, name |
| jobValid | validate_job | (none) | first invalid wins |
| jobEnqueueable | vote_enqueue | enableJobEnqueued | tier vote |
| jobEnqueued | on_enqueued | enableJobEnqueued | every plugin notified |
| prePredicate | prefilter | enablePredicate | all must pass |
| predicate | filter_nodes | enablePredicate | all must pass (per node) |
| predicateNode | filter_node | enablePredicate | predicate of one node, in scalars (optional) |
| predicateReason | explain_node | enablePredicate | the failing plugin's own reason |
| predicateResolvable | filter_nodes_resolvable | enablePredicate | all must pass (per node) |
| nodeOrder | score_nodes | enableNodeOrder | summed |
| nodeOrderNode | score_node | enableNodeOrder | nodeOrder of one node, in scalars (optional) |
| batchNodeOrder | batch_score_nodes | enableNodeOrder | summed |
| bestNode | pick_best_node | enableBestNode | first answer wins |
| hyperNodeOrder | score_hypernodes | enabledHyperNodeOrder | summed (per HyperNode) |
| jobReady | is_job_ready | enableJobReady | all must agree |
| jobPipelined | vote_pipelined | enableJobPipelined | tier vote |
| jobStarving | is_job_starving | enableJobStarving | first tier with a plugin; all of it agree |
| allocatable | allows_allocation | enabledAllocatable | all must agree |
| overused | is_overused | enabledOverused | any one says so |
| preemptive | allows_reclaim | enablePreemptive | all must agree |
| preemptable | select_preemptees | enablePreemptable | tier intersection (see below) |
| reclaimable | select_reclaimees | enableReclaimable | tier intersection |
| unifiedEvictable | select_gang_victims | (none) | tier intersection (gangpreempt, gangreclaim) |
| victimTasks | propose_victims | enabledVictim | per tier union; first non-empty tier wins |
| victimFilter | filter_victims | enabledVictim | every plugin narrows the list, in order |
| eventHandlers | on_allocate / on_deallocate | (none) | every plugin, in order |
| sessionClose | on_session_close | (none) | every plugin, in order |

jobOrderKey is the jobOrder comparisons made keys: when the plugins serving jobOrder serve it too
(the same plugins, in the same order), a job's order is the tuple of their keys, then its creation
time and uid, made once when the job is heaped or sorted, and jobs compare as tuples. The order is
the comparisons' (each key agrees with its plugin's `compare_jobs`). At 50,000 lone pods
(`bench.cycle --nodes 5000 --pods 50000 --gang 1`) allocate took 2.9-3.5 s, against 4.3-5.7 s
comparing. A key that raises is recorded as a jobOrder error, and the session orders jobs by
comparisons from then on.

predicateNode and nodeOrderNode are predicate and nodeOrder for one node, answered in Python
scalars: after each decision the placement re-evaluates the one node the decision took, for the
next task of the class, and asks each predicate and nodeOrder plugin about it; a plugin serving
the scalar form is asked that instead (the same answer, the same float), a plugin without it is
asked about an array of one node. predicates, nodeorder and binpack serve them: the one-node
refresh through arrays of one was a fifth of a gang's decision under cProfile at 5,000 nodes
(docs/design.md).

Tier vote: a REJECT ends it (not allowed); a PERMIT in a tier allows; a tier of ABSTAIN moves on;
no votes at all allows. Tier intersection: abstaining plugins are skipped; the first answer starts
the set, each later one intersects it; an empty set ends the tier with no victims (Volcano
restarts the set there, letting a later plugin overrule an earlier one's protection: we do not).
hyperNodeOrder: allocate asks it about the candidate HyperNodes of one tier for a job with a
`spec.networkTopology` (Volcano's `HyperNodeOrderFn`) and tries them best first, ties by name;
the first that holds the job whole wins, which is Volcano's choice (the best-scored of those that
hold it). A raising hook scores 0. Volcano's hyperNodeGradient point (which HyperNodes may be
tried) is allocate's own here, so a hard constraint holds without any plugin.
Victim filter: Volcano's pdb plugin registers its filter as a victim-tasks function, whose
answers are unioned — so it would add every unprotected running task to the victims. Here a
filter is its own point: the shuffle action asks it after the union, and each plugin in tier
order may only remove victims (an exception removes them all: the conservative answer).
"""

from __future__ import annotations

import dataclasses
from typing import Final

from vscheduler.framework import protocols as hooks


@dataclasses.dataclass(frozen=True, slots=True)
class Point:
    """One extension point: its Volcano name, the plugin method, its enable flag, its Protocol."""

    name: str
    method: str
    flag: str | None
    protocol: type
    """The point's Protocol (`framework.protocols`): a plugin class serving the point
    subclasses it, and its one method is `method`."""


POINTS: Final[tuple[Point, ...]] = (
    Point("jobOrder", "compare_jobs", "enableJobOrder", hooks.JobOrder),
    Point("jobOrderKey", "job_order_key", "enableJobOrder", hooks.JobOrderKey),
    Point("taskOrder", "compare_tasks", "enableTaskOrder", hooks.TaskOrder),
    Point("queueOrder", "compare_queues", "enableQueueOrder", hooks.QueueOrder),
    Point("jobValid", "validate_job", None, hooks.JobValid),
    Point("jobEnqueueable", "vote_enqueue", "enableJobEnqueued", hooks.JobEnqueueable),
    Point("jobEnqueued", "on_enqueued", "enableJobEnqueued", hooks.JobEnqueued),
    Point("prePredicate", "prefilter", "enablePredicate", hooks.PrePredicate),
    Point("predicate", "filter_nodes", "enablePredicate", hooks.Predicate),
    Point("predicateNode", "filter_node", "enablePredicate", hooks.PredicateNode),
    Point("predicateReason", "explain_node", "enablePredicate", hooks.PredicateReason),
    Point(
        "predicateResolvable",
        "filter_nodes_resolvable",
        "enablePredicate",
        hooks.PredicateResolvable,
    ),
    Point("nodeOrder", "score_nodes", "enableNodeOrder", hooks.NodeOrder),
    Point("nodeOrderNode", "score_node", "enableNodeOrder", hooks.NodeOrderNode),
    Point("batchNodeOrder", "batch_score_nodes", "enableNodeOrder", hooks.BatchNodeOrder),
    Point("bestNode", "pick_best_node", "enableBestNode", hooks.BestNode),
    Point("hyperNodeOrder", "score_hypernodes", "enabledHyperNodeOrder", hooks.HyperNodeOrder),
    Point("jobReady", "is_job_ready", "enableJobReady", hooks.JobReady),
    Point("jobPipelined", "vote_pipelined", "enableJobPipelined", hooks.JobPipelined),
    Point("jobStarving", "is_job_starving", "enableJobStarving", hooks.JobStarving),
    Point("allocatable", "allows_allocation", "enabledAllocatable", hooks.Allocatable),
    Point("overused", "is_overused", "enabledOverused", hooks.Overused),
    Point("preemptive", "allows_reclaim", "enablePreemptive", hooks.Preemptive),
    Point("preemptable", "select_preemptees", "enablePreemptable", hooks.Preemptable),
    Point("reclaimable", "select_reclaimees", "enableReclaimable", hooks.Reclaimable),
    Point("unifiedEvictable", "select_gang_victims", None, hooks.UnifiedEvictable),
    Point("victimTasks", "propose_victims", "enabledVictim", hooks.VictimTasks),
    Point("victimFilter", "filter_victims", "enabledVictim", hooks.VictimFilter),
    Point("allocateEvent", "on_allocate", None, hooks.AllocateEvent),
    Point("deallocateEvent", "on_deallocate", None, hooks.DeallocateEvent),
    Point("sessionClose", "on_session_close", None, hooks.SessionClose),
)

BY_NAME: Final = {p.name: p for p in POINTS}
BY_METHOD: Final = {p.method: p for p in POINTS}

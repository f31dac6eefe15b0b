"""The extension-point table: every point, the plugin method that serves it, the Volcano flag
that switches it, and how the session combines the answers. This is the single source of truth;
`framework.dispatch` implements each combination once.

| point | method | flag | combination |
|---|---|---|---|
| jobOrder | compare_jobs | enableJobOrder | first non-zero, then creation time, uid |
| taskOrder | compare_tasks | enableTaskOrder | first non-zero, then index, creation, uid |
| queueOrder | compare_queues | enableQueueOrder | first non-zero, then creation time, name |
| jobValid | validate_job | (none) | first invalid wins |
| jobEnqueueable | vote_enqueue | enableJobEnqueued | tier vote |
| jobEnqueued | on_enqueued | enableJobEnqueued | every plugin notified |
| prePredicate | prefilter | enablePredicate | all must pass |
| predicate | filter_nodes | enablePredicate | all must pass (per node) |
| predicateReason | explain_node | enablePredicate | the failing plugin's own reason |
| nodeOrder | score_nodes | enableNodeOrder | summed |
| batchNodeOrder | batch_score_nodes | enableNodeOrder | summed |
| bestNode | pick_best_node | enableBestNode | first answer wins |
| jobReady | is_job_ready | enableJobReady | all must agree |
| jobPipelined | vote_pipelined | enableJobPipelined | tier vote |
| jobStarving | is_job_starving | enableJobStarving | first tier with a plugin; all of it agree |
| allocatable | allows_allocation | enabledAllocatable | all must agree |
| overused | is_overused | enabledOverused | any one says so |
| preemptive | allows_reclaim | enablePreemptive | all must agree |
| preemptable | select_preemptees | enablePreemptable | tier intersection (see below) |
| reclaimable | select_reclaimees | enableReclaimable | tier intersection |
| victimTasks | propose_victims | enabledVictim | per tier union; first non-empty tier wins |
| victimFilter | filter_victims | enabledVictim | every plugin narrows the list, in order |
| eventHandlers | on_allocate / on_deallocate | (none) | every plugin, in order |

Tier vote: a REJECT ends it (not allowed); a PERMIT in a tier allows; a tier of ABSTAIN moves on;
no votes at all allows. Tier intersection: abstaining plugins are skipped; the first answer starts
the set, each later one intersects it; an empty set ends the tier with no victims (Volcano
restarts the set there, letting a later plugin overrule an earlier one's protection: we do not).
Victim filter: Volcano's pdb plugin registers its filter as a victim-tasks function, whose
answers are unioned — so it would add every unprotected running task to the victims. Here a
filter is its own point: the shuffle action asks it after the union, and each plugin in tier
order may only remove victims (an exception removes them all: the conservative answer).
"""

from __future__ import annotations

import dataclasses
from typing import Final


@dataclasses.dataclass(frozen=True, slots=True)
class Point:
    """One extension point: its Volcano name, the plugin method, and its enable flag."""

    name: str
    method: str
    flag: str | None


POINTS: Final[tuple[Point, ...]] = (
    Point("jobOrder", "compare_jobs", "enableJobOrder"),
    Point("taskOrder", "compare_tasks", "enableTaskOrder"),
    Point("queueOrder", "compare_queues", "enableQueueOrder"),
    Point("jobValid", "validate_job", None),
    Point("jobEnqueueable", "vote_enqueue", "enableJobEnqueued"),
    Point("jobEnqueued", "on_enqueued", "enableJobEnqueued"),
    Point("prePredicate", "prefilter", "enablePredicate"),
    Point("predicate", "filter_nodes", "enablePredicate"),
    Point("predicateReason", "explain_node", "enablePredicate"),
    Point("nodeOrder", "score_nodes", "enableNodeOrder"),
    Point("batchNodeOrder", "batch_score_nodes", "enableNodeOrder"),
    Point("bestNode", "pick_best_node", "enableBestNode"),
    Point("jobReady", "is_job_ready", "enableJobReady"),
    Point("jobPipelined", "vote_pipelined", "enableJobPipelined"),
    Point("jobStarving", "is_job_starving", "enableJobStarving"),
    Point("allocatable", "allows_allocation", "enabledAllocatable"),
    Point("overused", "is_overused", "enabledOverused"),
    Point("preemptive", "allows_reclaim", "enablePreemptive"),
    Point("preemptable", "select_preemptees", "enablePreemptable"),
    Point("reclaimable", "select_reclaimees", "enableReclaimable"),
    Point("victimTasks", "propose_victims", "enabledVictim"),
    Point("victimFilter", "filter_victims", "enabledVictim"),
    Point("allocateEvent", "on_allocate", None),
    Point("deallocateEvent", "on_deallocate", None),
    Point("sessionClose", "on_session_close", None),
)

BY_NAME: Final = {p.name: p for p in POINTS}

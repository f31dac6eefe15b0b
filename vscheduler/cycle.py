"""One scheduling cycle: snapshot + built policy -> CycleResult, with per-action timings.

Pure apart from the injected clock; the runtime and `simulate` both call `run_cycle`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping

from vscheduler.clock import Clock, perf_counter
from vscheduler.effects.volumes import Refusal, SelectNode, volume_writes
from vscheduler.framework.registry import Pipeline
from vscheduler.framework.session import Carried, Session, Watch
from vscheduler.model.cluster import ClusterSnapshot
from vscheduler.model.commands import Bind, CycleResult
from vscheduler.model.facts import TaskFacts
from vscheduler.model.reservation import ReservationBook
from vscheduler.model.status import TaskStatus
from vscheduler.model.volumebind import HeldVolume, PodClaim, PodVolumes
from vscheduler.model.volumes import ClaimFacts, VolumeFacts


@dataclasses.dataclass(frozen=True, slots=True)
class CycleReport:
    """A cycle's result, the plugin errors it met (each once, in order: `plugin point: message`,
    then `(pod ns/name)` when the hook was asked about one pod), and where its time went."""

    result: CycleResult
    seconds: float
    action_seconds: dict[str, float]
    plugin_errors: tuple[str, ...]
    action_errors: tuple[str, ...] = ()
    """Jobs an action failed on (`Session.contained`): each job's statement was discarded and the
    job reported; the action went on with the next job."""
    plugin_seconds: tuple[tuple[str, str, float], ...] = ()
    """`(plugin, "OnSessionOpen" | "OnSessionClose", seconds)`: each plugin's session open, and
    its session close when it has a `sessionClose` hook, in policy order (Volcano's plugin
    latency)."""
    carried: Carried | None = None
    """The session's records, for the next cycle to start from (`Session.carried`)."""


def open_session(
    snapshot: ClusterSnapshot,
    pipeline: Pipeline,
    *,
    clock: Clock,
    uid: str = "cycle-1",
    timer: Callable[[], float] | None = None,
    carried: Carried | None = None,
    arrival_grace: float = 0.0,
) -> Session:
    """A session on `snapshot` with the pipeline's plugins, before any action runs (`timer`
    times each plugin's open and close, see `Session`; `carried`: the last session's records,
    see `Carried`; `arrival_grace`: see `Session.close`)."""
    return Session(
        snapshot,
        pipeline.tiers,
        clock=clock,
        actions=tuple(a.name for a in pipeline.actions),
        uid=uid,
        timer=timer,
        carried=carried,
        arrival_grace=arrival_grace,
    )


def run_cycle(
    snapshot: ClusterSnapshot,
    pipeline: Pipeline,
    *,
    clock: Clock,
    uid: str = "cycle-1",
    watch: Watch | None = None,
    on_bind: Callable[[Bind], None] | None = None,
    carried: Carried | None = None,
    arrival_grace: float = 0.0,
) -> CycleReport:
    """Open a session, run every action in order, close it (`watch` is told of each task
    allocate decides, as `Session.watch`; `on_bind` of each bind as its statement commits, as
    `Session.on_bind`: the result still lists every bind; `carried`: the last cycle's
    `CycleReport.carried`, whose records this cycle takes again where nothing changed;
    `arrival_grace`: how long a gang still being created keeps its members' pending messages
    back, see `Session.close`; the live scheduler's, 0 elsewhere)."""
    started = perf_counter()
    session = open_session(
        snapshot,
        pipeline,
        clock=clock,
        uid=uid,
        timer=perf_counter,
        carried=carried,
        arrival_grace=arrival_grace,
    )
    session.watch = watch
    session.on_bind = on_bind
    timings: dict[str, float] = {"openSession": perf_counter() - started}
    for action in pipeline.actions:
        t0 = perf_counter()
        action.execute(session)
        timings[action.name] = timings.get(action.name, 0.0) + perf_counter() - t0
    t0 = perf_counter()
    result = session.close()
    timings["closeSession"] = perf_counter() - t0
    errors = tuple(dict.fromkeys(str(e) for e in session.dispatch.errors))
    plugins = tuple((name, "OnSessionOpen", s) for name, s in session.open_seconds.items())
    plugins += tuple(
        (name, "OnSessionClose", s) for name, s in session.dispatch.close_seconds.items()
    )
    report = CycleReport(
        result,
        perf_counter() - started,
        timings,
        errors,
        tuple(session.action_errors),
        plugins,
        session.carried(),
    )
    session.release()
    return report


def next_snapshot(
    snapshot: ClusterSnapshot,
    result: CycleResult,
    *,
    now: dt.datetime | None = None,
    volume_binding: bool = False,
) -> ClusterSnapshot:
    """The cluster after `result` took effect, as `simulate` assumes between cycles: bound pods
    run on their node (scheduled at `now`, the cycle's time, when given: their PodScheduled
    condition's time, which cdp reads), evicted pods are gone, pending pods carry the nominations
    `result.nominated` names (others none, as the effects write `status.nominatedNodeName`),
    PodGroup phases and conditions carry over, released reservations are gone from their
    ConfigMap. With `volume_binding` (the pipeline's: the effects bind volumes before the
    Binding), each bind's volume writes take effect first, in bind order (`_volumes_bound`)."""
    tasks = dict(snapshot.tasks)
    for uid, task in snapshot.tasks.items():
        node = result.nominated.get(task.key)
        if node != task.nominated_node:
            tasks[uid] = task.restated(nominated_node=node)
    claims, volumes = snapshot.claims, snapshot.volumes
    for bind in result.binds:
        task = tasks[bind.task_uid]
        if volume_binding and task.claims:
            bound = _volumes_bound(snapshot, task, bind.node, claims, volumes)
            if bound is None:
                continue  # the effects drop the bind: the pod is placed again next cycle
            claims, volumes = bound
        tasks[bind.task_uid] = task.restated(
            node_name=bind.node,
            status=TaskStatus.RUNNING,
            nominated_node=None,
            scheduled_at=now if now is not None else task.scheduled_at,
        )
    for evict in result.evictions:
        tasks.pop(evict.task_uid, None)
    jobs = dict(snapshot.jobs)
    for key, status in result.podgroups.items():
        if key in jobs:
            jobs[key] = dataclasses.replace(
                jobs[key], phase=status.phase, conditions=status.conditions
            )
    return dataclasses.replace(
        snapshot,
        tasks=tasks,
        jobs=jobs,
        claims=claims,
        volumes=volumes,
        reservations=_released(snapshot, result),
    )


def _volumes_bound(
    snapshot: ClusterSnapshot,
    task: TaskFacts,
    node: str,
    claims: Mapping[str, ClaimFacts],
    volumes: Mapping[str, VolumeFacts],
) -> tuple[Mapping[str, ClaimFacts], Mapping[str, VolumeFacts]] | None:
    """The claims and volumes once the writes binding `task`'s volumes to `node` took effect
    (`effects.volumes`, as the effects send them before the Binding) and the PV controller did
    its part: a claim annotated with the node to provision for keeps the annotation (its
    provisioner is not modelled), a pre-made volume claimed for a claim and that claim are bound
    to each other. None: the effects would refuse the bind (a claim not ready for the node)."""
    labels = next((n.labels for n in snapshot.nodes if n.name == node), {})
    plan = volume_writes(
        PodVolumes(
            namespace=task.namespace,
            name=task.name,
            uid=task.uid,
            node=node,
            node_labels=labels,
            claims=tuple(
                PodClaim(name=n, ephemeral=e, facts=claims.get(f"{task.namespace}/{n}"))
                for n, e in task.claims
            ),
            classes=snapshot.storage_classes,
            volumes=tuple(HeldVolume(facts=v) for v in volumes.values()),
        )
    )
    if isinstance(plan, Refusal):
        return None
    if not plan.writes:
        return claims, volumes
    claims, volumes = dict(claims), dict(volumes)
    for write in plan.writes:
        key = f"{write.namespace}/{write.name}"
        if isinstance(write, SelectNode):
            claims[key] = dataclasses.replace(claims[key], selected_node=write.node)
        else:
            claims[key] = dataclasses.replace(
                claims[key], volume_name=write.volume, bind_completed=True
            )
            volumes[write.volume] = dataclasses.replace(
                volumes[write.volume], claim=key, claim_uid=write.uid, phase="Bound"
            )
    return claims, volumes


def _released(snapshot: ClusterSnapshot, result: CycleResult) -> Mapping[str, ReservationBook]:
    """The reservation books without the reservations `result` released."""
    if not result.reservations_released:
        return snapshot.reservations
    gone = {(r.config_map, r.key) for r in result.reservations_released}
    return {
        key: dataclasses.replace(
            book, entries=tuple(e for e in book.entries if (key, e.key) not in gone)
        )
        for key, book in snapshot.reservations.items()
    }

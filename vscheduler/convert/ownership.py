"""Whose PodGroup is it: this scheduler's, or another scheduler's, judged by the pods naming it.

Owns: reading, from a raw pod, the PodGroup it names (the group-name annotations,
`pod.GROUP_NAME_KEYS`, in their order) and whether the pod is this scheduler's
(`spec.schedulerName`, empty meaning `default-scheduler`), without judging the rest of the pod;
`GroupClaims`, the count per PodGroup of this scheduler's pods and other schedulers' pods that
name it, kept pod by pod, and `foreign`: the PodGroups named by other schedulers' pods only.
A pod counts while it exists, whatever its phase: a finished gang of another scheduler stays
theirs.
Must not: raise (a field that does not read counts as absent), look at PodGroups, or decide
anything else about a pod (`pod` does).

A PodGroup no pod names is this scheduler's: Volcano's job controller creates a job's pods only
after its PodGroup is Inqueue, so until then nothing tells whose it is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Set
from typing import Final

from vscheduler.convert.pod import DEFAULT_SCHEDULER, GROUP_NAME_KEYS
from vscheduler.model.facts import JobFacts

Claim = tuple[str, bool]
"""(the PodGroup's `namespace/name`, whether the naming pod is this scheduler's)."""
_NOTHING: Final[Mapping[object, object]] = {}


def group_claim(pod: Mapping[str, object], scheduler_name: str) -> Claim | None:
    """The PodGroup `pod` names and whether the pod is `scheduler_name`'s; None when it names
    none (or its metadata does not read)."""
    meta = pod.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    annotations = meta.get("annotations")
    if not annotations or not isinstance(annotations, Mapping):
        return None
    group = _group_name(annotations)
    namespace = meta.get("namespace") or "default"
    if not group or not isinstance(namespace, str):
        return None
    spec = pod.get("spec")
    named = (spec if isinstance(spec, Mapping) else _NOTHING).get("schedulerName")
    scheduler = named if isinstance(named, str) and named else DEFAULT_SCHEDULER
    return f"{namespace}/{group}", scheduler == scheduler_name


def _group_name(annotations: Mapping[object, object]) -> str:
    """The first group-name annotation holding a non-empty string, else empty."""
    for key in GROUP_NAME_KEYS:
        value = annotations.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def foreign_groups(claims: Iterable[Claim | None]) -> set[str]:
    """The PodGroups that only other schedulers' pods name, among `claims` (one per pod)."""
    ours: set[str] = set()
    theirs: set[str] = set()
    for claim in claims:
        if claim is not None:
            (ours if claim[1] else theirs).add(claim[0])
    return theirs - ours


class GroupClaims:
    """What every pod names, by pod uid, and the counts per PodGroup, updated pod by pod.

    Not thread-safe: its owner (the cache) locks.
    """

    __slots__ = ("_by_pod", "_counts", "_foreign", "_memo", "_version")

    def __init__(self) -> None:
        self._by_pod: dict[str, Claim] = {}
        self._counts: dict[str, list[int]] = {}
        """PodGroup -> [this scheduler's pods, other schedulers' pods] naming it."""
        self._foreign: set[str] = set()
        self._version = 0
        """Moves whenever `foreign` changes."""
        self._memo: tuple[tuple[JobFacts, ...], int, dict[str, JobFacts]] | None = None

    @property
    def foreign(self) -> Set[str]:
        """The PodGroups named by other schedulers' pods and by none of this scheduler's (a
        live view: copy it to keep it)."""
        return self._foreign

    def claim(self, pod_uid: str, claim: Claim | None) -> bool:
        """The pod now names `claim` (None: nothing, or the pod is gone); whether `foreign`
        changed."""
        old = self._by_pod.get(pod_uid)
        if old == claim:
            return False
        groups = [c[0] for c in (old, claim) if c is not None]
        before = [g in self._foreign for g in groups]
        if old is not None:
            del self._by_pod[pod_uid]
            self._count(old, -1)
        if claim is not None:
            self._by_pod[pod_uid] = claim
            self._count(claim, 1)
        return before != [g in self._foreign for g in groups]

    def relist(
        self,
        claims: Iterable[tuple[str, Claim | None]],
        listed: Collection[str],
        covers: Callable[[str], bool],
    ) -> bool:
        """A full list of pods: the uids `listed`, and (uid, claim) for those whose claim may
        have changed (the others name what they did); a pod the list `covers` but does not hold
        is gone. Whether `foreign` changed."""
        changed = False
        for pod_uid, claim in claims:
            changed |= self.claim(pod_uid, claim)
        for pod_uid in [p for p in self._by_pod if p not in listed and covers(p)]:
            changed |= self.claim(pod_uid, None)
        return changed

    def keep_ours(self, jobs: tuple[JobFacts, ...]) -> Mapping[str, JobFacts]:
        """`jobs` by key, less the foreign ones: one mapping, read-only, handed out again while
        neither `jobs` (the very same tuple: a table's cached sorted view) nor `foreign` changed
        (building it costs ~1 ms at 5,000 PodGroups)."""
        memo = self._memo
        if memo is not None and memo[0] is jobs and memo[1] == self._version:
            return memo[2]
        foreign = self._foreign
        ours = {key: job for job in jobs if (key := job.key) not in foreign}
        self._memo = (jobs, self._version, ours)
        return ours

    def _count(self, claim: Claim, delta: int) -> None:
        group, ours = claim
        counts = self._counts.setdefault(group, [0, 0])
        counts[0 if ours else 1] += delta
        foreign = counts[0] == 0 and counts[1] > 0
        if foreign != (group in self._foreign):
            self._version += 1
            (self._foreign.add if foreign else self._foreign.discard)(group)
        if counts == [0, 0]:
            del self._counts[group]

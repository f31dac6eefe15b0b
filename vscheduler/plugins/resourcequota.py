"""resourcequota: a PodGroup is admitted only while its namespace's ResourceQuotas can hold it.

At session open the snapshot's quotas are grouped by namespace. A PodGroup's `minResources` is
read under quota names (`quota_request`: `requests.cpu` counts as `cpu`, and so on), and only
the names a quota limits and the PodGroup asks for (a positive amount) are compared:

    used + admitted + asked <= hard        for every such name of every quota of the namespace

where `used` is the quota's `status.used` and `admitted` what the PodGroups of that namespace
admitted earlier in this session ask for.

Registers (Volcano's resourcequota plugin):
    vote_enqueue   REJECT when some quota of the job's namespace is short, with a note naming the
                   quota and, per short resource, the amount asked, used and limited; a malformed
                   quota rejects every job of its namespace with its problem; ABSTAIN otherwise
                   (no quota, no minResources, or everything fits)
    on_enqueued    the admitted job's minResources join its namespace's `admitted`

It takes no arguments.

Differences from Volcano, on purpose:
- A job that fits gets ABSTAIN, not PERMIT: the plugin is a gate and never lets a job past the
  enqueue checks of later tiers (proportion, overcommit), wherever it sits in the policy.
- A quota's `requests.<name>` and `<name>` are one limit, compared with the PodGroup's `<name>`
  (or its `requests.<name>` when it has no `<name>`); Volcano compares names literally, so a
  `requests.cpu` quota never limits a PodGroup that states `cpu`.
- `admitted` grows when the job is really admitted (jobEnqueued), not inside the vote (as
  Volcano does since 1.16, commit 5be98af37).
- `limits.cpu` is compared in whole cores (rounded up), as the model holds every cpu-valued name
  but `cpu` itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from vscheduler.plugin_api import (
    EMPTY,
    ArgumentReader,
    JobEnqueueable,
    JobEnqueued,
    JobState,
    PluginSession,
    ResourceQuotaFacts,
    Resources,
    Vote,
    quota_request,
)

NAME: Final = "resourcequota"


def shortfall_message(
    quota: ResourceQuotaFacts, short: Sequence[str], asked: Resources, admitted: Resources
) -> str:
    """`resource quota ns/q insufficient: requested cpu 2, used cpu 7, limited cpu 8` (Volcano's
    wording), with what this cycle already admitted when it counts."""

    def listed(res: Resources) -> str:
        return ", ".join(_amount(name, res.get(name)) for name in short)

    text = (
        f"resource quota {quota.key} insufficient: requested {listed(asked)}, "
        f"used {listed(quota.used)}"
    )
    if any(admitted.get(name) for name in short):
        text += f" (and {listed(admitted)} admitted in this cycle)"
    return f"{text}, limited {listed(quota.hard)}"


def _amount(name: str, value: int) -> str:
    return str(Resources({name: value})) if value else f"{name} 0"


class ResourceQuota(JobEnqueueable, JobEnqueued):
    """The per-session plugin: the quotas by namespace and what this session admitted."""

    def __init__(self, session: PluginSession) -> None:
        self._session = session
        self.quotas: dict[str, list[ResourceQuotaFacts]] = {}
        for quota in sorted(session.snapshot.quotas, key=lambda q: q.key):
            self.quotas.setdefault(quota.namespace, []).append(quota)
        self.admitted: dict[str, Resources] = {}

    def vote_enqueue(self, job: JobState) -> Vote:
        """REJECT (with a note) when a quota of the job's namespace cannot hold its
        minResources beside what it uses and what this session admitted; ABSTAIN otherwise."""
        quotas = self.quotas.get(job.facts.namespace)
        if not quotas or job.facts.min_resources is None:
            return Vote.ABSTAIN
        asked = quota_request(job.facts.min_resources)
        admitted = self.admitted.get(job.facts.namespace, EMPTY)
        for quota in quotas:
            if quota.problem:
                why = f"resource quota {quota.key} cannot be read: {quota.problem}"
            else:
                short = quota.exceeded(asked, admitted)
                if not short:
                    continue
                why = shortfall_message(quota, short, asked, admitted)
            self._session.note_job(job, f"podgroup {job.key} is Pending: {why}")
            return Vote.REJECT
        return Vote.ABSTAIN

    def on_enqueued(self, job: JobState) -> None:
        """The admitted job's minResources now count against its namespace's quotas."""
        namespace = job.facts.namespace
        if job.facts.min_resources is None or namespace not in self.quotas:
            return
        asked = quota_request(job.facts.min_resources)
        self.admitted[namespace] = self.admitted.get(namespace, EMPTY) + asked


class Factory:
    """Lives as long as the policy; resourcequota keeps nothing across sessions."""

    name = NAME
    plugin = ResourceQuota

    def open(self, session: PluginSession) -> ResourceQuota:
        """A fresh plugin for `session`."""
        return ResourceQuota(session)


def build(arguments: Mapping[str, object]) -> Factory:
    """The resourcequota plugin (it takes no arguments)."""
    ArgumentReader(arguments, owner=f"plugin {NAME}").finish()
    return Factory()

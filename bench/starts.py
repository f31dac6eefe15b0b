"""`vscheduler run` started again and again on one kept cluster with a pending backlog: process
start to ready and to the first bind, from one or more source trees in turn; print JSON.

    python -m bench.starts                                   # 5,000 nodes, 50,000 pods, 3 rounds
    python -m bench.starts --trees /tmp/old,. --rounds 4     # two trees alternately (A/B)
    python -m bench.starts --nodes 500 --pods 10000

W5's start (`bench.compare --workloads w5`) without remaking the cluster for every start: the
control plane, the KWOK nodes and the pending pods are made once (~4 minutes at the default
size), then each start is one `vscheduler run` (as `bench.compare` starts it) killed right
after its first bind is seen; the pods it bound are deleted and made again pending, so every
start meets the same backlog. `--trees` names source trees (a checkout or `git worktree` of
another commit; each is started with its own `vscheduler` package, its working directory); the
trees take turns within each round, so a slow spell of the machine falls on all of them. One
JSON object per start, then one with the medians per tree.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import compare
from bench.apiclient import METADATA_LIST, Api
from bench.cluster import NAMESPACE, add_nodes, install_crds
from bench.observe import BindWatch, wait_until
from integration.controlplane import REPO_ROOT, ControlPlaneError, LocalControlPlane


def start_once(cp: LocalControlPlane, api: Api, tree: Path) -> dict[str, Any]:
    """One start from `tree`, killed at its first bind: its seconds to ready and to that bind."""
    watch = BindWatch(api).start()
    try:
        time.sleep(1.0)  # the watch's own list is in: only this start's binds count
        before = len(watch.bound)
        workdir = Path(tempfile.mkdtemp(prefix="vscheduler-starts-"))
        sched = compare.start_vscheduler(cp, workdir, [], root=tree)
        try:
            if not wait_until("/readyz", sched.ready, 300, 0.02):
                raise ControlPlaneError(f"{tree}: not ready in 300 s")
            ready = time.monotonic() - sched.start
            if not wait_until("a bind", lambda: len(watch.bound) > before, 300, 0.01):
                raise ControlPlaneError(f"{tree}: no bind in 300 s")
            first = time.monotonic() - sched.start
        finally:
            sched.proc.kill()
            sched.proc.wait()
    finally:
        watch.stop()
    return {"tree": str(tree), "readySeconds": round(ready, 3), "firstBindSeconds": round(first, 3)}


def reset(api: Api, threads: int) -> int:
    """Every bound pod deleted and made again pending; how many."""
    query = urllib.parse.urlencode({"fieldSelector": "spec.nodeName!="})
    status, doc = api.request("GET", f"{compare.POD_PATH}?{query}", accept=METADATA_LIST)
    if status != 200:
        raise ControlPlaneError(f"listing bound pods: HTTP {status}: {doc}")
    names = [item["metadata"]["name"] for item in doc.get("items") or []]

    def delete(name: str) -> None:
        api.request("DELETE", f"{compare.POD_PATH}/{name}", {"gracePeriodSeconds": 0})

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(delete, names))
    wait_until(
        "the bound pods gone", lambda: api.count(compare.POD_PATH, "spec.nodeName!=") == 0, 60, 0.2
    )
    again = [[(compare.POD_PATH, compare.pod(n, "vscheduler", None))] for n in names]
    compare.create_batches(api, again, threads)
    return len(names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8, help="client threads making objects")
    parser.add_argument(
        "--trees", default=str(REPO_ROOT), help="comma-separated source trees (default: this one)"
    )
    args = parser.parse_args()
    trees = [Path(t).resolve() for t in args.trees.split(",")]
    cp = LocalControlPlane(build=False)
    cp.start()
    runs: list[dict[str, Any]] = []
    try:
        install_crds(cp)
        cp.create_namespace(NAMESPACE)
        api = Api(cp)
        made = time.monotonic()
        add_nodes(cp, api, args.nodes, args.threads, untaint=True)
        w = compare.Workload("starts", args.nodes, args.pods, 0, streaming=False)
        compare.create_batches(api, compare.batches(w, "vscheduler"), args.threads)
        setup = round(time.monotonic() - made, 1)
        for round_ in range(args.rounds):
            for tree in trees:
                run = start_once(cp, api, tree)
                run.update(benchmark="starts", round=round_, nodes=args.nodes, pods=args.pods)
                run["remade"] = reset(api, args.threads)
                runs.append(run)
                print(json.dumps(run), flush=True)
    finally:
        cp.stop()
    summary: dict[str, Any] = {"benchmark": "starts", "setupSeconds": setup, "medians": {}}
    for tree in trees:
        mine = [r for r in runs if r["tree"] == str(tree)]
        summary["medians"][str(tree)] = {
            key: round(statistics.median(r[key] for r in mine), 3)
            for key in ("readySeconds", "firstBindSeconds")
        }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

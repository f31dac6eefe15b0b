"""A tiny node_exporter stand-in, served from the test process: node series with set usage.

For each named node it serves what the usage collector's default queries read, the way
node_exporter names them, every series labelled `instance="<node>:9100"` (Prometheus scrapes it
with `honor_labels: true`, so the collector's port stripping is exercised):

- `node_cpu_seconds_total{cpu="0",mode="idle"|"user"}`: counters that advance with wall time at
  the set CPU percent (idle at `1 - cpu/100` seconds per second, user at `cpu/100`);
- `node_memory_MemTotal_bytes` and `node_memory_MemAvailable_bytes` (`total * (1 - mem/100)`).

    exporter = NodeExporter().start()
    exporter.set_node("node-hot", cpu=95, memory=40)
    exporter.address                   # "127.0.0.1:<port>", a scrape target
    exporter.history(job, start, end, step)   # the same series as OpenMetrics with timestamps

`history` gives the samples the series would have had between two times (for `promtool tsdb
create-blocks-from openmetrics`): the counters are a function of time, so history and live
scrapes are one continuous series. A node has existed, at the CPU percent it was first set to,
since the exporter's `origin` (by default an hour before the exporter was made, as if
node_exporter had run that long), or since the `since=` given; a later change of its percent
applies from that moment on. Memory has no past: history uses the current memory percent.

It owns the series and their HTTP endpoint; it does not run Prometheus (integration/prometheus.py).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_SUFFIX = ":9100"
"""node_exporter's port: the `instance` label is `<node>:9100`."""
DEFAULT_MEMORY_TOTAL = 32 * 1024**3


@dataclass
class _Node:
    """One node's series: the CPU percent as a step function of time, and memory."""

    since: float
    changes: list[float] = field(default_factory=list)
    """Times at which the CPU percent changed (the first is `since`)."""
    percents: list[float] = field(default_factory=list)
    idle_at_change: list[float] = field(default_factory=list)
    """The idle counter's value at each change."""
    memory_percent: float = 0.0
    memory_total: int = DEFAULT_MEMORY_TOTAL

    def set_cpu(self, at: float, percent: float) -> None:
        if self.changes:
            idle = self.idle(at)
            if at <= self.changes[-1]:  # set twice at once: the latest wins
                self.changes.pop(), self.percents.pop(), self.idle_at_change.pop()
        else:
            idle = 0.0
        self.changes.append(at)
        self.percents.append(percent)
        self.idle_at_change.append(idle)

    def idle(self, at: float) -> float:
        """Seconds idle from `since` to `at`."""
        i = max(0, bisect.bisect_right(self.changes, at) - 1)
        elapsed = max(0.0, at - self.changes[i])
        return self.idle_at_change[i] + elapsed * (1.0 - self.percents[i] / 100.0)

    def busy(self, at: float) -> float:
        """Seconds not idle from `since` to `at` (mode "user")."""
        return max(0.0, at - self.since) - self.idle(at)


class NodeExporter:
    """node_exporter-style series for named nodes, with settable CPU and memory percent."""

    def __init__(
        self, clock: Callable[[], float] = time.time, *, origin: float | None = None
    ) -> None:
        self._clock = clock
        self.origin = clock() - 3600.0 if origin is None else origin
        """When nodes set without `since` came up."""
        self._lock = threading.Lock()
        self._nodes: dict[str, _Node] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.scrapes = 0
        """How many times /metrics was served."""

    # -- the nodes
    def set_node(
        self,
        name: str,
        *,
        cpu: float,
        memory: float,
        memory_total: int = DEFAULT_MEMORY_TOTAL,
        since: float | None = None,
    ) -> None:
        """Node `name` at `cpu` and `memory` percent from now on; a new node has existed since
        `since` (default: the exporter's origin), at `cpu` percent all that time."""
        now = self._clock()
        with self._lock:
            node = self._nodes.get(name)
            if node is None:
                start = self.origin if since is None else since
                node = self._nodes[name] = _Node(since=start)
                node.set_cpu(start, cpu)
            else:
                node.set_cpu(now, cpu)
            node.memory_percent = memory
            node.memory_total = memory_total

    def remove_node(self, name: str) -> None:
        """Stop serving `name`'s series."""
        with self._lock:
            self._nodes.pop(name, None)

    @property
    def nodes(self) -> list[str]:
        """The nodes served, sorted."""
        with self._lock:
            return sorted(self._nodes)

    # -- the exposition
    def render(self, at: float | None = None) -> str:
        """The Prometheus text exposition at time `at` (default now), without timestamps."""
        when = self._clock() if at is None else at
        with self._lock:
            nodes = sorted(self._nodes.items())
        lines = [
            "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.",
            "# TYPE node_cpu_seconds_total counter",
        ]
        lines += _cpu_lines(nodes, when, "")
        lines += [
            "# HELP node_memory_MemTotal_bytes Memory information field MemTotal_bytes.",
            "# TYPE node_memory_MemTotal_bytes gauge",
        ]
        lines += _memory_lines(nodes, "MemTotal", "")
        lines += [
            "# HELP node_memory_MemAvailable_bytes Memory information field MemAvailable_bytes.",
            "# TYPE node_memory_MemAvailable_bytes gauge",
        ]
        lines += _memory_lines(nodes, "MemAvailable", "")
        return "\n".join(lines) + "\n"

    def history(self, job: str, start: float, end: float, step: float) -> Iterator[str]:
        """OpenMetrics lines (timestamps in seconds, `# EOF` last) of every series at `start`,
        `start + step`, ... before `end`, labelled `job` as the scrape would label them. Only
        times when a node existed give samples. `promtool tsdb create-blocks-from openmetrics`
        wants each series' samples together, so the output goes series by series."""
        with self._lock:
            nodes = sorted(self._nodes.items())
        count = max(0, int((end - start) // step))
        times = [start + i * step for i in range(count) if start + i * step < end]
        extra = f'job="{job}",'
        for name, node in nodes:
            alive = [t for t in times if t >= node.since]
            for mode in ("idle", "user"):
                for t in alive:
                    value = node.idle(t) if mode == "idle" else node.busy(t)
                    yield _cpu_sample(name, mode, value, extra) + f" {t:.3f}"
            for kind in ("MemTotal", "MemAvailable"):
                value = _memory_value(node, kind)
                for t in alive:
                    yield f"node_memory_{kind}_bytes{{{extra}{_instance(name)}}} {value} {t:.3f}"
        yield "# EOF"

    # -- the HTTP server
    def start(self) -> NodeExporter:
        """Serve /metrics on 127.0.0.1 at a free port, from a daemon thread."""
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                body = exporter.render().encode()
                exporter.scrapes += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="node-exporter", daemon=True
        )
        self._thread.start()
        return self

    @property
    def address(self) -> str:
        """`127.0.0.1:<port>`: the scrape target."""
        if self._server is None:
            raise RuntimeError("the exporter is not started")
        return f"127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        """Stop serving."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> NodeExporter:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _instance(node: str) -> str:
    return f'instance="{node}{PORT_SUFFIX}"'


def _cpu_sample(node: str, mode: str, value: float, extra: str) -> str:
    return f'node_cpu_seconds_total{{{extra}cpu="0",{_instance(node)},mode="{mode}"}} {value:.6f}'


def _cpu_lines(nodes: list[tuple[str, _Node]], at: float, extra: str) -> list[str]:
    lines: list[str] = []
    for name, node in nodes:
        lines.append(_cpu_sample(name, "idle", node.idle(at), extra))
        lines.append(_cpu_sample(name, "user", node.busy(at), extra))
    return lines


def _memory_value(node: _Node, kind: str) -> int:
    if kind == "MemTotal":
        return node.memory_total
    return round(node.memory_total * (1.0 - node.memory_percent / 100.0))


def _memory_lines(nodes: list[tuple[str, _Node]], kind: str, extra: str) -> list[str]:
    return [
        f"node_memory_{kind}_bytes{{{extra}{_instance(name)}}} {_memory_value(node, kind)}"
        for name, node in nodes
    ]

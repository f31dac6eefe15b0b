"""The benchmarks' API client: keep-alive HTTPS requests to the local control plane, and
objects created from several threads at once.

Owns: `Api` (one connection per thread, the admin token, JSON in and out, a count by field
selector) and `create_all`.
Must not: know the objects it sends (`cluster` builds them) or time anything.
"""

from __future__ import annotations

import http.client
import json
import queue
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from integration.controlplane import ControlPlaneError, LocalControlPlane

METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
MERGE_PATCH = "application/merge-patch+json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class Api:
    """Raw JSON requests to the API server as admin, one keep-alive connection per thread."""

    def __init__(self, cp: LocalControlPlane) -> None:
        url = urllib.parse.urlsplit(cp.server_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443
        self.token = cp.admin_token
        self.ssl = ssl.create_default_context(cafile=str(cp.ca_path))
        self._local = threading.local()

    def connection(self, timeout: float = 60.0) -> http.client.HTTPSConnection:
        """A new connection (the caller owns it)."""
        return http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=timeout)

    def headers(
        self, accept: str = "application/json", content_type: str = "application/json"
    ) -> dict[str, str]:
        """Authorization and content negotiation."""
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": accept,
            "Content-Type": content_type,
        }

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        accept: str = "application/json",
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        """One request on this thread's connection; (status, decoded JSON or None).

        A dropped connection is reopened and the request sent once more."""
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(2):
            conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self.connection()
            try:
                conn.request(method, path, body=data, headers=self.headers(accept, content_type))
                response = conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
                continue
            return response.status, json.loads(raw) if raw else None
        raise AssertionError("unreachable")

    def count(self, path: str, field_selector: str) -> int:
        """How many objects a metadata-only list with this field selector returns."""
        query = urllib.parse.urlencode({"fieldSelector": field_selector})
        status, doc = self.request("GET", f"{path}?{query}", accept=METADATA_LIST)
        if status != 200:
            raise ControlPlaneError(f"GET {path}: HTTP {status}: {doc}")
        return len(doc.get("items") or [])


def create_all(
    api: Api, items: Sequence[tuple[str, dict[str, Any]]], threads: int
) -> dict[str, Any]:
    """POST every (path, body) from `threads` threads; 409 counts as created (a retried POST),
    429/5xx and dropped connections are retried. Returns start/end (monotonic) and counts."""
    work: queue.SimpleQueue[tuple[str, dict[str, Any]]] = queue.SimpleQueue()
    for item in items:
        work.put(item)
    retries = [0]
    failures: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        while True:
            try:
                path, body = work.get_nowait()
            except queue.Empty:
                return
            for attempt in range(20):
                try:
                    status, doc = api.request("POST", path, body)
                except (OSError, http.client.HTTPException) as exc:
                    status, doc = 0, str(exc)
                if status in (200, 201, 409):
                    break
                with lock:
                    retries[0] += 1
                if (status not in (0, 429) and status < 500) or attempt == 19:
                    with lock:
                        failures.append(f"POST {path}: HTTP {status}: {str(doc)[:300]}")
                    break
                time.sleep(0.05 * (attempt + 1))

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(worker) for _ in range(threads)]:
            future.result()
    end = time.monotonic()
    if failures:
        raise ControlPlaneError(f"{len(failures)} creates failed, e.g. {failures[:3]}")
    seconds = end - start
    return {
        "start": start,
        "end": end,
        "count": len(items),
        "seconds": round(seconds, 3),
        "perSecond": round(len(items) / seconds, 1) if seconds else None,
        "retries": retries[0],
    }

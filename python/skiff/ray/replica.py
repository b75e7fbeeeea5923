"""The deployments behind the ingress: SkiffReplica (one engine each) and
MetricsBoard (each replica's Prometheus text, for the ingress's /metrics)."""
from __future__ import annotations

import asyncio
import re
import time
from typing import List, Optional, Sequence, Tuple

import httpx
from ray import serve

from .prefix_view import BlockLru
from .serve_process import ServeProcess, find_binary

# Response headers that belong to one hop (the ingress sets its own).
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}
# Hashes a replica reports at most: its most recently used blocks.
REPORTED_BLOCKS = 16384
METRICS_PERIOD_S = 0.5


class SkiffReplica:
    """One Ray Serve replica: owns a `skiff serve` child (skiff.ray.serve_process)
    and streams each request to it and its response back, unchanged.

    It also models its engine's prefix cache for the router: the routing keys
    of the requests it served, in least-recently-used order as the engine's
    block pool evicts, up to the pool's size (read from the child's /metrics);
    Ray pulls that model as the replica's routing stats (record_routing_stats).
    """

    def __init__(self, model: str, threads: int, serve_args: Sequence[str], binary: Optional[str],
                 board=None):
        self._serve = ServeProcess(find_binary(binary), model, threads, list(serve_args))
        self._client = httpx.AsyncClient(base_url=self._serve.url,
                                         timeout=httpx.Timeout(None, connect=10.0))
        self._cache = BlockLru()
        self._board = board
        self._replica_id = serve.get_replica_context().replica_id.unique_id
        # On the replica's event loop (Ray runs the constructor there), not a
        # thread of its own: a handle is called from its loop in every Ray
        # Serve mode (RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD=0 included).
        self._publisher = asyncio.get_running_loop().create_task(self._publish_metrics())

    async def __call__(self, key: Tuple[int, ...], method: str, target: str,
                       headers: List[Tuple[str, str]], body: bytes):
        """Yields (status, headers), then the body's bytes as they come; the
        headers name this replica (x-skiff-replica) for clients and tests."""
        if key:
            self._cache.touch(key)
        request = self._client.build_request(method, target, headers=headers, content=body)
        response = await self._client.send(request, stream=True)
        try:
            headers = [(k, v) for k, v in response.headers.items() if k.lower() not in HOP_HEADERS]
            yield response.status_code, headers + [("x-skiff-replica", self._replica_id)]
            async for chunk in response.aiter_raw():
                yield chunk
        finally:
            await response.aclose()

    def check_health(self) -> None:
        """Ray restarts a replica whose engine is gone."""
        if not self._serve.alive():
            raise RuntimeError("skiff serve exited:\n" + self._serve.log_tail())

    def record_routing_stats(self) -> dict:
        return {"at": time.time(), "capacity_blocks": self._cache.capacity,
                "blocks": self._cache.most_recent(REPORTED_BLOCKS)}

    def engine_pid(self) -> Optional[int]:
        return self._serve.pid

    async def _publish_metrics(self) -> None:
        """Every METRICS_PERIOD_S: the child's /metrics to the board, and its
        KV pool's size to the cache model."""
        while True:
            await asyncio.sleep(METRICS_PERIOD_S)
            try:
                text = (await self._client.get("/metrics", timeout=5)).text
            except httpx.TransportError:
                continue  # the engine is gone: check_health reports it
            m = re.search(r"^skiff:kv_cache_blocks_total\{[^}]*\} (\S+)$", text, re.M)
            if m:
                self._cache.capacity = max(1, int(float(m.group(1))))
            if self._board is not None:
                try:
                    await asyncio.wait_for(self._board.put.remote(self._replica_id, text), timeout=5)
                except Exception:  # the board restarting: the next period tries again
                    pass

    def __del__(self):
        self._publisher.cancel()
        self._serve.stop()


class MetricsBoard:
    """The latest Prometheus text of each live replica, by replica id; a
    replica silent for `max_age_s` is gone (killed, or restarted under a new id)."""

    def __init__(self, max_age_s: float = 5.0):
        self._max_age_s = max_age_s
        self._texts = {}

    def put(self, replica_id: str, text: str) -> None:
        self._texts[replica_id] = (text, time.monotonic())

    def texts(self) -> dict:
        now = time.monotonic()
        self._texts = {rid: v for rid, v in self._texts.items() if now - v[1] < self._max_age_s}
        return {rid: text for rid, (text, _) in self._texts.items()}

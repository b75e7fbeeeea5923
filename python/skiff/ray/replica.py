"""The deployments behind the ingress: SkiffReplica (one engine each) and
MetricsBoard (each replica's Prometheus text, for the ingress's /metrics)."""
from __future__ import annotations

import asyncio
import time
from typing import List, Optional, Sequence, Tuple

import aiohttp
from ray import serve

from .serve_process import ServeProcess, find_binary

# Response headers that belong to one hop (the ingress sets its own).
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}
# Hashes a replica reports at most: its engine's most recently used blocks
# (the most `skiff serve` lists).
REPORTED_BLOCKS = 16384
METRICS_PERIOD_S = 0.5


class SkiffReplica:
    """One Ray Serve replica: owns a `skiff serve` child (skiff.ray.serve_process)
    and streams each request to it and its response back, unchanged.

    Ray pulls its routing stats (record_routing_stats) every routing-stats
    period: what its engine's prefix cache holds, as the child lists it
    (GET /kv/prefix_blocks), for the router's view of the replica.
    """

    def __init__(self, model: str, threads: int, serve_args: Sequence[str], binary: Optional[str],
                 board=None):
        self._serve = ServeProcess(find_binary(binary), model, threads, list(serve_args))
        # aiohttp (a dependency of Ray Serve's): per request it costs about a
        # millisecond less than httpx did on this path, measured at 1 client.
        self._session = aiohttp.ClientSession(self._serve.url, auto_decompress=False,
                                              timeout=aiohttp.ClientTimeout(total=None, connect=10))
        self._auth = {"Authorization": f"Bearer {self._serve.api_key}"} if self._serve.api_key else {}
        self._board = board
        self._replica_id = serve.get_replica_context().replica_id.unique_id
        # On the replica's event loop (Ray runs the constructor there), not a
        # thread of its own: a handle is called from its loop in every Ray
        # Serve mode (RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD=0 included).
        self._publisher = asyncio.get_running_loop().create_task(self._publish_metrics())

    async def forward(self, method: str, target: str, headers: List[Tuple[str, str]],
                      body: bytes) -> aiohttp.ClientResponse:
        """The engine's response to the request, its body not read yet (the
        caller releases it); aiohttp.ClientError when the engine does not answer."""
        return await self._session.request(method, target, headers=headers, data=body)

    def response_headers(self, response: aiohttp.ClientResponse) -> List[Tuple[str, str]]:
        """The engine's headers less this hop's, naming this replica (x-skiff-replica) for clients and tests."""
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in HOP_HEADERS]
        return headers + [("x-skiff-replica", self._replica_id)]

    async def __call__(self, key: Tuple[int, ...], method: str, target: str,
                       headers: List[Tuple[str, str]], body: bytes):
        """Yields (status, headers), then the body's bytes as they come. The
        key (the prompt's block hashes) is the router's (skiff.ray.router)."""
        response = await self.forward(method, target, headers, body)
        try:
            yield response.status, self.response_headers(response)
            async for chunk in response.content.iter_any():
                yield chunk
        finally:
            response.release()

    def check_health(self) -> None:
        """Ray restarts a replica whose engine is gone."""
        if not self._serve.alive():
            raise RuntimeError("skiff serve exited:\n" + self._serve.log_tail())

    async def record_routing_stats(self) -> dict:
        """The engine's cached blocks, most recently used first; {} (no
        report: the router keeps its view) while the engine does not answer."""
        at = time.time()
        try:
            async with self._session.get("/kv/prefix_blocks", params={"limit": REPORTED_BLOCKS},
                                         headers=self._auth, timeout=aiohttp.ClientTimeout(total=5)) as r:
                r.raise_for_status()
                listing = await r.json()
        except (aiohttp.ClientError, asyncio.TimeoutError):
            return {}
        return {"at": at, "capacity_blocks": listing["total_blocks"], "blocks": listing["hashes"]}

    def engine_pid(self) -> Optional[int]:
        return self._serve.pid

    async def _publish_metrics(self) -> None:
        """Every METRICS_PERIOD_S: the child's /metrics to the board."""
        while True:
            await asyncio.sleep(METRICS_PERIOD_S)
            try:
                async with self._session.get("/metrics", timeout=aiohttp.ClientTimeout(total=5)) as r:
                    text = await r.text()
            except (aiohttp.ClientError, asyncio.TimeoutError):
                continue  # the engine is gone: check_health reports it
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

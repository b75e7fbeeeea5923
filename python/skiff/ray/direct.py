"""skiff.ray behind Ray Serve's HAProxy ingress (RAY_SERVE_ENABLE_HA_PROXY=1):
the replicas serve HTTP themselves.

With the default ingress a request crosses three Python processes on its way
in and back: Ray's proxy, the ingress deployment (SkiffIngress: the routing
key) and the replica, each hop a few milliseconds on a busy machine. Here
HAProxy (C) takes the request; for a POST it first asks RouteChooser, the
application's ingress request router (Ray's contract: POST /internal/route
with the request's body, answered {"replica_id", "host", "port"}), which
computes the prompt's routing key and runs the replicas' request router
(skiff.ray.router, or Ray's default) without sending anything; HAProxy then
sends the request to that replica's own HTTP port (Ray's direct ingress),
where SkiffHttpReplica streams it to its `skiff serve` and back.

Faults: a request its replica never answered (the replica refused the
connection, or died before a byte of the response: RAY_SERVE_HAPROXY_RETRY_ON
with empty-response) HAProxy sends again, to another replica (Ray's HAProxy
retries with `option redispatch`); an engine that fails before answering is a
503 with Retry-After; a stream whose engine fails ends with an error event in
the route's dialect, and one whose replica process dies ends with the connection.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Optional, Tuple

import aiohttp
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from skiff._skiff import RequestPrompts

from .ingress import FORWARDED_HEADERS, INLINE_KEY_BYTES, stream_error_event, unavailable
from .metrics import merge_replica_metrics
from .replica import SkiffReplica
from .router import PICK_ONLY

logger = logging.getLogger("ray.serve")


def haproxy_ingress() -> bool:
    """Whether Ray Serve runs its HAProxy ingress (read by Ray from the environment of every node)."""
    return os.environ.get("RAY_SERVE_ENABLE_HA_PROXY", "0") == "1"


def forwards_bodies() -> bool:
    """Whether HAProxy passes request bodies to /internal/route (without them no prompt is seen)."""
    return os.environ.get("RAY_SERVE_INGRESS_REQUEST_ROUTER_FORWARD_BODY", "").lower() in ("1", "true")


def prompt_route(body: bytes) -> Optional[str]:
    """The route a body was sent to, from its fields (HAProxy passes only the
    body): a prompt is a completion, messages with a top-level system field
    are Anthropic's Messages, other messages a chat completion. A hint for the
    routing key only: a wrong guess costs a cache miss, never the request."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if "prompt" in data:
        return "/v1/completions"
    if "messages" in data:
        return "/v1/messages" if "system" in data else "/v1/chat/completions"
    return None


class RouteChooser:
    """The ingress request router HAProxy asks before each POST."""

    def __init__(self, replicas, model: str, block_size: int, chat_template: Optional[str] = None,
                 special_tokens_in_content: bool = False):
        self._replicas = replicas
        self._prompts = RequestPrompts(model, chat_template, special_tokens_in_content)
        self._block_size = block_size

    def routing_key(self, body: bytes) -> Tuple[int, ...]:
        route = prompt_route(body)
        if route is None:
            return ()
        try:
            return tuple(self._prompts.block_hashes(route, body.decode("utf-8", errors="replace"), self._block_size))
        except ValueError:  # a request the server will refuse: its replica answers it
            return ()

    async def __call__(self, request: Request) -> Response:
        if request.url.path != "/internal/route" or request.method != "POST":
            return JSONResponse({"status": "ok"}) if request.url.path == "/health" else Response(status_code=404)
        body = await request.body()
        # A truncated body (past HAProxy's buffer) is no JSON: no key.
        if "x-body-truncated" in request.headers:
            key = ()
        elif len(body) <= INLINE_KEY_BYTES:  # as SkiffIngress does: a long prompt off the event loop
            key = self.routing_key(body)
        else:
            key = await asyncio.to_thread(self.routing_key, body)
        try:
            async with self._replicas.choose_replica(key, _reserve=False, **{PICK_ONLY: True}) as selection:
                replica = selection._replica  # as Ray's own LLMRouter reads it
                endpoint = replica.backend_http_endpoint
                if endpoint is None:  # any non-200: HAProxy answers the client 503
                    return JSONResponse({"detail": f"replica {selection.replica_id} has no HTTP port"},
                                        status_code=503)
                host, port = endpoint
                return JSONResponse({"host": host, "port": port, "replica_id": replica.replica_id.to_full_id_str()})
        except Exception as e:  # no replica now: HAProxy answers the client 503
            return JSONResponse({"detail": f"{type(e).__name__}: {e}"}, status_code=503)


class SkiffHttpReplica(SkiffReplica):
    """A replica that is the application's HTTP ingress: HAProxy sends it the
    requests RouteChooser picked it for (and GETs by its own balancing).

    It holds at most `request_limit` requests (max_ongoing_requests +
    max_queued_requests: its engine batches and queues them) and answers the
    rest 503 with Retry-After, in skiff serve's error shape; Ray's own limit
    (text, no Retry-After) is set above it so that it never answers first.
    """

    def __init__(self, *args, request_limit: int, **kwargs):
        super().__init__(*args, **kwargs)
        self._request_limit = request_limit
        self._requests = 0

    async def __call__(self, request: Request) -> Response:
        path = request.url.path
        if path == "/metrics" and request.method == "GET" and self._board is not None:
            texts = await self._board.texts.remote()
            return Response(merge_replica_metrics(texts), media_type="text/plain; version=0.0.4")
        if self._requests >= self._request_limit:
            return unavailable("the replica's queue is full")
        self._requests += 1
        streaming = False
        try:
            response = await self._answer(request)
            streaming = isinstance(response, StreamingResponse)
            return response
        finally:
            if not streaming:  # a stream's generator gives its place back as it ends
                self._requests -= 1

    async def _answer(self, request: Request) -> Response:
        path = request.url.path
        body = await request.body()
        target = path + (f"?{request.url.query}" if request.url.query else "")
        headers = [(k, v) for k, v in request.headers.items() if k.lower() in FORWARDED_HEADERS]
        try:
            response = await self.forward(request.method, target, headers, body)
        except aiohttp.ClientError as e:  # the engine is gone: check_health restarts the replica
            return unavailable(f"this replica's engine is not answering ({type(e).__name__})")
        headers = dict(self.response_headers(response))
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            try:  # whole, or not at all
                return Response(await response.read(), status_code=response.status, headers=headers)
            except aiohttp.ClientError as e:
                return unavailable(f"this replica's engine failed while answering ({type(e).__name__})")
            finally:
                response.release()
        return StreamingResponse(self._relay(path, response), status_code=response.status, headers=headers)

    async def _relay(self, path: str, response: aiohttp.ClientResponse):
        try:
            async for chunk in response.content.iter_any():
                yield chunk
        except aiohttp.ClientError as e:
            logger.warning("skiff: a stream of %s lost its engine: %s", path, e)
            yield stream_error_event(path, "the engine serving this stream failed; send the request again")
        finally:
            response.release()
            self._requests -= 1

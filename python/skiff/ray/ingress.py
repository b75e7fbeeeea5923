"""The HTTP ingress: Ray Serve's proxy hands it each request; it computes the
request's routing key and sends it through the replicas' handle, whose
request router (skiff.ray.router, or Ray's default) picks the replica.

Faults: a replica that fails before the response's first body byte reaches
the client (its actor killed, its engine gone, a connection refused) has
served nothing the client saw, so the request is sent again, to the replica
the router picks now; a stream that fails after its first bytes ends with an
error event in the route's dialect, so no client waits on a dead replica.
Over the replicas' queue limit (max_queued_requests), 503 with Retry-After.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import List, Optional, Tuple

from ray.serve.exceptions import BackPressureError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from skiff._skiff import RequestPrompts

from .metrics import merge_replica_metrics

logger = logging.getLogger("ray.serve")

# The routes whose requests carry a prompt, as skiff serve routes them.
PROMPT_ROUTES = ("/v1/completions", "/v1/chat/completions", "/v1/messages")
# Bodies up to this size get their routing key on the event loop (well under
# a millisecond); larger ones on a thread.
INLINE_KEY_BYTES = 4096
# Request headers the engine reads; the rest describe the hop to the ingress.
FORWARDED_HEADERS = ("content-type", "authorization", "x-api-key", "accept", "anthropic-version")


def error_body(status: int, message: str) -> dict:
    """skiff serve's error shape (server/openai_shapes.cpp)."""
    kind = "ServiceUnavailableError" if status == 503 else "InternalServerError"
    return {"error": {"message": message, "type": kind, "param": None, "code": status}}


def stream_error_event(path: str, message: str) -> bytes:
    """The last bytes of a stream its replica could not finish (server/handler_support.cpp's shapes)."""
    if path.startswith("/v1/messages"):
        data = {"type": "error", "error": {"type": "api_error", "message": message}}
        return f"event: error\ndata: {json.dumps(data)}\n\n".encode()
    return f"data: {json.dumps(error_body(503, message))}\n\ndata: [DONE]\n\n".encode()


def unavailable(message: str) -> Response:
    return JSONResponse(error_body(503, message), status_code=503, headers={"Retry-After": "1"})


class SkiffIngress:
    def __init__(self, replicas, board, model: str, block_size: int, chat_template: Optional[str] = None,
                 special_tokens_in_content: bool = False, max_attempts: int = 3):
        self._replicas = replicas.options(stream=True)
        self._board = board
        self._prompts = RequestPrompts(model, chat_template, special_tokens_in_content)
        self._block_size = block_size
        self._max_attempts = max_attempts

    def routing_key(self, method: str, path: str, body: bytes) -> Tuple[int, ...]:
        """The prompt's chained block hashes; () for a request without one, or
        one the server will refuse (the replica answers it, with its message)."""
        if method != "POST" or path not in PROMPT_ROUTES:
            return ()
        try:
            return tuple(self._prompts.block_hashes(path, body.decode("utf-8", errors="replace"), self._block_size))
        except ValueError:
            return ()

    async def __call__(self, request: Request) -> Response:
        path = request.url.path
        if path == "/metrics" and request.method == "GET":
            texts = await self._board.texts.remote()
            return Response(merge_replica_metrics(texts), media_type="text/plain; version=0.0.4")
        body = await request.body()
        target = path + (f"?{request.url.query}" if request.url.query else "")
        headers = [(k, v) for k, v in request.headers.items() if k.lower() in FORWARDED_HEADERS]
        # A long prompt is rendered and tokenized off the event loop (the GIL
        # released), where it would stall every other request; a short one
        # inline, in less time than the hop to a thread takes.
        if len(body) <= INLINE_KEY_BYTES:
            key = self.routing_key(request.method, path, body)
        else:
            key = await asyncio.to_thread(self.routing_key, request.method, path, body)
        failure = ""
        for attempt in range(self._max_attempts):
            if attempt:  # Ray drops a dead replica from the router's candidates meanwhile
                await asyncio.sleep(0.25 * attempt)
            stream = self._replicas.remote(key, request.method, target, headers, body)
            try:
                status, response_headers = await stream.__anext__()
                first = await anext(stream, b"")
                streamed = any(k.lower() == "content-type" and v.startswith("text/event-stream")
                               for k, v in response_headers)
                if not streamed:  # whole, or not at all
                    rest = [chunk async for chunk in stream]
                    return Response(first + b"".join(rest), status_code=status, headers=dict(response_headers))
            except BackPressureError:
                return unavailable("the replicas' queues are full")
            except Exception as e:  # the replica failed before the client saw a byte: send it again
                stream.cancel()
                failure = f"{type(e).__name__}: {e}"
                logger.warning("skiff: request to %s failed on attempt %d, retrying: %s", path, attempt + 1,
                               failure.splitlines()[0] if failure else "")
                continue
            return StreamingResponse(self._relay(path, first, stream), status_code=status,
                                     headers=dict(response_headers))
        return unavailable(f"no replica could serve the request ({failure.splitlines()[0] if failure else ''})")

    @staticmethod
    async def _relay(path: str, first: bytes, stream):
        yield first
        try:
            async for chunk in stream:
                yield chunk
        except Exception as e:
            logger.warning("skiff: a stream of %s lost its replica: %s", path, e)
            yield stream_error_event(path, "the replica serving this stream failed; send the request again")
        finally:
            stream.cancel()

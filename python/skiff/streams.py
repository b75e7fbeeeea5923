"""Streams of deltas: the consumer's next() steps the engine (GIL released)."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import List, Optional


@dataclass
class StreamDelta:
    prompt_index: int          # which of the prompts
    index: int                 # which of its n completions
    text: str                  # new text since the last delta
    token_ids: List[int]
    finish_reason: Optional[str]


class Stream:
    def __init__(self, native):
        self._native = native
        self._slot = {rid: i for i, rid in enumerate(native.request_ids)}
        self._ready: List[StreamDelta] = []

    def __iter__(self):
        return self

    def __next__(self) -> StreamDelta:
        while not self._ready:
            deltas = self._native.next()
            if deltas is None:
                raise StopIteration
            self._ready = [StreamDelta(self._slot[d["request_id"]], d["index"], d["text"],
                                       list(d["token_ids"]), d["finish_reason"]) for d in deltas]
        return self._ready.pop(0)

    def close(self) -> None:
        """Cancels every request still running; their KV blocks are freed, and
        deltas not yet taken are dropped."""
        self._ready = []
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class AsyncStream:
    """One worker thread steps the engine, so the event loop never blocks."""

    def __init__(self, stream: Stream):
        self._stream = stream
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skiff-stream")

    def __aiter__(self):
        return self

    async def __anext__(self) -> StreamDelta:
        loop = asyncio.get_running_loop()
        delta = await loop.run_in_executor(self._worker, next, self._stream, None)
        if delta is None:
            raise StopAsyncIteration
        return delta

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._worker, self._stream.close)
        self._worker.shutdown(wait=False)

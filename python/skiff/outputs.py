"""vLLM's RequestOutput and CompletionOutput, filled from the engine's dicts."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union


@dataclass
class Logprob:
    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: List[int]
    cumulative_logprob: Optional[float]
    logprobs: Optional[List[Dict[int, Logprob]]]
    finish_reason: Optional[str] = None
    stop_reason: Union[int, str, None] = None

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestMetrics:
    arrival_time: float
    finished_time: Optional[float] = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput]
    finished: bool = True
    metrics: Optional[RequestMetrics] = field(default=None, repr=False)


def logprobs_from_engine(entries, decode) -> List[Dict[int, Logprob]]:
    """[(token, logprob, [(alt, logprob), ...])] as vLLM's per-position dicts."""
    positions = []
    for token, value, top in entries:
        position = {token: Logprob(value, None, decode([token]))}
        for rank, (alt, alt_value) in enumerate(top, start=1):
            if alt == token:
                position[token].rank = rank
            else:
                position[alt] = Logprob(alt_value, rank, decode([alt]))
        positions.append(position)
    return positions


def completion_from_engine(d: dict, want_logprobs: bool, decode) -> CompletionOutput:
    if d["finish_reason"] == "error":
        raise RuntimeError(f"skiff: generation failed: {d['error']}")
    logprobs = logprobs_from_engine(d["logprobs"], decode) if want_logprobs else None
    cumulative = sum(v for _, v, _ in d["logprobs"]) if want_logprobs else None
    return CompletionOutput(d["index"], d["text"], list(d["token_ids"]), cumulative, logprobs,
                            d["finish_reason"], d["stop_reason"])

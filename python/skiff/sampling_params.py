"""vLLM's SamplingParams: the same field names and defaults.

Values are checked by the C++ engine (the server's checks, the server's
messages) when a request is queued, and invalid ones raise ValueError; a
SamplingParams is checked at construction too, by `LLM` when it is used.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union


@dataclass
class StructuredOutputsParams:
    """vLLM's StructuredOutputsParams: the output must match one of these."""
    json: Optional[Union[str, Dict[str, Any]]] = None  # a JSON Schema (dict or JSON text)
    regex: Optional[str] = None
    choice: Optional[List[str]] = None
    grammar: Optional[str] = None  # GBNF
    json_object: Optional[bool] = None
    disable_any_whitespace: bool = False  # compact JSON: no whitespace between tokens

    def engine_fields(self) -> Dict[str, Any]:
        fields = {"json": self.json, "regex": self.regex, "choice": self.choice,
                  "grammar": self.grammar, "json_object": self.json_object}
        out = {k: v for k, v in fields.items() if v is not None}
        if self.disable_any_whitespace:
            out["disable_any_whitespace"] = True
        return out


# vLLM's older name for the same thing (before v0.10: guided_decoding=GuidedDecodingParams(...)).
GuidedDecodingParams = StructuredOutputsParams


@dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: Optional[int] = None
    stop: Optional[Union[str, List[str]]] = None
    stop_token_ids: Optional[List[int]] = None
    max_tokens: Optional[int] = 16
    min_tokens: int = 0
    logprobs: Optional[int] = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    ignore_eos: bool = False
    skip_special_tokens: bool = True
    logit_bias: Optional[Dict[int, float]] = None
    allowed_token_ids: Optional[List[int]] = None
    bad_words: Optional[List[str]] = None
    structured_outputs: Optional[StructuredOutputsParams] = None
    guided_decoding: Optional[StructuredOutputsParams] = None

    def engine_fields(self) -> str:
        """The fields as the JSON object the engine reads (read_sampling_field)."""
        stop = [self.stop] if isinstance(self.stop, str) else self.stop
        fields = {
            "n": self.n, "temperature": self.temperature, "top_p": self.top_p,
            "top_k": self.top_k, "min_p": self.min_p, "seed": self.seed,
            "stop": stop or [], "stop_token_ids": self.stop_token_ids or [],
            "max_tokens": self.max_tokens, "logprobs": self.logprobs,
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
            "repetition_penalty": self.repetition_penalty, "ignore_eos": self.ignore_eos,
            "min_tokens": self.min_tokens, "skip_special_tokens": self.skip_special_tokens,
        }
        if self.logit_bias:
            fields["logit_bias"] = {str(int(k)): v for k, v in self.logit_bias.items()}
        if self.allowed_token_ids is not None:
            fields["allowed_token_ids"] = list(self.allowed_token_ids)
        if self.bad_words:
            fields["bad_words"] = list(self.bad_words)
        if self.structured_outputs is not None and self.guided_decoding is not None:
            raise ValueError("sampling: give structured_outputs or guided_decoding, not both")
        constraint = self.structured_outputs or self.guided_decoding
        if constraint is not None:
            fields["structured_outputs"] = constraint.engine_fields()
        try:
            return json.dumps(fields, allow_nan=False)
        except ValueError as e:  # NaN or infinity: the server's JSON cannot carry them either
            raise ValueError(f"sampling: values must be finite numbers ({e})") from None

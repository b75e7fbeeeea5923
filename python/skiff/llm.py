"""vLLM's LLM class over skiff._skiff.Engine: generate, chat, streams.

Everything here arranges arguments and wraps results; the engine (C++) does
the work, stepping with the GIL released.
"""
from __future__ import annotations

import dataclasses
import json
import random
import time
from typing import List, Optional, Sequence, Union

from . import _skiff
from .outputs import RequestMetrics, RequestOutput, completion_from_engine
from .sampling_params import SamplingParams
from .streams import AsyncStream, Stream
from .tokenizer import Tokenizer, chat_body

PromptType = Union[str, List[int], dict]


def _progress_bar(total: int, use_tqdm: bool):
    """tqdm's bar where vLLM shows one; nothing without tqdm installed."""
    if not use_tqdm:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="Processed prompts", dynamic_ncols=True)


class LLM:
    def __init__(self, model: str, *, max_num_seqs: int = 64, max_model_len: Optional[int] = None,
                 max_num_batched_tokens: Optional[int] = None, kv_cache_memory_bytes: Optional[int] = None,
                 kv_cache_dtype: str = "auto", seed: Optional[int] = 0, enable_prefix_caching: bool = True,
                 tokenizer: Optional[str] = None, speculative_config: Optional[dict] = None, **unused):
        options = {"max_num_seqs": max_num_seqs, "enable_prefix_caching": enable_prefix_caching,
                   "kv_cache_dtype": "f16" if kv_cache_dtype == "auto" else kv_cache_dtype}
        if max_model_len is not None:
            options["max_model_len"] = max_model_len
        if max_num_batched_tokens is not None:
            options["max_num_batched_tokens"] = max_num_batched_tokens
        if kv_cache_memory_bytes is not None:
            options["kv_cache_memory_bytes"] = kv_cache_memory_bytes
        if speculative_config is not None:
            options["speculative_config"] = speculative_config
        self._engine = _skiff.Engine(str(model), json.dumps(options))
        self._tokenizer = Tokenizer(self._engine)
        # vLLM seeds one generator per LLM: unseeded requests are reproducible run to run.
        self._seeds = random.Random(seed) if seed is not None else random.SystemRandom()

    def get_tokenizer(self) -> Tokenizer:
        return self._tokenizer

    def _prompt_ids(self, prompt: PromptType) -> List[int]:
        if isinstance(prompt, str):
            return self._tokenizer.encode(prompt)
        if isinstance(prompt, dict):  # vLLM's TextPrompt / TokensPrompt
            if "prompt_token_ids" in prompt:
                return list(prompt["prompt_token_ids"])
            return self._tokenizer.encode(prompt["prompt"])
        return list(prompt)

    def _requests(self, prompts, sampling_params):
        """(prompt texts, prompt ids, SamplingParams, engine JSON) per prompt."""
        if isinstance(prompts, (str, dict)) or (prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        prompts = list(prompts)
        if sampling_params is None:
            sampling_params = SamplingParams()
        params = (list(sampling_params) if isinstance(sampling_params, Sequence)
                  else [sampling_params] * len(prompts))
        if len(params) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(params)} SamplingParams")
        texts = [p if isinstance(p, str) else (p.get("prompt") if isinstance(p, dict) else None)
                 for p in prompts]
        ids = [self._prompt_ids(p) for p in prompts]
        fields = [self._engine_fields(p) for p in params]
        return texts, ids, params, fields

    def _engine_fields(self, params: SamplingParams) -> str:
        if params.seed is None:
            params = dataclasses.replace(params, seed=self._seeds.getrandbits(63))
        return params.engine_fields()

    def generate(self, prompts, sampling_params=None, use_tqdm: bool = True) -> List[RequestOutput]:
        texts, ids, params, fields = self._requests(prompts, sampling_params)
        arrival = time.time()
        bar = _progress_bar(len(ids), use_tqdm)
        try:
            results = self._engine.generate(ids, fields, bar.update if bar else None)
        finally:
            if bar:
                bar.close()
        finished = time.time()
        return [self._request_output(r, t, p, RequestMetrics(arrival, finished))
                for r, t, p in zip(results, texts, params)]

    def _request_output(self, result: dict, text, params: SamplingParams, metrics) -> RequestOutput:
        decode = self._tokenizer.decode
        outputs = [completion_from_engine(c, params.logprobs is not None, decode) for c in result["outputs"]]
        return RequestOutput(str(result["request_id"]), text, list(result["prompt_token_ids"]), outputs,
                             True, metrics)

    def _chat_prompts(self, messages, add_generation_prompt, tools, chat_template_kwargs) -> List[List[int]]:
        conversations = [messages] if messages and isinstance(messages[0], dict) else list(messages)
        return [self._engine.encode_chat(chat_body(c, add_generation_prompt, tools, chat_template_kwargs))
                for c in conversations]

    def chat(self, messages, sampling_params=None, use_tqdm: bool = True, add_generation_prompt: bool = True,
             tools=None, chat_template_kwargs: Optional[dict] = None) -> List[RequestOutput]:
        """One conversation (a list of messages) or a list of them, through the
        model's chat template (the server's rendering)."""
        prompts = self._chat_prompts(messages, add_generation_prompt, tools, chat_template_kwargs)
        return self.generate(prompts, sampling_params, use_tqdm)

    def stream(self, prompts, sampling_params=None) -> Stream:
        """An iterator of StreamDelta as tokens are decoded; closing it cancels."""
        _, ids, _, fields = self._requests(prompts, sampling_params)
        return Stream(_skiff.Stream(self._engine, ids, fields))

    def stream_async(self, prompts, sampling_params=None) -> AsyncStream:
        """stream() for asyncio: `async for delta in llm.stream_async(...)`."""
        return AsyncStream(self.stream(prompts, sampling_params))

    def kv_cache_blocks_used(self) -> int:
        return self._engine.kv_blocks_used()

"""LLM.generate as vLLM's: shapes, prompts of every kind, and equality with skiff batch."""
import json
import os
import subprocess

from skiff import LLM, CompletionOutput, RequestOutput, SamplingParams

PROMPTS = ["Once upon a time", "The cat sat", "Lily wanted"]


def test_vllm_snippet_runs_unchanged_but_import_and_path(stories_path):
    prompts = PROMPTS
    llm = LLM(model=stories_path)
    params = SamplingParams(max_tokens=128, temperature=0.7)
    outputs = llm.generate(prompts, params)
    assert len(outputs) == len(prompts)
    for prompt, out in zip(prompts, outputs):
        assert isinstance(out, RequestOutput) and out.prompt == prompt
        assert out.prompt_token_ids == llm.get_tokenizer().encode(prompt)
        (c,) = out.outputs
        assert isinstance(c, CompletionOutput) and c.index == 0
        assert c.text and c.token_ids and c.finish_reason in ("stop", "length")
        assert len(c.token_ids) <= 128
        assert out.metrics.finished_time >= out.metrics.arrival_time


def test_prompt_kinds_give_the_same_tokens(llm):
    greedy = SamplingParams(temperature=0, max_tokens=8)
    ids = llm.get_tokenizer().encode(PROMPTS[0])
    one = llm.generate(PROMPTS[0], greedy, use_tqdm=False)
    for prompts in ([PROMPTS[0]], [ids], {"prompt_token_ids": ids}):
        (out,) = llm.generate(prompts, greedy, use_tqdm=False)
        assert out.outputs[0].token_ids == one[0].outputs[0].token_ids


def test_one_sampling_params_per_prompt(llm):
    outs = llm.generate(PROMPTS[:2], [SamplingParams(temperature=0, max_tokens=3),
                                      SamplingParams(temperature=0, max_tokens=7, ignore_eos=True)],
                        use_tqdm=False)
    assert len(outs[0].outputs[0].token_ids) <= 3
    assert len(outs[1].outputs[0].token_ids) == 7


def test_outputs_equal_skiff_batch(llm, stories_path, tmp_path):
    # Every field given: a line's missing fields take skiff run's defaults, not vLLM's.
    requests = [dict(prompt=p, temperature=0.8, top_k=40, top_p=0.9, min_p=0.0, repetition_penalty=1.0,
                     presence_penalty=0.0, frequency_penalty=0.0, seed=7 + i, max_tokens=24)
                for i, p in enumerate(PROMPTS)]
    lines = tmp_path / "in.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in requests))
    run = subprocess.run([os.environ["SKIFF_BINARY"], "batch", "-m", stories_path, "-i", str(lines)],
                         capture_output=True, text=True, check=True)
    batch = sorted((json.loads(line) for line in run.stdout.splitlines()), key=lambda j: j["index"])
    params = [SamplingParams(**{k: v for k, v in r.items() if k != "prompt"}) for r in requests]
    ours = llm.generate(PROMPTS, params, use_tqdm=False)
    for theirs, mine in zip(batch, ours):
        assert mine.outputs[0].text == theirs["outputs"][0]["text"]
        assert mine.outputs[0].token_ids == theirs["outputs"][0]["token_ids"]

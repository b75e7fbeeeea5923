"""/v1/completions through the official openai client against the real binary."""
import json
import subprocess

import httpx
import pytest

from conftest import BINARY

PROMPT = "def fibonacci(n):"


def greedy(client, prompt=PROMPT, **kw):
    kw.setdefault("max_tokens", 24)
    return client.completions.create(model="qwen", prompt=prompt, temperature=0, **kw)


def batch_text(model_path, prompt, max_tokens):
    """The same greedy request through `skiff batch` (the engine without the server)."""
    line = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0})
    out = subprocess.run([BINARY, "batch", "-m", str(model_path), "-i", "-", "-t", "1", "-c", "2048"],
                         input=line + "\n", capture_output=True, text=True, check=True).stdout
    return json.loads(out)["outputs"][0]["text"]


def test_greedy_text_equals_skiff_batch(qwen):
    from conftest import QWEN
    out = greedy(qwen.client())
    assert out.object == "text_completion" and out.model == "qwen"
    assert out.choices[0].text == batch_text(QWEN, PROMPT, 24)
    assert out.choices[0].finish_reason == "length"


def test_usage_counts_match_tokenize(qwen):
    out = greedy(qwen.client(), max_tokens=7, extra_body={"ignore_eos": True})
    count = qwen.post("/tokenize", {"prompt": PROMPT}).json()["count"]
    assert out.usage.prompt_tokens == count
    assert out.usage.completion_tokens == 7
    assert out.usage.total_tokens == count + 7


def test_streaming_yields_the_same_text(qwen):
    client = qwen.client()
    whole = greedy(client).choices[0].text
    chunks = list(greedy(client, stream=True, stream_options={"include_usage": True}))
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == whole
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 24


def test_list_of_prompts_and_token_ids(qwen):
    client = qwen.client()
    ids = qwen.post("/tokenize", {"prompt": PROMPT}).json()["tokens"]
    single = greedy(client).choices[0].text
    out = greedy(client, prompt=[PROMPT, "import numpy as np\n"])
    assert [c.index for c in out.choices] == [0, 1]
    assert out.choices[0].text == single
    assert greedy(client, prompt=ids).choices[0].text == single
    assert greedy(client, prompt=[ids, ids]).choices[1].text == single


def test_n_completions_with_a_seed_are_reproducible(qwen):
    client = qwen.client()
    args = dict(model="qwen", prompt="Once upon a time", max_tokens=12, n=3, temperature=1.0, seed=1234)
    first = client.completions.create(**args)
    again = client.completions.create(**args)
    assert [c.index for c in first.choices] == [0, 1, 2]
    assert [c.text for c in first.choices] == [c.text for c in again.choices]
    assert len({c.text for c in first.choices}) > 1, "siblings should sample different streams"
    other = client.completions.create(**{**args, "seed": 99})
    assert [c.text for c in other.choices] != [c.text for c in first.choices]


def test_stop_string_split_across_tokens(qwen):
    client = qwen.client()
    out = greedy(client, max_tokens=40, logprobs=0)
    tokens = out.choices[0].logprobs.tokens
    # A stop string made of the end of one token and the start of the next.
    i = next(k for k in range(2, len(tokens) - 1) if len(tokens[k]) > 1 and len(tokens[k + 1]) > 1)
    stop = tokens[i][-1] + tokens[i + 1][:1]
    before = "".join(tokens[:i]) + tokens[i][:-1]
    expected = before[: before.find(stop)] if stop in before else before
    cut = greedy(client, max_tokens=40, stop=[stop])
    assert cut.choices[0].text == expected
    assert cut.choices[0].finish_reason == "stop"
    streamed = "".join(c.choices[0].text for c in greedy(client, max_tokens=40, stop=[stop], stream=True))
    assert streamed == expected


def test_multibyte_characters_split_across_tokens_stream_whole(qwen):
    client = qwen.client()
    args = dict(prompt="Write three crab emoji: 🦀", max_tokens=12, logprobs=0)
    out = greedy(client, **args)
    # The crab is three tokens here, none of them valid UTF-8 alone.
    assert "🦀" in out.choices[0].text and "\ufffd" in "".join(out.choices[0].logprobs.tokens)
    pieces = [c.choices[0].text for c in greedy(client, stream=True, **args)]
    assert all("\ufffd" not in p for p in pieces)
    assert "".join(pieces) == out.choices[0].text


def test_logprobs(qwen):
    out = greedy(qwen.client(), max_tokens=6, logprobs=3, extra_body={"ignore_eos": True})
    lp = out.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == 6
    for chosen, top in zip(lp.token_logprobs, lp.top_logprobs):
        assert len(top) == 3 and all(v <= 0 for v in top.values())
        assert chosen == pytest.approx(max(top.values()), abs=1e-5)  # greedy takes the argmax
    assert lp.text_offset[0] == 0 and lp.text_offset == sorted(lp.text_offset)


def test_tokens_as_token_ids(qwen):
    """vLLM's return_tokens_as_token_ids: the crab's byte tokens, each "\ufffd" as text, are
    told apart by id; the ids are the tokens the text was made of."""
    client = qwen.client()
    args = dict(prompt="Write three crab emoji: 🦀", max_tokens=12, logprobs=2)
    out = greedy(client, extra_body={"return_tokens_as_token_ids": True}, **args)
    lp = out.choices[0].logprobs
    assert all(t.startswith("token_id:") for t in lp.tokens)
    assert all(k.startswith("token_id:") for top in lp.top_logprobs for k in top)
    ids = [int(t.removeprefix("token_id:")) for t in lp.tokens]
    assert qwen.post("/detokenize", {"tokens": ids}).json()["prompt"] == out.choices[0].text
    plain = greedy(client, **args).choices[0].logprobs
    assert plain.token_logprobs == lp.token_logprobs and not plain.tokens[0].startswith("token_id:")
    assert lp.text_offset == plain.text_offset
    streamed = [t for c in greedy(client, stream=True, extra_body={"return_tokens_as_token_ids": True}, **args)
                if c.choices and c.choices[0].logprobs for t in c.choices[0].logprobs.tokens]
    assert streamed == lp.tokens
    bad = qwen.post("/v1/completions", {"prompt": "a", "max_tokens": 1, "return_tokens_as_token_ids": "yes"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "return_tokens_as_token_ids"


def test_echo_repeats_the_prompt(qwen):
    out = greedy(qwen.client(), echo=True, max_tokens=5)
    assert out.choices[0].text.startswith(PROMPT)
    assert out.choices[0].text[len(PROMPT):] == greedy(qwen.client(), max_tokens=5).choices[0].text


def test_sampling_fields_reach_the_engine(qwen):
    client = qwen.client()
    base = greedy(client, max_tokens=16).choices[0].text
    # A huge repetition penalty and a stop token id change greedy output.
    penalized = greedy(client, max_tokens=16, extra_body={"repetition_penalty": 5.0}).choices[0].text
    assert penalized != base
    ids = qwen.post("/tokenize", {"prompt": base, "add_special_tokens": False}).json()["tokens"]
    stopped = greedy(client, max_tokens=16, extra_body={"stop_token_ids": [ids[2]]})
    assert stopped.choices[0].finish_reason == "stop"
    assert len(stopped.choices[0].text) < len(base)
    held = greedy(client, max_tokens=16, extra_body={"stop_token_ids": [ids[2]], "min_tokens": 8})
    assert held.choices[0].text.startswith(stopped.choices[0].text) and len(held.choices[0].text) > len(stopped.choices[0].text)
    long = greedy(client, max_tokens=40).choices[0].text  # repeats "elif n ==" and indentation
    assert greedy(client, max_tokens=40, presence_penalty=2.0).choices[0].text != long
    assert greedy(client, max_tokens=40, frequency_penalty=2.0).choices[0].text != long
    # Filters that leave one candidate make sampling greedy.
    sampled = dict(model="qwen", prompt=PROMPT, max_tokens=16, temperature=1.5, seed=7)
    assert client.completions.create(**sampled).choices[0].text != base
    assert client.completions.create(**sampled, top_p=1e-6).choices[0].text == base
    assert client.completions.create(**sampled, extra_body={"top_k": 1}).choices[0].text == base
    assert client.completions.create(**sampled, extra_body={"min_p": 1.0}).choices[0].text == base


def test_models_tokenize_detokenize(qwen):
    models = qwen.client().models.list()
    assert [m.id for m in models.data] == ["qwen"]
    tok = qwen.post("/tokenize", {"prompt": "Hello world", "return_token_strs": True}).json()
    assert tok["count"] == len(tok["tokens"]) and tok["max_model_len"] == 2048
    assert "".join(tok["token_strs"]).replace("Ġ", " ") == "Hello world"
    assert qwen.post("/detokenize", {"tokens": tok["tokens"]}).json()["prompt"] == "Hello world"


def test_metrics_count_tokens(qwen):
    before = qwen.metrics()
    greedy(qwen.client(), max_tokens=5, extra_body={"ignore_eos": True})
    after = qwen.metrics()
    assert after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"] == 5
    assert after["vllm:prompt_tokens_total"] > before["vllm:prompt_tokens_total"]
    for name in ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                 "vllm:prefix_cache_hits_total", "vllm:num_preemptions_total",
                 "vllm:time_to_first_token_seconds_count", "vllm:inter_token_latency_seconds_count"):
        assert name in after
    text = httpx.get(qwen.url + "/metrics").text
    assert '# TYPE vllm:time_to_first_token_seconds histogram' in text
    assert 'vllm:time_to_first_token_seconds_bucket{model_name="qwen",le="+Inf"}' in text

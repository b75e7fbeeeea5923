"""Every SamplingParams field reaches the engine: each test fails if its field is ignored."""
import pytest

from skiff import SamplingParams

PROMPT = "Once upon a time"


def run(llm, **fields):
    (out,) = llm.generate(PROMPT, SamplingParams(**fields), use_tqdm=False)
    return out.outputs


def tokens(llm, **fields):
    return run(llm, **fields)[0].token_ids


GREEDY = dict(temperature=0, max_tokens=32, ignore_eos=True)
SAMPLED = dict(temperature=1.5, max_tokens=32, ignore_eos=True, seed=3)


def test_defaults_are_vllms():
    p = SamplingParams()
    assert (p.n, p.temperature, p.top_p, p.top_k, p.min_p, p.max_tokens, p.min_tokens) == (1, 1.0, 1.0, 0, 0.0, 16, 0)
    assert (p.presence_penalty, p.frequency_penalty, p.repetition_penalty) == (0.0, 0.0, 1.0)
    assert p.seed is None and p.stop is None and p.logprobs is None
    assert not p.ignore_eos and p.skip_special_tokens


def test_temperature(llm):
    assert tokens(llm, **SAMPLED) != tokens(llm, **GREEDY)


def test_seed(llm):
    assert tokens(llm, **SAMPLED) == tokens(llm, **SAMPLED)
    assert tokens(llm, **{**SAMPLED, "seed": 4}) != tokens(llm, **SAMPLED)


def test_top_k(llm):
    assert tokens(llm, **SAMPLED, top_k=1) == tokens(llm, **GREEDY)


def test_top_p(llm):
    assert tokens(llm, **SAMPLED, top_p=1e-6) == tokens(llm, **GREEDY)


def test_min_p(llm):
    assert tokens(llm, **SAMPLED, min_p=1.0) == tokens(llm, **GREEDY)


def test_max_tokens(llm):
    assert len(tokens(llm, **{**GREEDY, "max_tokens": 5})) == 5


def test_n(llm):
    outs = run(llm, **SAMPLED, n=3)
    assert [c.index for c in outs] == [0, 1, 2]
    assert len({tuple(c.token_ids) for c in outs}) > 1


def test_stop(llm):
    full = run(llm, **GREEDY)[0].text
    word = full.split()[3]
    cut = run(llm, **GREEDY, stop=[word])[0]
    assert cut.finish_reason == "stop" and cut.stop_reason == word
    assert cut.text == full[: full.index(word)]


def test_stop_token_ids(llm):
    full = tokens(llm, **GREEDY)
    cut = run(llm, **GREEDY, stop_token_ids=[full[4]])[0]
    assert cut.token_ids == full[: full.index(full[4])] and cut.stop_reason == full[4]


def test_ignore_eos(qwen):
    # Qwen's chat answer ends with EOS (<|im_end|>) within a few tokens; stories260K rarely does.
    conversation = [{"role": "user", "content": "Say hello."}]
    natural = qwen.chat(conversation, SamplingParams(temperature=0, max_tokens=48), use_tqdm=False)[0].outputs[0]
    assert natural.finish_reason == "stop" and len(natural.token_ids) < 48
    ignored = qwen.chat(conversation, SamplingParams(temperature=0, max_tokens=48, ignore_eos=True),
                        use_tqdm=False)[0].outputs[0]
    assert ignored.finish_reason == "length" and len(ignored.token_ids) == 48


def test_min_tokens(qwen):
    conversation = [{"role": "user", "content": "Say hello."}]
    natural = qwen.chat(conversation, SamplingParams(temperature=0, max_tokens=48), use_tqdm=False)[0].outputs[0]
    floor = len(natural.token_ids) + 6
    longer = qwen.chat(conversation, SamplingParams(temperature=0, max_tokens=48, min_tokens=floor),
                       use_tqdm=False)[0].outputs[0]
    assert len(longer.token_ids) >= floor and longer.token_ids[: len(natural.token_ids)] == natural.token_ids
    # A stop string in the first min_tokens tokens' text does not end it either.
    word = natural.text.split()[0]
    cut = qwen.chat(conversation, SamplingParams(temperature=0, max_tokens=48, stop=[word]), use_tqdm=False)
    assert cut[0].outputs[0].text == "" and cut[0].outputs[0].stop_reason == word
    held = qwen.chat(conversation, SamplingParams(temperature=0, max_tokens=48, stop=[word], min_tokens=3),
                     use_tqdm=False)[0].outputs[0]
    assert held.text.startswith(word) and held.token_ids == natural.token_ids[: len(held.token_ids)]


def test_skip_special_tokens(qwen):
    # Past EOS (ignore_eos) the answer holds <|im_end|>: text only when skip_special_tokens=False.
    conversation = [{"role": "user", "content": "Say hello."}]
    params = dict(temperature=0, max_tokens=24, ignore_eos=True)
    skipped = qwen.chat(conversation, SamplingParams(**params), use_tqdm=False)[0].outputs[0]
    shown = qwen.chat(conversation, SamplingParams(**params, skip_special_tokens=False), use_tqdm=False)[0].outputs[0]
    assert shown.token_ids == skipped.token_ids
    assert "<|im_end|>" in shown.text and "<|im_end|>" not in skipped.text


def test_logprobs(llm):
    (c,) = run(llm, **GREEDY, logprobs=2)
    assert len(c.logprobs) == len(c.token_ids)
    for token, position in zip(c.token_ids, c.logprobs):
        assert token in position and len(position) >= 2
    assert c.cumulative_logprob == pytest.approx(sum(p[t].logprob for t, p in zip(c.token_ids, c.logprobs)))
    assert run(llm, **GREEDY)[0].logprobs is None


@pytest.mark.parametrize("field,value", [("presence_penalty", 2.0), ("frequency_penalty", 2.0),
                                         ("repetition_penalty", 3.0)])
def test_penalties(llm, field, value):
    assert tokens(llm, **GREEDY, **{field: value}) != tokens(llm, **GREEDY)


@pytest.mark.parametrize("fields,message", [
    (dict(temperature=-1), "temperature"), (dict(top_p=0), "top_p"), (dict(top_k=-2), "top_k"),
    (dict(min_p=2), "min_p"), (dict(n=0), "n"), (dict(max_tokens=0), "max_tokens"),
    (dict(presence_penalty=3), "presence_penalty"), (dict(frequency_penalty=-3), "frequency_penalty"),
    (dict(repetition_penalty=0), "repetition_penalty"), (dict(logprobs=21), "logprobs"),
    (dict(stop=[""]), "stop"), (dict(stop_token_ids=[10**9]), "stop_token_ids"),
    (dict(temperature=float("nan")), "finite"),
    (dict(min_tokens=-1), "min_tokens"), (dict(min_tokens=17), "min_tokens"),
])
def test_invalid_values_raise_value_error(llm, fields, message):
    with pytest.raises(ValueError, match=message):
        llm.generate(PROMPT, SamplingParams(**fields), use_tqdm=False)
    assert llm.kv_cache_blocks_used() == 0

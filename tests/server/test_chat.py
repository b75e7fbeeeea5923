"""/v1/chat/completions (the model's own chat template) and `skiff chat`."""
import re
import subprocess

import pytest

from conftest import BINARY, QWEN, STORIES

MESSAGES = [{"role": "system", "content": "You are a terse assistant."},
            {"role": "user", "content": "Write a Python one-liner that reverses a string s."}]


def chat(client, **kw):
    kw.setdefault("messages", MESSAGES)
    kw.setdefault("max_tokens", 24)
    return client.chat.completions.create(model="qwen", temperature=0, **kw)


def test_chat_is_the_template_then_a_completion(qwen):
    out = chat(qwen.client())
    assert out.object == "chat.completion"
    assert out.choices[0].message.role == "assistant" and out.choices[0].message.content
    ids = qwen.post("/tokenize", {"messages": MESSAGES}).json()["tokens"]
    assert out.usage.prompt_tokens == len(ids)
    same = qwen.client().completions.create(model="qwen", prompt=ids, max_tokens=24, temperature=0)
    assert out.choices[0].message.content == same.choices[0].text
    assert out.choices[0].finish_reason == same.choices[0].finish_reason


def test_the_template_is_qwens(qwen):
    text = qwen.post("/detokenize", {"tokens": qwen.post("/tokenize", {"messages": MESSAGES}).json()["tokens"]}).json()
    assert text["prompt"] == ("<|im_start|>system\nYou are a terse assistant.<|im_end|>\n"
                              "<|im_start|>user\nWrite a Python one-liner that reverses a string s.<|im_end|>\n"
                              "<|im_start|>assistant\n")


def test_streaming_starts_with_the_role_and_adds_up(qwen):
    whole = chat(qwen.client()).choices[0].message.content
    chunks = list(chat(qwen.client(), stream=True, stream_options={"include_usage": True}))
    assert chunks[0].object == "chat.completion.chunk"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == whole
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] in ("stop", "length")
    assert chunks[-1].usage.prompt_tokens > 0


def test_text_parts_equal_a_string(qwen):
    parts = [MESSAGES[0], {"role": "user", "content": [{"type": "text", "text": MESSAGES[1]["content"]}]}]
    assert chat(qwen.client(), messages=parts).choices[0].message.content == \
        chat(qwen.client()).choices[0].message.content


def test_multi_turn_n_and_seed(qwen):
    history = MESSAGES + [{"role": "assistant", "content": "s[::-1]"}, {"role": "user", "content": "And in C?"}]
    args = dict(model="qwen", messages=history, max_tokens=16, n=2, temperature=1.0, seed=5)
    a = qwen.client().chat.completions.create(**args)
    b = qwen.client().chat.completions.create(**args)
    assert [c.message.content for c in a.choices] == [c.message.content for c in b.choices]
    assert [c.index for c in a.choices] == [0, 1]


def test_logprobs(qwen):
    out = chat(qwen.client(), logprobs=True, top_logprobs=2, max_tokens=5)
    content = out.choices[0].logprobs.content
    assert 1 <= len(content) <= 5
    for item in content:
        assert len(item.top_logprobs) == 2 and item.logprob <= 0
        assert item.logprob == pytest.approx(item.top_logprobs[0].logprob, abs=1e-5)
        assert bytes(item.bytes).decode("utf-8", "replace") == item.token or b"\xef\xbf\xbd" in item.token.encode()
    assert chat(qwen.client(), max_tokens=3).choices[0].logprobs is None


@pytest.mark.parametrize("body,param", [({"messages": []}, "messages"),
                                        ({"messages": [{"content": "hi"}]}, "messages"),
                                        ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages"),
                                        ({"messages": MESSAGES, "top_logprobs": 2}, "top_logprobs"),
                                        ({"messages": MESSAGES, "max_completion_tokens": 5000}, "max_tokens"),
                                        ({"messages": MESSAGES, "temperature": "warm"}, "temperature")])
def test_bad_chat_requests(qwen, body, param):
    r = qwen.post("/v1/chat/completions", body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param


def test_a_model_without_a_template_says_so(stories):
    r = stories.post("/v1/chat/completions", {"messages": MESSAGES})
    assert r.status_code == 400 and "no chat template" in r.json()["error"]["message"]


def test_skiff_chat_keeps_the_conversation():
    if not QWEN.exists():
        pytest.skip("no Qwen model")
    run = subprocess.run([BINARY, "chat", "-m", str(QWEN), "-t", "1", "--temp", "0", "-n", "24", "-c", "2048"],
                         input="What is 2+2? Answer with a number.\nAnd times 3?\n", capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    turns = re.findall(r"chat: (\d+) prompt tokens \((\d+) from the cache\), (\d+) generated", run.stderr)
    assert len(turns) == 2
    (p1, c1, g1), (p2, c2, g2) = [tuple(map(int, t)) for t in turns]
    assert p2 > p1 + int(g1) - 2 and int(c2) >= 16  # the second turn reuses the first one's KV
    assert "4" in run.stdout


def test_skiff_chat_without_a_template_fails_clearly():
    run = subprocess.run([BINARY, "chat", "-m", str(STORIES)], input="hi\n", capture_output=True, text=True)
    assert run.returncode == 1 and "has no chat template" in run.stderr

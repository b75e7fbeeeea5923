"""Anthropic's Messages API through the official anthropic client against the
real binary: on Qwen2.5-Coder-1.5B-Instruct (greedy where texts are
compared) a reply is the chat endpoint's reply to the same conversation; the
streamed message equals the whole one; the client's tool loop runs tool_use →
tool_result → final answer with inputs valid for their input_schema
(jsonschema); count_tokens is /tokenize's count of the same rendered
conversation. On stories260K behind an API key, every error class comes in
Anthropic's shape with its status."""
import json
import threading
import time

import agent_tools
import anthropic
import httpx
import jsonschema
import pytest
from agent_tools import FLY, PARIS, SYSTEM
from conftest import STORIES, Server, leave_mid_stream

WEATHER, FLIGHT = ({"name": f["name"], "description": f["description"], "input_schema": f["schema"]}
                   for f in (agent_tools.WEATHER, agent_tools.FLIGHT))
TOOLS = {t["name"]: t for t in (WEATHER, FLIGHT)}
HAIKU = [{"role": "user", "content": "Write a haiku about the sea."}]


def client(server, **kw):
    return anthropic.Anthropic(base_url=server.url, api_key=server.api_key or "none", max_retries=0, **kw)


# The anthropic client has no temperature argument any more (the API's newest
# models take none): it goes in the body.
GREEDY = {"temperature": 0}


def create(server, messages, **kw):
    kw.setdefault("max_tokens", 60)
    kw.setdefault("extra_body", GREEDY)
    return client(server).messages.create(model="qwen15", messages=messages, **kw)


def without_ids(message):
    """A message as JSON, less the random ids (its own and its tool_use blocks')."""
    out = message.model_dump(exclude_none=True)
    del out["id"]
    for block in out["content"]:
        block.pop("id", None)
    return out


def check_tool_uses(message, only=None):
    """Every tool_use names a tool (`only` where named) with input valid for its input_schema."""
    uses = [b for b in message.content if b.type == "tool_use"]
    assert uses, message
    for use in uses:
        assert use.id.startswith("toolu_") and use.name in TOOLS and (only is None or use.name == only), use
        jsonschema.Draft202012Validator(TOOLS[use.name]["input_schema"],
                                        format_checker=jsonschema.FormatChecker()).validate(use.input)
    return uses


def test_a_reply_is_the_chat_endpoints_reply(qwen15):
    message = create(qwen15, HAIKU, system=SYSTEM)
    assert message.id.startswith("msg_") and message.type == "message" and message.role == "assistant"
    assert message.model == "qwen15"
    [block] = message.content
    assert block.type == "text" and block.text
    assert message.stop_reason == "end_turn" and message.stop_sequence is None
    chat = qwen15.client().chat.completions.create(
        model="qwen15", messages=[{"role": "system", "content": SYSTEM}, *HAIKU], max_tokens=60, temperature=0)
    assert block.text == chat.choices[0].message.content
    assert (message.usage.input_tokens, message.usage.output_tokens) == \
        (chat.usage.prompt_tokens, chat.usage.completion_tokens)


def test_max_tokens_and_stop_sequences_end_the_reply(qwen15):
    whole = create(qwen15, HAIKU).content[0].text
    short = create(qwen15, HAIKU, max_tokens=5)
    assert short.stop_reason == "max_tokens" and short.usage.output_tokens == 5
    assert whole.startswith(short.content[0].text)
    word = " " + whole.split()[2]  # with its space: replies are parsed, and content's end is trimmed
    stopped = create(qwen15, HAIKU, stop_sequences=["zzz", word])
    assert stopped.stop_reason == "stop_sequence" and stopped.stop_sequence == word
    assert stopped.content[0].text == whole[:whole.index(word)]


@pytest.mark.parametrize("messages,kw", [
    (HAIKU, {"system": SYSTEM}),
    (HAIKU, {"max_tokens": 7}),
    (PARIS, {"tools": [WEATHER]}),
    (FLY, {"tools": [WEATHER, FLIGHT], "tool_choice": {"type": "any"}}),
], ids=["text", "max-tokens", "tool-auto", "tool-any"])
def test_the_streamed_message_equals_the_whole(qwen15, messages, kw):
    kw = {"max_tokens": 60, "extra_body": GREEDY, **kw}
    whole = create(qwen15, messages, **kw)
    with client(qwen15).messages.stream(model="qwen15", messages=messages, **kw) as stream:
        streamed = stream.get_final_message()
    assert without_ids(streamed) == without_ids(whole)


def test_the_event_sequence(qwen15):
    events = list(create(qwen15, PARIS, tools=[WEATHER], stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0].message.usage.input_tokens > 0 and events[0].message.content == []
    # Blocks open, grow and close one at a time, numbered from 0.
    open_index, seen = None, []
    for e in events[1:-2]:
        if e.type == "content_block_start":
            assert open_index is None
            open_index = e.index
            seen.append((e.content_block.type, e.index))
        elif e.type == "content_block_delta":
            assert e.index == open_index
            assert e.delta.type == {"text": "text_delta", "tool_use": "input_json_delta"}[seen[-1][0]]
        else:
            assert e.type == "content_block_stop" and e.index == open_index
            open_index = None
    assert open_index is None and [i for _, i in seen] == list(range(len(seen)))
    assert seen[-1][0] == "tool_use" and events[-2].delta.stop_reason == "tool_use"
    # The raw stream: each event named, a ping after the start.
    raw = httpx.post(qwen15.url + "/v1/messages", timeout=120, json={
        "model": "qwen15", "messages": HAIKU, "max_tokens": 4, "stream": True}).text
    names = [line[len("event: "):] for line in raw.split("\n") if line.startswith("event: ")]
    assert names[:2] == ["message_start", "ping"] and names[-1] == "message_stop"
    assert raw.count("\ndata: ") == len(names) and "[DONE]" not in raw


@pytest.mark.parametrize("tools,choice,only", [
    ([WEATHER, FLIGHT], {"type": "any"}, None),
    ([WEATHER, FLIGHT], {"type": "tool", "name": "book_flight"}, "book_flight"),
    ([WEATHER], {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}, "get_weather"),
], ids=["any", "named", "named-one-call"])
def test_tool_choice_gives_valid_calls_sampled(qwen15, tools, choice, only):
    for seed_text in ("", " Please."):
        message = create(qwen15, [{"role": "user", "content": FLY[0]["content"] + seed_text}], tools=tools,
                         tool_choice=choice, extra_body={"temperature": 1.0, "top_k": 40}, max_tokens=120)
        assert message.stop_reason == "tool_use", message
        uses = check_tool_uses(message, only)
        assert len(uses) == 1 or not choice.get("disable_parallel_tool_use")


def test_the_clients_tool_loop(qwen15):
    messages = list(PARIS)
    first = create(qwen15, messages, tools=[WEATHER], max_tokens=120)
    assert first.stop_reason == "tool_use"
    [use] = check_tool_uses(first)
    assert use.name == "get_weather" and "paris" in use.input["city"].lower()
    messages.append({"role": "assistant", "content": first.content})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": json.dumps(
        {"city": "Paris", "temperature": 18, "unit": "celsius", "sky": "cloudy"})}]})
    final = create(qwen15, messages, tools=[WEATHER])
    assert final.stop_reason == "end_turn" and [b.type for b in final.content] == ["text"]
    assert "18" in final.content[0].text and "Paris" in final.content[0].text, final.content[0].text
    # The loop's last turn is what the chat endpoint answers to the same conversation.
    chat = qwen15.client().chat.completions.create(model="qwen15", temperature=0, max_tokens=60, messages=[
        *PARIS,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": use.id, "type": "function", "function": {"name": use.name, "arguments": json.dumps(use.input)}}]},
        {"role": "tool", "tool_call_id": use.id, "content": messages[-1]["content"][0]["content"]}],
        tools=[{"type": "function", "function": {"name": WEATHER["name"], "description": WEATHER["description"],
                                                 "parameters": WEATHER["input_schema"]}}])
    assert final.content[0].text == chat.choices[0].message.content


def test_tool_choice_none_answers_in_text(qwen15):
    message = create(qwen15, PARIS, tools=[WEATHER], tool_choice={"type": "none"}, max_tokens=24)
    assert [b.type for b in message.content] == ["text"] and message.stop_reason in ("end_turn", "max_tokens")


def test_count_tokens_is_the_rendered_prompts_count(qwen15):
    counted = client(qwen15).messages.count_tokens(model="qwen15", system=SYSTEM, messages=PARIS, tools=[WEATHER])
    tokenized = qwen15.post("/tokenize", {"model": "qwen15", "messages": [
        {"role": "system", "content": SYSTEM}, *PARIS], "tools": [{"type": "function", "function": {
            "name": WEATHER["name"], "description": WEATHER["description"], "parameters": WEATHER["input_schema"]}}]})
    assert counted.input_tokens == tokenized.json()["count"] > 0
    assert create(qwen15, PARIS, system=SYSTEM, tools=[WEATHER], max_tokens=1).usage.input_tokens == counted.input_tokens
    plain = client(qwen15).messages.count_tokens(model="qwen15", messages=HAIKU)
    assert plain.input_tokens == qwen15.post("/tokenize", {"messages": HAIKU}).json()["count"]


def test_a_client_that_leaves_mid_stream_frees_its_blocks(qwen15):
    leave_mid_stream(qwen15, "/v1/messages", "content_block_delta", {
        "model": "qwen15", "max_tokens": 1500, "stream": True,
        "messages": [{"role": "user", "content": "Count from 1 to 2000, one number a line."}]})


# --- errors: stories260K with a chat template, behind an API key ---------------


def anthropic_error(response, status, error_type):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}, body
    assert body["error"]["type"] == error_type, body
    return body["error"]["message"]


def post(server, path, body, key="sekret", header="x-api-key"):
    return httpx.post(server.url + path, json=body, timeout=60,
                      headers={header: key, "anthropic-version": "2023-06-01"} if key else {})


HELLO = {"model": "stories", "max_tokens": 8, "messages": [{"role": "user", "content": "Once upon a time"}]}


def test_either_key_header_is_accepted_everywhere(stories_chat):
    for header, key in (("x-api-key", "sekret"), ("Authorization", "Bearer sekret")):
        r = post(stories_chat, "/v1/messages", HELLO, key=key, header=header)
        assert r.status_code == 200 and r.json()["type"] == "message", r.text
        assert httpx.get(stories_chat.url + "/v1/models", headers={header: key}).status_code == 200
    message = client(stories_chat).messages.create(**HELLO)
    assert message.usage.output_tokens <= 8
    assert message.usage.input_tokens == client(stories_chat).messages.count_tokens(
        model="stories", messages=HELLO["messages"]).input_tokens


def test_each_error_class(stories_chat):
    missing = {k: v for k, v in HELLO.items() if k != "max_tokens"}
    assert "max_tokens" in anthropic_error(post(stories_chat, "/v1/messages", missing), 400, "invalid_request_error")
    assert "stop_sequences" in anthropic_error(
        post(stories_chat, "/v1/messages", {**HELLO, "stop_sequences": "."}), 400, "invalid_request_error")
    assert "messages" in anthropic_error(post(stories_chat, "/v1/messages", {**HELLO, "messages": [
        {"role": "user", "content": [{"type": "image", "source": {}}]}]}), 400, "invalid_request_error")
    anthropic_error(post(stories_chat, "/v1/messages", HELLO, key=None), 401, "authentication_error")
    anthropic_error(post(stories_chat, "/v1/messages", HELLO, key="wrong"), 401, "authentication_error")
    assert "gpt-9" in anthropic_error(post(stories_chat, "/v1/messages", {**HELLO, "model": "gpt-9"}), 404,
                                      "not_found_error")
    anthropic_error(post(stories_chat, "/v1/messages/batches", HELLO), 404, "not_found_error")
    long = {**HELLO, "messages": [{"role": "user", "content": "Once upon a time " * 200}]}
    assert "context length" in anthropic_error(post(stories_chat, "/v1/messages", long), 400,
                                               "invalid_request_error")
    assert "context length" in anthropic_error(post(stories_chat, "/v1/messages", {**HELLO, "max_tokens": 300}),
                                               400, "invalid_request_error")
    # count_tokens refuses what /v1/messages does, but needs no max_tokens and no room left.
    assert post(stories_chat, "/v1/messages/count_tokens", long).json()["input_tokens"] > 256
    anthropic_error(post(stories_chat, "/v1/messages/count_tokens", {"messages": []}), 400, "invalid_request_error")
    # The official client raises each as its class.
    sdk = client(stories_chat)
    with pytest.raises(anthropic.BadRequestError) as e:
        sdk.messages.create(**{**HELLO, "max_tokens": 0})
    assert e.value.body["error"]["type"] == "invalid_request_error"
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=stories_chat.url, api_key="wrong", max_retries=0).messages.create(**HELLO)
    with pytest.raises(anthropic.NotFoundError):
        sdk.messages.create(**{**HELLO, "model": "gpt-9"})
    with pytest.raises(anthropic.BadRequestError):
        sdk.messages.create(**long)
    with pytest.raises(anthropic.RequestTooLargeError) as e:  # --max-body 65536, refused by the transport
        sdk.messages.create(**{**HELLO, "messages": [{"role": "user", "content": "a " * 40000}]})
    assert e.value.body["type"] == "error" and e.value.body["error"]["type"] == "request_too_large"
    huge = {**HELLO, "messages": [{"role": "user", "content": "a " * 40000}]}
    assert "too large" in anthropic_error(post(stories_chat, "/v1/messages", huge), 413, "request_too_large")
    assert httpx.post(stories_chat.url + "/v1/chat/completions", json=huge, timeout=60).json()["error"]["code"] == 413
    assert client(stories_chat).messages.create(**HELLO).type == "message"  # it goes on serving


def test_an_idle_stream_gets_pings(tmp_path):
    # One sequence at a time: the stream waits behind long completions, idle,
    # and gets Anthropic's ping events (not the transport's SSE comments).
    template = tmp_path / "chat.jinja"
    template.write_text("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:")
    server = Server(STORIES, "--chat-template", str(template), "--served-model-name", "stories",
                    "--sse-keepalive", "0.01", "--max-seqs", "1")
    try:
        long_request = {"prompt": "Once", "max_tokens": 480, "ignore_eos": True}
        blockers = [threading.Thread(target=server.post, args=("/v1/completions", long_request)) for _ in range(3)]
        for b in blockers:
            b.start()
        deadline = time.time() + 5
        while server.metrics()["vllm:num_requests_waiting"] < 1 and time.time() < deadline:
            time.sleep(0.002)
        raw = server.post("/v1/messages", {**HELLO, "max_tokens": 4, "stream": True}).text
        for b in blockers:
            b.join()
        names = [line[len("event: "):] for line in raw.split("\n") if line.startswith("event: ")]
        assert names[:2] == ["message_start", "ping"] and names[-1] == "message_stop"
        assert names.count("ping") > 1 and ": keep-alive" not in raw, names
        assert raw.count("\ndata: ") == len(names)
    finally:
        assert server.stop() == 0, "".join(server.log[-20:])

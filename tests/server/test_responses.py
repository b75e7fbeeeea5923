"""OpenAI's Responses API through the official openai client
(client.responses.create) against the real binary: on
Qwen2.5-Coder-1.5B-Instruct (greedy where texts are compared) a response is
the chat endpoint's reply to the same conversation; the streamed events
assemble to the whole response; the function-call loop runs function_call →
function_call_output → final answer with arguments valid for their schema
(jsonschema); text.format holds the reply to a JSON schema; a
previous_response_id continues the conversation as if it were sent whole. On
stories260K behind an API key, every error class comes in OpenAI's shape."""
import json

import agent_tools
import httpx
import jsonschema
import openai
import pytest
from agent_tools import FLY, PARIS, SYSTEM
from conftest import leave_mid_stream


def function_tool(f, **extra):
    return {"type": "function", "name": f["name"], "description": f["description"], "parameters": f["schema"], **extra}


WEATHER, FLIGHT = function_tool(agent_tools.WEATHER, strict=False), function_tool(agent_tools.FLIGHT)
TOOLS = {t["name"]: t for t in (WEATHER, FLIGHT)}
HAIKU = "Write a haiku about the sea."
POINT = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
                                          "x": {"type": "integer", "minimum": 0, "maximum": 100},
                                          "y": {"type": "integer", "minimum": 0, "maximum": 100}},
         "required": ["name", "x", "y"], "additionalProperties": False}


def create(server, **kw):
    kw.setdefault("max_output_tokens", 60)
    kw.setdefault("temperature", 0)
    return server.client().responses.create(model="qwen15", **kw)


def chat_reply(server, messages, **kw):
    return server.client().chat.completions.create(model="qwen15", messages=messages, temperature=0,
                                                   max_tokens=60, **kw)


def as_chat_tool(tool):
    return {"type": "function", "function": {k: tool[k] for k in ("name", "description", "parameters")}}


def without_ids(response):
    """A response as JSON, less what is random: its id, time, and its items' ids and call ids."""
    out = response.model_dump(exclude_none=True)
    for key in ("id", "created_at"):
        del out[key]
    for item in out["output"]:
        item.pop("id", None)
        item.pop("call_id", None)
    return out


def check_calls(response, only=None):
    """Every function_call names a tool (`only` where named) with arguments valid for its parameters."""
    calls = [item for item in response.output if item.type == "function_call"]
    assert calls, response
    for call in calls:
        assert call.id.startswith("fc_") and call.call_id.startswith("call_"), call
        assert call.name in TOOLS and (only is None or call.name == only), call
        jsonschema.Draft202012Validator(TOOLS[call.name]["parameters"],
                                        format_checker=jsonschema.FormatChecker()).validate(json.loads(call.arguments))
    return calls


def test_a_response_is_the_chat_endpoints_reply(qwen15):
    response = create(qwen15, input=HAIKU, instructions=SYSTEM, metadata={"k": "v"}, user="u1")
    assert response.id.startswith("resp_") and response.object == "response" and response.model == "qwen15"
    assert response.status == "completed" and response.incomplete_details is None and response.error is None
    [message] = response.output
    assert message.type == "message" and message.role == "assistant" and message.status == "completed"
    assert message.id.startswith("msg_") and [p.type for p in message.content] == ["output_text"]
    # The request's fields come back.
    assert response.instructions == SYSTEM and response.temperature == 0 and response.max_output_tokens == 60
    assert response.metadata == {"k": "v"} and response.tools == [] and response.tool_choice == "auto"
    chat = chat_reply(qwen15, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": HAIKU}])
    assert response.output_text == message.content[0].text == chat.choices[0].message.content
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == \
        (chat.usage.prompt_tokens, chat.usage.completion_tokens, chat.usage.total_tokens)


def test_max_output_tokens_leaves_it_incomplete(qwen15):
    whole = create(qwen15, input=HAIKU).output_text
    short = create(qwen15, input=HAIKU, max_output_tokens=5)
    assert short.status == "incomplete" and short.incomplete_details.reason == "max_output_tokens"
    assert short.usage.output_tokens == 5 and short.output[0].status == "incomplete"
    assert whole.startswith(short.output_text)


STREAMED = [
    ({"input": HAIKU, "instructions": SYSTEM}),
    ({"input": HAIKU, "max_output_tokens": 7}),
    ({"input": PARIS, "tools": [WEATHER]}),
    ({"input": FLY, "tools": [WEATHER, FLIGHT], "tool_choice": "required"}),
    ({"input": "Name a point.", "text": {"format": {"type": "json_schema", "name": "point", "schema": POINT}}}),
]


@pytest.mark.parametrize("kw", STREAMED, ids=["text", "max-tokens", "tool-auto", "tool-required", "json-schema"])
def test_the_streamed_response_equals_the_whole(qwen15, kw):
    whole = create(qwen15, **kw)
    events = list(create(qwen15, stream=True, **kw))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert [e.type for e in events[:2]] == ["response.created", "response.in_progress"]
    assert events[0].response.status == "in_progress" and events[0].response.output == []
    last = events[-1]
    assert last.type == {"completed": "response.completed", "incomplete": "response.incomplete"}[whole.status]
    assert without_ids(last.response) == without_ids(whole)
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == whole.output_text
    arguments = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert arguments == "".join(i.arguments for i in whole.output if i.type == "function_call")
    # The SDK's own accumulation of the events gives the same response (its
    # final response is response.completed's only, as with OpenAI's server).
    with qwen15.client().responses.stream(model="qwen15", temperature=0, **{"max_output_tokens": 60, **kw}) as s:
        accumulated = [e.type for e in s]
        if whole.status == "completed":
            assert without_ids(s.get_final_response()) == without_ids(whole)
    assert accumulated == [e.type for e in events]


def test_the_event_sequence(qwen15):
    events = list(create(qwen15, input=PARIS, tools=[WEATHER], stream=True, max_output_tokens=120))
    # Items open, grow and close one at a time, numbered from 0.
    open_item, seen = None, []
    for e in events[2:-1]:
        if e.type == "response.output_item.added":
            assert open_item is None and e.output_index == len(seen) and e.item.status == "in_progress"
            open_item = e.item
            seen.append(e.item.type)
        elif e.type == "response.output_item.done":
            assert e.item.id == open_item.id and e.item.status == "completed"
            open_item = None
        else:
            assert e.output_index == len(seen) - 1 and e.item_id == open_item.id, e
            expected = {"message": ("response.content_part.added", "response.output_text.delta",
                                    "response.output_text.done", "response.content_part.done"),
                        "function_call": ("response.function_call_arguments.delta",
                                          "response.function_call_arguments.done")}[open_item.type]
            assert e.type in expected, e
    assert open_item is None and seen[-1] == "function_call", seen
    # The raw stream: each event named by its type, no "[DONE]".
    raw = httpx.post(qwen15.url + "/v1/responses", timeout=120, json={
        "model": "qwen15", "input": HAIKU, "max_output_tokens": 4, "stream": True}).text
    blocks = [b for b in raw.split("\n\n") if b]
    for block in blocks:
        name, data = block.split("\n")
        assert name.startswith("event: ") and data.startswith("data: "), block
        assert json.loads(data[len("data: "):])["type"] == name[len("event: "):]
    assert "[DONE]" not in raw


def test_the_function_call_loop(qwen15):
    first = create(qwen15, input=PARIS, tools=[WEATHER], max_output_tokens=120)
    [call] = check_calls(first)
    assert call.name == "get_weather" and "paris" in json.loads(call.arguments)["city"].lower()
    weather = json.dumps({"city": "Paris", "temperature": 18, "unit": "celsius", "sky": "cloudy"})
    items = [*PARIS, *[item.model_dump(exclude_none=True) for item in first.output],
             {"type": "function_call_output", "call_id": call.call_id, "output": weather}]
    final = create(qwen15, input=items, tools=[WEATHER])
    assert final.status == "completed" and [i.type for i in final.output] == ["message"]
    assert "18" in final.output_text and "Paris" in final.output_text, final.output_text
    # The loop's last turn is what the chat endpoint answers to the same conversation.
    chat = chat_reply(qwen15, [
        *PARIS,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": call.call_id, "content": weather}], tools=[as_chat_tool(WEATHER)])
    assert final.output_text == chat.choices[0].message.content


@pytest.mark.parametrize("tools,choice,only", [
    ([WEATHER, FLIGHT], "required", None),
    ([WEATHER, FLIGHT], {"type": "function", "name": "book_flight"}, "book_flight"),
], ids=["required", "named"])
def test_tool_choice_gives_valid_calls_sampled(qwen15, tools, choice, only):
    for seed_text in ("", " Please."):
        response = create(qwen15, input=FLY[0]["content"] + seed_text, tools=tools, tool_choice=choice,
                          temperature=1.0, max_output_tokens=120)
        check_calls(response, only)


def test_tool_choice_none_answers_in_text(qwen15):
    response = create(qwen15, input=PARIS, tools=[WEATHER], tool_choice="none", max_output_tokens=24)
    assert [i.type for i in response.output] == ["message"]


def test_text_format_holds_the_reply_to_a_schema(qwen15):
    for temperature in (0, 1.0):
        # 300 tokens: sampled JSON may spend many on whitespace between its fields.
        response = create(qwen15, input="Invent a point on a map and name it.", temperature=temperature,
                          max_output_tokens=300,
                          text={"format": {"type": "json_schema", "name": "point", "schema": POINT, "strict": True}})
        assert response.status == "completed", response
        jsonschema.validate(json.loads(response.output_text), POINT)
        assert response.text.format.type == "json_schema"
    anything = create(qwen15, input='A JSON object with one key, "sea", and a one-word value.',
                      text={"format": {"type": "json_object"}}, max_output_tokens=100)
    assert anything.status == "completed" and isinstance(json.loads(anything.output_text), dict), anything


def test_previous_response_id_continues_the_conversation(qwen15):
    first_input = [{"role": "user", "content": "My name is Ada. Say hello to me in five words."}]
    first = create(qwen15, input=first_input, instructions=SYSTEM)
    second = create(qwen15, input="What is my name?", previous_response_id=first.id, instructions=SYSTEM)
    assert second.previous_response_id == first.id
    whole = create(qwen15, instructions=SYSTEM, input=[
        *first_input, *[item.model_dump(exclude_none=True) for item in first.output],
        {"role": "user", "content": "What is my name?"}])
    assert second.output_text == whole.output_text and "Ada" in second.output_text
    assert second.usage.input_tokens == whole.usage.input_tokens
    # A third turn continues the second (the chain is kept).
    third = create(qwen15, input="Spell it backwards.", previous_response_id=second.id)
    assert third.status == "completed" and third.usage.input_tokens > second.usage.input_tokens
    # A kept response can be read back.
    kept = httpx.get(f"{qwen15.url}/v1/responses/{first.id}").json()
    assert kept["id"] == first.id and kept["output"][0]["content"][0]["text"] == first.output_text


def test_unknown_and_unstored_responses_are_not_found(qwen15):
    with pytest.raises(openai.NotFoundError) as e:
        create(qwen15, input="Hi", previous_response_id="resp_0123")
    assert e.value.status_code == 404 and e.value.body["param"] == "previous_response_id"
    assert "resp_0123" in e.value.body["message"]
    unstored = create(qwen15, input="Hi", store=False, max_output_tokens=4)
    assert unstored.store is False
    with pytest.raises(openai.NotFoundError):
        create(qwen15, input="Again", previous_response_id=unstored.id)
    assert httpx.get(f"{qwen15.url}/v1/responses/{unstored.id}").status_code == 404
    streamed = list(create(qwen15, input="Hi", store=False, stream=True, max_output_tokens=4))
    assert httpx.get(f"{qwen15.url}/v1/responses/{streamed[-1].response.id}").status_code == 404


def test_a_client_that_leaves_mid_stream_frees_its_blocks(qwen15):
    leave_mid_stream(qwen15, "/v1/responses", "response.output_text.delta", {
        "model": "qwen15", "max_output_tokens": 1500, "stream": True,
        "input": "Count from 1 to 2000, one number a line."})


# --- errors: stories260K with a chat template, behind an API key ---------------


def openai_error(response, status, param=None):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == status, error
    assert error["param"] == param, error
    return error["message"]


HELLO = {"model": "stories", "max_output_tokens": 8, "input": "Once upon a time"}


def test_each_error_class(stories_chat):
    def post(body, key="sekret"):
        return httpx.post(stories_chat.url + "/v1/responses", json=body, timeout=60,
                          headers={"Authorization": f"Bearer {key}"} if key else {})

    assert post(HELLO).json()["status"] in ("completed", "incomplete")
    assert "input" in openai_error(post({**HELLO, "input": 3}), 400, "input")
    assert "input_image" in openai_error(post({**HELLO, "input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": "http://x"}]}]}), 400, "input")
    openai_error(post({**HELLO, "max_output_tokens": 0}), 400, "max_output_tokens")
    openai_error(post({**HELLO, "tools": [{"type": "web_search"}]}), 400, "tools")
    openai_error(post({**HELLO, "text": {"format": {"type": "json_schema", "name": "x"}}}), 400, "text.format.schema")
    openai_error(post(HELLO, key=None), 401)
    openai_error(post(HELLO, key="wrong"), 401)
    assert "gpt-9" in openai_error(post({**HELLO, "model": "gpt-9"}), 404, "model")
    assert "context length" in openai_error(post({**HELLO, "input": "Once upon a time " * 200}), 400)
    # The official client raises each as its class.
    sdk = stories_chat.client()
    with pytest.raises(openai.BadRequestError) as e:
        sdk.responses.create(**{**HELLO, "reasoning": {"effort": "extreme"}})
    assert e.value.body["param"] == "reasoning.effort"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=stories_chat.url + "/v1", api_key="wrong", max_retries=0).responses.create(**HELLO)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.create(**{**HELLO, "model": "gpt-9"})
    assert sdk.responses.create(**HELLO).object == "response"  # it goes on serving

"""Tool calls end to end on Qwen2.5-Coder-1.5B-Instruct through the official
openai client: tool_choice required and named always give calls whose
arguments validate against the tool's parameters (Python's jsonschema),
sampled; streamed calls assemble to the non-streamed ones; the client's tool
loop runs call → tool result → final answer. The same holds for calls written
as XML parameters (Qwen3-Coder's syntax, which the 0.5B model is held to)."""
import json

import jsonschema
import pytest
from conftest import QWEN, Server, need

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 40},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city"]}}}
FLIGHT = {"type": "function", "function": {
    "name": "book_flight", "description": "Book a flight between two airports",
    "parameters": {"type": "object",
                   "properties": {"origin": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA code"},
                                  "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
                                  "date": {"type": "string", "format": "date"},
                                  "passengers": {"type": "integer", "minimum": 1, "maximum": 9}},
                   "required": ["origin", "destination", "date", "passengers"], "additionalProperties": False}}}
SEARCH = {"type": "function", "function": {
    "name": "search_products", "description": "Search the shop's catalogue",
    "parameters": {"type": "object",
                   "properties": {"query": {"type": "string", "maxLength": 40},
                                  "category": {"enum": ["books", "games", "garden"]},
                                  "max_price": {"type": "number", "minimum": 0},
                                  "in_stock": {"type": "boolean"},
                                  "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 3}},
                   "required": ["query", "category"], "additionalProperties": False}}}
TOOLS = {t["function"]["name"]: t for t in (WEATHER, FLIGHT, SEARCH)}

PARIS = [{"role": "user", "content": "Use the tool to find the weather in Paris, then tell me in one sentence."}]
FLY = [{"role": "user", "content": "Book me and my wife a flight from Boston to Lisbon on 2025-06-14."}]
SHOP = [{"role": "user", "content": "Find me a cheap board game for two players under 30 dollars."}]


def named(name):
    return {"type": "function", "function": {"name": name}}


def create(server, messages, tools, **kw):
    kw.setdefault("max_tokens", 120)
    kw.setdefault("temperature", 0)
    return server.client().chat.completions.create(model="qwen15", messages=messages, tools=tools, **kw)


def check_calls(message, tools, only=None):
    """Every call names one of the tools (`only` where named) with arguments valid for its parameters."""
    assert message.tool_calls, message
    for call in message.tool_calls:
        assert call.type == "function" and call.id
        assert call.function.name in tools and (only is None or call.function.name == only), call
        arguments = json.loads(call.function.arguments)
        jsonschema.Draft202012Validator(tools[call.function.name]["function"]["parameters"],
                                        format_checker=jsonschema.FormatChecker()).validate(arguments)
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]


@pytest.mark.parametrize("messages,tools,choice,n", [
    (FLY, [WEATHER, FLIGHT], named("book_flight"), 4),
    (SHOP, [SEARCH, WEATHER, FLIGHT], "required", 4),
    (PARIS, [FLIGHT, SEARCH], named("search_products"), 2),  # a tool that does not fit the prompt still validates
], ids=["named-flight", "required-shop", "named-unfitting"])
def test_required_and_named_calls_validate_sampled(qwen15, messages, tools, choice, n):
    out = create(qwen15, messages, tools, tool_choice=choice, n=n, temperature=1.0, seed=17)
    by_name = {t["function"]["name"]: t for t in tools}
    only = choice["function"]["name"] if isinstance(choice, dict) else None
    for c in out.choices:
        assert c.finish_reason == "tool_calls", c
        assert not c.message.content
        check_calls(c.message, by_name, only)


def test_parallel_tool_calls_false_makes_one_call(qwen15):
    messages = [{"role": "user", "content": "What is the weather in Paris, in Rome and in Oslo?"}]
    out = create(qwen15, messages, [WEATHER], tool_choice="required", parallel_tool_calls=False, n=2,
                 temperature=1.0, seed=3)
    for c in out.choices:
        assert c.finish_reason == "tool_calls" and len(c.message.tool_calls) == 1
        check_calls(c.message, TOOLS)


def assemble(chunks):
    """The choice's content, tool calls (id, name, arguments) and finish reason, from stream deltas."""
    content, calls, finish = "", {}, None
    for chunk in chunks:
        for c in chunk.choices:
            content += c.delta.content or ""
            for d in c.delta.tool_calls or []:
                call = calls.setdefault(d.index, {"id": None, "name": None, "arguments": ""})
                if d.id:
                    assert call["id"] is None, "the id comes once"
                    call["id"] = d.id
                    assert d.type == "function"
                if d.function and d.function.name:
                    assert call["name"] is None, "the name comes once"
                    call["name"] = d.function.name
                call["arguments"] += (d.function.arguments or "") if d.function else ""
            finish = c.finish_reason or finish
    assert sorted(calls) == list(range(len(calls)))
    return content, [calls[i] for i in sorted(calls)], finish


@pytest.mark.parametrize("messages,tools,choice", [
    (PARIS, [WEATHER], "auto"),
    (FLY, [WEATHER, FLIGHT], "required"),
    (SHOP, [SEARCH], named("search_products")),
], ids=["auto", "required", "named"])
def test_streamed_calls_assemble_to_the_whole(qwen15, messages, tools, choice):
    whole = create(qwen15, messages, tools, tool_choice=choice).choices[0]
    assert whole.finish_reason == "tool_calls"
    check_calls(whole.message, TOOLS)
    content, calls, finish = assemble(create(qwen15, messages, tools, tool_choice=choice, stream=True))
    assert finish == "tool_calls"
    assert content == (whole.message.content or "")
    assert [(c["name"], c["arguments"]) for c in calls] == \
        [(c.function.name, c.function.arguments) for c in whole.message.tool_calls]
    assert all(c["id"] for c in calls) and len({c["id"] for c in calls}) == len(calls)


def test_the_clients_tool_loop(qwen15):
    client = qwen15.client()
    messages = list(PARIS)
    first = client.chat.completions.create(model="qwen15", messages=messages, tools=[WEATHER], temperature=0,
                                           max_tokens=120)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    [(name, arguments)] = check_calls(choice.message, TOOLS)
    assert name == "get_weather" and "paris" in arguments["city"].lower()
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": choice.message.tool_calls[0].id,
                     "content": json.dumps({"city": "Paris", "temperature": 18, "unit": "celsius", "sky": "cloudy"})})
    final = client.chat.completions.create(model="qwen15", messages=messages, tools=[WEATHER], temperature=0,
                                           max_tokens=60).choices[0]
    assert final.finish_reason == "stop" and not final.message.tool_calls
    assert "18" in final.message.content and "Paris" in final.message.content, final.message.content
    # Streamed, the final answer is the same text.
    content, calls, finish = assemble(client.chat.completions.create(
        model="qwen15", messages=messages, tools=[WEATHER], temperature=0, max_tokens=60, stream=True))
    assert (content, calls, finish) == (final.message.content, [], "stop")


def test_tool_choice_none_answers_in_text(qwen15):
    out = create(qwen15, PARIS, [WEATHER], tool_choice="none", max_tokens=24).choices[0]
    assert out.message.content and not out.message.tool_calls
    assert out.finish_reason in ("stop", "length")


@pytest.mark.parametrize("body,param", [
    ({"tools": [WEATHER], "tool_choice": named("book_flight")}, "tool_choice"),
    ({"tool_choice": "required"}, "tool_choice"),
    ({"tools": [WEATHER], "tool_choice": "sometimes"}, "tool_choice"),
    ({"tools": [{"type": "function", "function": {"description": "no name"}}]}, "tools"),
    ({"tools": [WEATHER, WEATHER]}, "tools"),
    ({"tools": [WEATHER], "tool_choice": "required", "response_format": {"type": "json_object"}}, "response_format"),
    ({"tools": [WEATHER], "parallel_tool_calls": "yes"}, "parallel_tool_calls"),
])
def test_bad_tool_requests_are_400(qwen15, body, param):
    r = qwen15.post("/v1/chat/completions", {"model": "qwen15", "messages": PARIS, "max_tokens": 8, **body})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param, r.text


# --- XML parameters: Qwen2.5-Coder-0.5B held to Qwen3-Coder's syntax ------------

@pytest.fixture(scope="module")
def qwen_xml():
    """The 0.5B model read and constrained as Qwen3-Coder writes calls: strings raw, other values JSON."""
    server = Server(need(QWEN), "-c", "2048", "--served-model-name", "qwen15", "--tool-call-parser", "qwen3_coder")
    yield server
    assert server.stop() == 0, "".join(server.log)


@pytest.mark.parametrize("messages,tools,choice", [
    (FLY, [WEATHER, FLIGHT], named("book_flight")),
    (SHOP, [SEARCH, WEATHER], "required"),
], ids=["named-flight", "required-shop"])
def test_xml_parameters_validate_and_stream_the_same(qwen_xml, messages, tools, choice):
    out = create(qwen_xml, messages, tools, tool_choice=choice, n=4, temperature=1.0, seed=5, max_tokens=200)
    by_name = {t["function"]["name"]: t for t in tools}
    for c in out.choices:
        assert c.finish_reason == "tool_calls", c
        check_calls(c.message, by_name, choice["function"]["name"] if isinstance(choice, dict) else None)
    whole = create(qwen_xml, messages, tools, tool_choice=choice, max_tokens=200).choices[0]
    check_calls(whole.message, by_name)
    content, calls, finish = assemble(create(qwen_xml, messages, tools, tool_choice=choice, max_tokens=200,
                                             stream=True))
    assert (content, finish) == (whole.message.content or "", "tool_calls")
    assert [(c["name"], c["arguments"]) for c in calls] == \
        [(c.function.name, c.function.arguments) for c in whole.message.tool_calls]


def test_xml_parameters_refuse_what_they_cannot_write(qwen_xml):
    patterned = {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "patternProperties": {"^x": {"type": "string"}}}}}
    r = qwen_xml.post("/v1/chat/completions", {"model": "qwen15", "messages": PARIS, "max_tokens": 8,
                                               "tools": [patterned], "tool_choice": "required"})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["param"] == "tools" and "patternProperties" in error["message"], error

"""Structured outputs end to end on the real models, through the official
openai client: every constrained output is checked with Python's jsonschema
(or re.fullmatch, or a parser of its grammar), greedy and sampled (n = 4),
streamed and not, under each drafter and in one mixed batch; bad constraints
are 400s naming their field; logit_bias, allowed_token_ids and bad_words."""
import json
import re
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import openai
import pytest

from conftest import QWEN, Server, need

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "languages": {"type": "array", "items": {"enum": ["Python", "C++", "Rust", "Go"]},
                      "minItems": 1, "maxItems": 3},
    },
    "required": ["name", "age", "languages"],
    "additionalProperties": False,
}
# $ref, anyOf with null, formats, a pattern, nested arrays of objects.
ORDER = {
    "$defs": {"item": {"type": "object",
                       "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{3}$"},
                                      "qty": {"type": "integer", "minimum": 1, "maximum": 9}},
                       "required": ["sku", "qty"], "additionalProperties": False}},
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 1},
        "date": {"type": "string", "format": "date"},
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 2},
        "note": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 16}]},
        "express": {"type": "boolean"},
    },
    "required": ["id", "date", "items", "note", "express"],
    "additionalProperties": False,
}
PERSON_MESSAGES = [{"role": "user", "content": "Describe a programmer as JSON."}]
ORDER_MESSAGES = [{"role": "user", "content": "Write a shop order as JSON."}]
PHONE = r"\(\d{3}\) \d{3}-\d{4}"
COLORS = ["red", "green", "blue", "dark purple"]
# Arithmetic: recursive, so it checks the parser more than a regex would.
ARITHMETIC = r"""root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= [0-9]{1,3} | "(" expr ")"
"""

# The same language in Lark's syntax (vLLM's guidance backend, llguidance).
ARITHMETIC_LARK = r"""start: expr
expr: term (("+" | "-") term)*
term: factor (("*" | "/") factor)*
factor: /[0-9]{1,3}/ | "(" expr ")"
"""


def validate(text, schema):
    value = json.loads(text)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(value)
    return value


def parse_arithmetic(text):
    """A recursive-descent parser of ARITHMETIC's language: raises where the text is not in it."""
    pos = 0

    def peek():
        return text[pos] if pos < len(text) else ""

    def expr():
        nonlocal pos
        term()
        while peek() in ("+", "-") and peek():
            pos += 1
            term()

    def term():
        nonlocal pos
        factor()
        while peek() in ("*", "/") and peek():
            pos += 1
            factor()

    def factor():
        nonlocal pos
        if peek() == "(":
            pos += 1
            expr()
            assert peek() == ")", f"')' expected at {pos} in {text!r}"
            pos += 1
            return
        digits = re.match(r"[0-9]{1,3}", text[pos:])
        assert digits, f"a number expected at {pos} in {text!r}"
        pos += digits.end()

    expr()
    assert pos == len(text), f"{text!r} has more after {pos}"


def chat(server, messages=PERSON_MESSAGES, **kw):
    kw.setdefault("max_tokens", 128)
    kw.setdefault("temperature", 0)
    return server.client().chat.completions.create(model="qwen", messages=messages, **kw)


def streamed(server, messages=PERSON_MESSAGES, **kw):
    """The texts of a streamed chat, per choice, and their finish reasons."""
    texts, reasons = {}, {}
    for chunk in chat(server, messages, stream=True, **kw):
        for c in chunk.choices:
            texts[c.index] = texts.get(c.index, "") + (c.delta.content or "")
            if c.finish_reason:
                reasons[c.index] = c.finish_reason
    return [texts[i] for i in sorted(texts)], [reasons[i] for i in sorted(reasons)]


def json_schema_format(schema, name="out"):
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def texts_of(out):
    assert all(c.finish_reason == "stop" for c in out.choices), [c.finish_reason for c in out.choices]
    return [c.message.content for c in out.choices]


# --- the request fields, greedy, streamed and not ---------------------------

@pytest.mark.parametrize("schema,messages", [(PERSON, PERSON_MESSAGES), (ORDER, ORDER_MESSAGES)], ids=["person", "order"])
def test_response_format_json_schema_greedy_streams_the_same(qwen, schema, messages):
    whole = texts_of(chat(qwen, messages, response_format=json_schema_format(schema)))
    validate(whole[0], schema)
    texts, reasons = streamed(qwen, messages, response_format=json_schema_format(schema))
    assert texts == whole and reasons == ["stop"]


def test_response_format_json_schema_sampled_n4(qwen):
    for text in texts_of(chat(qwen, ORDER_MESSAGES, response_format=json_schema_format(ORDER), n=4, temperature=1.0,
                              seed=7)):
        validate(text, ORDER)
    # Seeded sampling is reproducible, streamed too.
    out = chat(qwen, response_format=json_schema_format(PERSON), n=4, temperature=1.0, seed=7)
    for text in texts_of(out):
        validate(text, PERSON)
    texts, reasons = streamed(qwen, response_format=json_schema_format(PERSON), n=4, temperature=1.0, seed=7)
    assert texts == texts_of(out) and reasons == ["stop"] * 4


SMALL_OBJECT_MESSAGES = [{"role": "user", "content": "Give me a JSON object with a city's name and population."}]


def test_response_format_json_object(qwen):
    out = chat(qwen, SMALL_OBJECT_MESSAGES, response_format={"type": "json_object"}, n=2, temperature=0.8, seed=3)
    for text in texts_of(out):
        assert isinstance(json.loads(text), dict)
    texts, _ = streamed(qwen, SMALL_OBJECT_MESSAGES, response_format={"type": "json_object"})
    assert isinstance(json.loads(texts[0]), dict)


@pytest.mark.parametrize("field", ["vllm", "guided", "llama"])
def test_each_apis_json_schema_field(qwen, field):
    body = {"vllm": {"structured_outputs": {"json": PERSON}}, "guided": {"guided_json": json.dumps(PERSON)},
            "llama": {"json_schema": PERSON}}[field]
    out = chat(qwen, extra_body=body, n=2, temperature=1.0, seed=11)
    for text in texts_of(out):
        validate(text, PERSON)


def test_disable_any_whitespace_is_compact(qwen):
    out = chat(qwen, extra_body={"structured_outputs": {"json": PERSON, "disable_any_whitespace": True}})
    text = texts_of(out)[0]
    value = validate(text, PERSON)
    assert text == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_json_object_by_vllm_field(qwen):
    out = chat(qwen, SMALL_OBJECT_MESSAGES, extra_body={"structured_outputs": {"json_object": True}})
    assert isinstance(json.loads(texts_of(out)[0]), dict)


@pytest.mark.parametrize("body", [{"structured_outputs": {"choice": COLORS}}, {"guided_choice": COLORS}], ids=["vllm", "guided"])
def test_choice_returns_one_of_the_choices(qwen, body):
    messages = [{"role": "user", "content": "Name a color."}]
    out = chat(qwen, messages, extra_body=body, n=4, temperature=1.0, seed=5, max_tokens=8)
    assert all(t in COLORS for t in texts_of(out))


@pytest.mark.parametrize("body", [{"structured_outputs": {"regex": PHONE}}, {"guided_regex": PHONE}], ids=["vllm", "guided"])
def test_regex_output_fullmatches(qwen, body):
    messages = [{"role": "user", "content": "Give me a US phone number."}]
    out = chat(qwen, messages, extra_body=body, n=4, temperature=1.0, seed=2, max_tokens=24)
    for text in texts_of(out):
        assert re.fullmatch(PHONE, text, re.ASCII), text
    texts, _ = streamed(qwen, messages, extra_body=body, max_tokens=24)
    assert texts == texts_of(chat(qwen, messages, extra_body=body, max_tokens=24))


@pytest.mark.parametrize("field,grammar", [("structured_outputs", ARITHMETIC), ("guided_grammar", ARITHMETIC),
                                           ("grammar", ARITHMETIC), ("structured_outputs", ARITHMETIC_LARK)],
                         ids=["structured_outputs", "guided_grammar", "grammar", "lark"])
def test_gbnf_output_parses(qwen, field, grammar):
    body = {"structured_outputs": {"grammar": grammar}} if field == "structured_outputs" else {field: grammar}
    messages = [{"role": "user", "content": "Write a short arithmetic expression, nothing else."}]
    out = chat(qwen, messages, extra_body=body, n=2, temperature=0.7, seed=1, max_tokens=32)
    for text in texts_of(out):
        parse_arithmetic(text)


def test_completions_endpoint_takes_the_same_fields(qwen):
    client = qwen.client()
    prompt = "A programmer, described as JSON:\n"
    out = client.completions.create(model="qwen", prompt=prompt, max_tokens=96, temperature=0,
                                    extra_body={"guided_json": PERSON})
    assert out.choices[0].finish_reason == "stop"
    validate(out.choices[0].text, PERSON)
    chunks = client.completions.create(model="qwen", prompt=prompt, max_tokens=96, temperature=0, stream=True,
                                       extra_body={"guided_json": PERSON})
    assert "".join(c.choices[0].text for c in chunks if c.choices) == out.choices[0].text
    out = client.completions.create(model="qwen", prompt="The best color is", max_tokens=8, temperature=1.0, n=4,
                                    seed=3, extra_body={"structured_outputs": {"choice": COLORS}})
    assert all(c.text in COLORS and c.finish_reason == "stop" for c in out.choices)


def test_a_response_format_beside_tools_is_content(qwen):
    # tool_choice auto with a response_format: the format holds the reply, which is never read as a call
    # (this model answers {"name": ..., "arguments": ...}, which the Hermes parser took for one).
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    out = chat(qwen, [{"role": "user", "content": "Name a color."}], tools=tools,
               response_format=json_schema_format({"type": "object", "properties": {"name": {"type": "string"},
                                                                                   "arguments": {"type": "object"}},
                                                   "required": ["name", "arguments"]}))
    text = texts_of(out)[0]
    assert not out.choices[0].message.tool_calls and isinstance(json.loads(text), dict)


def test_bounds_never_lead_into_a_dead_end(qwen):
    # The model wants to write 3; the grammar must steer it to 10..20 from the first token.
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 10, "maximum": 20}},
              "required": ["n"], "additionalProperties": False}
    messages = [{"role": "user", "content": "Reply with the number 3 as JSON."}]
    validate(texts_of(chat(qwen, messages, response_format=json_schema_format(schema), max_tokens=32))[0], schema)


# --- bad constraints: 400 naming the field ----------------------------------

@pytest.mark.parametrize("body,param,words", [
    ({"response_format": json_schema_format({"type": "object", "not": {"type": "null"}})}, "response_format", "not"),
    ({"response_format": json_schema_format({"type": "objekt"})}, "response_format", "objekt"),
    ({"response_format": json_schema_format({"type": "array", "uniqueItems": True})}, "response_format", "uniqueItems"),
    ({"response_format": {"type": "xml"}}, "response_format.type", "xml"),
    ({"guided_json": "{not json"}, "guided_json", "JSON"),
    ({"structured_outputs": {"json": {"type": "integer", "multipleOf": 3}}}, "structured_outputs.json", "multipleOf"),
    ({"structured_outputs": {"regex": "(ab"}}, "structured_outputs.regex", "regex"),
    ({"guided_regex": "a{3,1}"}, "guided_regex", "regex"),
    ({"guided_grammar": "root ::= foo"}, "guided_grammar", "foo"),
    ({"grammar": "root ::= \"a"}, "grammar", "grammar"),
    ({"guided_choice": []}, "guided_choice", "guided_choice"),
    ({"guided_regex": ""}, "guided_regex", "empty"),
    ({"structured_outputs": {"grammar": ""}}, "structured_outputs.grammar", "empty"),
    ({"structured_outputs": {"xml": "<a/>"}}, "structured_outputs.xml", "xml"),
    ({"structured_outputs": {"grammar": "start: /a/i"}}, "structured_outputs.grammar", "flags"),  # Lark
    ({"guided_regex": "a", "guided_json": PERSON}, "guided_json", "guided_regex"),
    ({"response_format": {"type": "json_object"}, "structured_outputs": {"choice": ["a"]}},
     "structured_outputs.choice", "response_format"),
    ({"json_schema": PERSON, "grammar": ARITHMETIC}, "grammar", "json_schema"),
    ({"logit_bias": {"fifty": 1}}, "logit_bias", "fifty"),
    ({"logit_bias": {"5": 101}}, "logit_bias", "101"),
    ({"logit_bias": {"999999999": 5}}, "logit_bias", "999999999"),
    ({"allowed_token_ids": []}, "allowed_token_ids", "allowed_token_ids"),
    ({"allowed_token_ids": [999999999]}, "allowed_token_ids", "999999999"),
    ({"bad_words": "red"}, "bad_words", "bad_words"),
])
def test_bad_constraints_are_400_naming_the_field(qwen, body, param, words):
    r = qwen.post("/v1/chat/completions", {"model": "qwen", "messages": PERSON_MESSAGES, "max_tokens": 8, **body})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["param"] == param, error
    assert param.split(".")[0] in error["message"] and words in error["message"], error
    # The completions endpoint reads the same fields.
    r = qwen.post("/v1/completions", {"model": "qwen", "prompt": "Hello", "max_tokens": 8, **body})
    assert r.status_code == 400 and r.json()["error"]["param"] == param, r.text


@pytest.mark.parametrize("schema", [
    {"enum": []}, False, {"allOf": [{"type": "string"}, {"type": "integer"}]},
    # Refused when compiled, or else when the output cannot go on: a 400 either way, never a 200.
    {"type": "integer", "minimum": 5, "maximum": 2},
    {"type": "string", "pattern": "^a$", "minLength": 2},
    {"type": "string", "minLength": 5, "maxLength": 2},
])
def test_unsatisfiable_schema_is_a_clear_400(qwen, schema):
    body = {"model": "qwen", "messages": PERSON_MESSAGES, "max_tokens": 8, "response_format": json_schema_format(schema)}
    r = qwen.post("/v1/chat/completions", body)
    assert r.status_code == 400 and r.json()["error"]["param"] == "response_format", r.text
    # Streamed, a failure after the 200 is an error event, which the openai client raises.
    try:
        chunks = list(chat(qwen, response_format=json_schema_format(schema), max_tokens=8, stream=True))
    except openai.BadRequestError as e:  # refused before the stream began
        assert e.body["param"] == "response_format"
    except openai.APIError as e:
        assert "response_format" in e.message and "grammar" in e.message, e.message
    else:
        pytest.fail(f"a stream of {schema} ended without an error: {chunks}")


# --- the stateless processors -----------------------------------------------

def token_id(server, text):
    ids = server.post("/tokenize", {"prompt": text, "add_special_tokens": False}).json()["tokens"]
    assert len(ids) == 1, ids
    return ids[0]


def complete(server, prompt="The capital of France is", **kw):
    kw.setdefault("max_tokens", 4)
    return server.client().completions.create(model="qwen", prompt=prompt, temperature=0, **kw).choices[0]


def test_logit_bias_forces_and_bans_tokens(qwen):
    banana = token_id(qwen, " banana")
    forced = complete(qwen, logit_bias={str(banana): 100}, max_tokens=3)
    assert forced.text == " banana" * 3
    plain = complete(qwen).text
    assert plain.startswith(" Paris")
    banned = complete(qwen, logit_bias={str(token_id(qwen, " Paris")): -100}).text
    assert not banned.startswith(" Paris")
    # Chat takes it too, and with a constraint it only ranks what the grammar allows.
    out = chat(qwen, [{"role": "user", "content": "Name a color."}], max_tokens=8,
               logit_bias={str(token_id(qwen, "green")): 100}, extra_body={"guided_choice": COLORS})
    assert texts_of(out) == ["green"]


def test_allowed_token_ids(qwen):
    yes, no = token_id(qwen, " yes"), token_id(qwen, " no")
    out = complete(qwen, prompt="Is the sky green? Answer:", max_tokens=5, n=2,
                   extra_body={"allowed_token_ids": [yes, no]})
    assert re.fullmatch(r"( yes| no){5}", out.text), out.text


def test_bad_words(qwen):
    assert "Paris" in complete(qwen, max_tokens=8).text
    out = complete(qwen, max_tokens=8, extra_body={"bad_words": ["Paris"]})
    assert "Paris" not in out.text and out.text


# --- drafters ----------------------------------------------------------------

@pytest.fixture(scope="module", params=["ngram", "suffix", "draft"])
def speculating(request):
    flags = ["--draft", str(QWEN)] if request.param == "draft" else ["--spec-method", request.param]
    server = Server(need(QWEN), "-c", "2048", "--served-model-name", "qwen", "--batch-invariant", "--max-seqs", "8",
                    "--spec-k", "4", *flags)
    yield server
    assert server.stop() == 0, "".join(server.log)


def test_every_drafter_keeps_outputs_valid(qwen, speculating):
    # Greedy: the target's own tokens, streamed and not (drafts stop where the grammar jumps forward).
    fmt = json_schema_format(PERSON)
    plain = texts_of(chat(qwen, response_format=fmt))
    assert texts_of(chat(speculating, response_format=fmt)) == plain
    assert streamed(speculating, response_format=fmt) == (plain, ["stop"])
    # Sampled, n = 4: every one validates.
    for text in texts_of(chat(speculating, response_format=fmt, n=4, temperature=1.0, seed=9)):
        validate(text, PERSON)
    messages = [{"role": "user", "content": "Give me a US phone number."}]
    for text in texts_of(chat(speculating, messages, extra_body={"guided_regex": PHONE}, n=4, temperature=1.0,
                              seed=4, max_tokens=24)):
        assert re.fullmatch(PHONE, text, re.ASCII), text


# --- a mixed batch -----------------------------------------------------------

FREE_PROMPTS = ["Write a haiku about the sea.", "What is a linked list?", "Say hello in French.",
                "Name three prime numbers."]


def test_32_mixed_requests_at_once(qwen):
    def free(prompt):
        return chat(qwen, [{"role": "user", "content": prompt}], max_tokens=16).choices[0].message.content

    solo = {p: free(p) for p in FREE_PROMPTS}
    color_messages = [{"role": "user", "content": "Name a color."}]
    phone_messages = [{"role": "user", "content": "Give me a US phone number."}]

    def constrained(i):
        kind = i % 4
        if kind == 0:
            return "person", texts_of(chat(qwen, response_format=json_schema_format(PERSON), temperature=i % 3 * 0.5,
                                           seed=i))
        if kind == 1:
            return "order", streamed(qwen, ORDER_MESSAGES, response_format=json_schema_format(ORDER),
                                     temperature=1.0, seed=i)[0]
        if kind == 2:
            return "phone", texts_of(chat(qwen, phone_messages, extra_body={"guided_regex": PHONE}, temperature=1.0,
                                          seed=i, max_tokens=24))
        return "color", texts_of(chat(qwen, color_messages, extra_body={"guided_choice": COLORS}, temperature=1.0,
                                      seed=i, max_tokens=8))

    def job(i):
        if i % 2:
            prompt = FREE_PROMPTS[i // 2 % len(FREE_PROMPTS)]
            return "free", (prompt, free(prompt))
        return constrained(i // 2)

    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(job, range(32)))
    checks = {"person": lambda t: validate(t, PERSON), "order": lambda t: validate(t, ORDER),
              "phone": lambda t: re.fullmatch(PHONE, t, re.ASCII) or pytest.fail(t),
              "color": lambda t: t in COLORS or pytest.fail(t)}
    for kind, value in results:
        if kind == "free":
            prompt, text = value
            assert text == solo[prompt], prompt
        else:
            for text in value:
                checks[kind](text)


def test_preempted_sequences_keep_their_constraint():
    # A KV pool of 256 tokens (16 blocks) for 6 sequences of ~70 (4-5 blocks each): they are preempted,
    # recomputed, and go on under the grammar state they had. Each prompt differs from its first
    # block on, so that the prefix cache cannot share them into fitting the pool.
    server = Server(need(QWEN), "-c", "256", "--served-model-name", "qwen", "--kv-mem", "3M")
    try:
        def job(i):
            messages = [{"role": "system", "content": f"{i}: you are assistant number {i}."}] + PERSON_MESSAGES
            args = dict(response_format=json_schema_format(PERSON), temperature=1.0, seed=i)
            if i % 2:
                return texts_of(chat(server, messages, **args))
            return streamed(server, messages, **args)[0]

        with ThreadPoolExecutor(6) as pool:
            for texts in pool.map(job, range(6)):
                for text in texts:
                    validate(text, PERSON)
        assert server.metrics()["vllm:num_preemptions_total"] > 0
    finally:
        assert server.stop() == 0, "".join(server.log)


# --- Gemma 3 270M: another vocabulary (262,144 tokens); a base model, no chat template -

GEMMA_PROMPT = "Here is a programmer described as JSON:\n"


def test_gemma_json_schema(gemma):
    client = gemma.client()
    args = dict(model="gemma", prompt=GEMMA_PROMPT, max_tokens=128, extra_body={"guided_json": PERSON})
    greedy = client.completions.create(temperature=0, **args).choices[0]
    assert greedy.finish_reason == "stop"
    validate(greedy.text, PERSON)
    chunks = client.completions.create(temperature=0, stream=True, **args)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == greedy.text
    for c in client.completions.create(temperature=1.0, n=4, seed=6, **args).choices:
        assert c.finish_reason == "stop"
        validate(c.text, PERSON)


def test_gemma_regex_and_choice(gemma):
    client = gemma.client()
    out = client.completions.create(model="gemma", prompt="Call me at", max_tokens=24, temperature=1.0, n=4, seed=1,
                                    extra_body={"guided_regex": " " + PHONE})
    assert all(c.finish_reason == "stop" and re.fullmatch(" " + PHONE, c.text, re.ASCII) for c in out.choices)
    out = client.completions.create(model="gemma", prompt="My favourite color is", max_tokens=8, temperature=1.0,
                                    n=4, seed=1, extra_body={"structured_outputs": {"choice": COLORS}})
    assert all(c.finish_reason == "stop" and c.text in COLORS for c in out.choices)

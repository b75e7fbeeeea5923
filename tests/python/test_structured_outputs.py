"""Structured outputs through the Python package, as vLLM spells them:
SamplingParams(structured_outputs=StructuredOutputsParams(...)) and the older
guided_decoding=GuidedDecodingParams(...), logit_bias, allowed_token_ids and
bad_words, on stories260K and the real Qwen models; every output checked with
Python's jsonschema, re.fullmatch or a parser. LLM.chat(..., tools=[...])
renders the tools through the model's template and returns the reply as text,
as vLLM's LLM.chat does (vLLM parses tool calls in its server, not there): a
call schema in structured_outputs makes the reply a call whose arguments
validate, and the tool's result goes back as a role "tool" message."""
import json
import re

import jsonschema
import pytest

from skiff import GuidedDecodingParams, SamplingParams, StructuredOutputsParams

PET_OWNER = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 12},
                   "age": {"type": "integer", "minimum": 0, "maximum": 120},
                   "pets": {"type": "array", "items": {"enum": ["cat", "dog"]}, "maxItems": 3}},
    "required": ["name", "age", "pets"],
    "additionalProperties": False,
}
SENTENCE = r"(yes|no), [a-z ]{3,20}\."
MOODS = ["happy", "sad", "a little sleepy"]
LIST_GRAMMAR = r"""root ::= "[" item ("," item){0,3} "]"
item ::= [a-z]{1,8} | root
"""


def validate(text, schema):
    value = json.loads(text)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(value)
    return value


def parse_list(text):
    """LIST_GRAMMAR's language: nested lists of words, written without quotes."""
    as_json = re.sub(r"[a-z]+", lambda m: json.dumps(m.group()), text)
    value = json.loads(as_json)
    assert json.dumps(value, separators=(",", ":")) == as_json, text

    def check(v):
        assert isinstance(v, list) and 1 <= len(v) <= 4, text
        for item in v:
            assert (isinstance(item, str) and 1 <= len(item) <= 8) or check(item) is None

    check(value)


def outputs(llm, prompt, **fields):
    (out,) = llm.generate(prompt, SamplingParams(**fields), use_tqdm=False)
    assert all(c.finish_reason == "stop" for c in out.outputs), [(c.text, c.finish_reason) for c in out.outputs]
    return [c.text for c in out.outputs]


GREEDY = dict(temperature=0, max_tokens=160)
SAMPLED = dict(temperature=1.0, max_tokens=160, n=4, seed=7)


# --- stories260K: each kind of constraint, greedy and sampled ----------------

# A story model writes blanks wherever JSON lets it: compact JSON here (whitespace: the Qwen tests).
def compact(schema):
    return StructuredOutputsParams(json=schema, disable_any_whitespace=True)


@pytest.mark.parametrize("sampling", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
@pytest.mark.parametrize("schema_as", ["dict", "text"])
def test_json_schema(llm, sampling, schema_as):
    schema = PET_OWNER if schema_as == "dict" else json.dumps(PET_OWNER)
    for text in outputs(llm, "Lily saw a", structured_outputs=compact(schema), **sampling):
        assert text == json.dumps(validate(text, PET_OWNER), separators=(",", ":"), ensure_ascii=False)


def test_guided_decoding_is_the_same_thing(llm):
    for old, new in [(GuidedDecodingParams(json=PET_OWNER, disable_any_whitespace=True), compact(PET_OWNER)),
                     (GuidedDecodingParams(regex=SENTENCE), StructuredOutputsParams(regex=SENTENCE))]:
        assert outputs(llm, "Lily saw a", guided_decoding=old, **SAMPLED) == \
            outputs(llm, "Lily saw a", structured_outputs=new, **SAMPLED)


@pytest.mark.parametrize("sampling", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_regex_choice_and_grammar(llm, sampling):
    for text in outputs(llm, "Once upon a time", structured_outputs=StructuredOutputsParams(regex=SENTENCE), **sampling):
        assert re.fullmatch(SENTENCE, text), text
    for text in outputs(llm, "Tom felt", structured_outputs=StructuredOutputsParams(choice=MOODS), **sampling):
        assert text in MOODS
    for text in outputs(llm, "Lily saw a", structured_outputs=StructuredOutputsParams(grammar=LIST_GRAMMAR), **sampling):
        parse_list(text)


def test_streamed_text_is_the_generated_text(llm):
    params = SamplingParams(structured_outputs=compact(PET_OWNER), **GREEDY)
    (whole,) = llm.generate("Lily saw a", params, use_tqdm=False)
    streamed = "".join(d.text for d in llm.stream("Lily saw a", params))
    assert streamed == whole.outputs[0].text
    validate(streamed, PET_OWNER)


def test_constrained_and_free_prompts_together(llm):
    prompts = ["Once upon a time", "Lily saw a", "Tom felt", "The dog"]
    free = SamplingParams(temperature=0, max_tokens=24)
    alone = [o.outputs[0].text for o in llm.generate(prompts, free, use_tqdm=False)]
    mixed_params = [free, SamplingParams(structured_outputs=compact(PET_OWNER), **SAMPLED)] * 2
    mixed = llm.generate(prompts, mixed_params, use_tqdm=False)
    assert [mixed[0].outputs[0].text, mixed[2].outputs[0].text] == [alone[0], alone[2]]
    for out in (mixed[1], mixed[3]):
        for c in out.outputs:
            validate(c.text, PET_OWNER)


# --- the stateless processors -------------------------------------------------

def test_logit_bias_allowed_token_ids_and_bad_words(llm):
    tok = llm.get_tokenizer()
    the = tok.encode(" the", add_special_tokens=False)[-1]
    (out,) = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=5, logit_bias={the: 100}),
                          use_tqdm=False)
    assert out.outputs[0].token_ids == [the] * 5
    cat = tok.encode(" cat", add_special_tokens=False)[-1]
    (out,) = llm.generate("Once upon a time", SamplingParams(temperature=1.0, seed=2, max_tokens=8, ignore_eos=True,
                                                              allowed_token_ids=[the, cat]), use_tqdm=False)
    assert set(out.outputs[0].token_ids) <= {the, cat}
    free = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=32), use_tqdm=False)[0]
    word = free.outputs[0].text.split()[2].strip(".,!")
    (out,) = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=32, bad_words=[word]),
                          use_tqdm=False)
    assert word not in out.outputs[0].text.split()


@pytest.mark.parametrize("fields,message", [
    (dict(structured_outputs=StructuredOutputsParams(json={"type": "object", "not": {}})), "not"),
    (dict(structured_outputs=StructuredOutputsParams(json={"type": "objekt"})), "objekt"),
    (dict(structured_outputs=StructuredOutputsParams(json="{not json")), "JSON"),
    (dict(structured_outputs=StructuredOutputsParams(regex="(ab")), "regex"),
    (dict(structured_outputs=StructuredOutputsParams(grammar="root ::= missing")), "missing"),
    (dict(structured_outputs=StructuredOutputsParams(regex="a", choice=["a"])), "both"),
    (dict(structured_outputs=StructuredOutputsParams(regex="a"), guided_decoding=GuidedDecodingParams(regex="a")),
     "guided_decoding"),
    (dict(logit_bias={10 ** 9: 1.0}), "logit_bias"),
    (dict(allowed_token_ids=[]), "allowed_token_ids"),
])
def test_bad_constraints_raise_value_error(llm, fields, message):
    with pytest.raises(ValueError, match=message):
        llm.generate("Once upon a time", SamplingParams(max_tokens=4, **fields), use_tqdm=False)


# --- the real Qwen models --------------------------------------------------------

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 24},
                   "age": {"type": "integer", "minimum": 0, "maximum": 120},
                   "languages": {"type": "array", "items": {"enum": ["Python", "C++", "Rust", "Go"]},
                                 "minItems": 1, "maxItems": 3}},
    "required": ["name", "age", "languages"],
    "additionalProperties": False,
}
PHONE = r"\(\d{3}\) \d{3}-\d{4}"


def test_qwen_generate_and_chat(qwen):
    so = StructuredOutputsParams(json=PERSON)
    (out,) = qwen.chat([{"role": "user", "content": "Describe a programmer as JSON."}],
                       SamplingParams(structured_outputs=so, temperature=1.0, n=4, seed=3, max_tokens=128),
                       use_tqdm=False)
    for c in out.outputs:
        assert c.finish_reason == "stop"
        validate(c.text, PERSON)
    (out,) = qwen.chat([{"role": "user", "content": "Give me a JSON object with a city's name and population."}],
                       SamplingParams(structured_outputs=StructuredOutputsParams(json_object=True), temperature=0.8,
                                      n=2, seed=3, max_tokens=128), use_tqdm=False)
    for c in out.outputs:
        assert c.finish_reason == "stop" and isinstance(json.loads(c.text), dict), c.text
    (out,) = qwen.generate("My phone number is", SamplingParams(
        guided_decoding=GuidedDecodingParams(regex=" " + PHONE), temperature=1.0, n=2, seed=1, max_tokens=24),
        use_tqdm=False)
    assert all(re.fullmatch(" " + PHONE, c.text, re.ASCII) for c in out.outputs)


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 40},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city"]}}}
PARIS = [{"role": "user", "content": "Use the tool to find the weather in Paris, then tell me in one sentence."}]


def call_schema(tool):
    """Qwen's call object ({"name", "arguments"}) for one tool: the reply is a call that validates."""
    f = tool["function"]
    return {"type": "object", "properties": {"name": {"const": f["name"]}, "arguments": f["parameters"]},
            "required": ["name", "arguments"], "additionalProperties": False}


def test_chat_tools_reach_the_template(qwen):
    tok = qwen.get_tokenizer()
    prompt = tok.apply_chat_template(PARIS, tokenize=False, add_generation_prompt=True, tools=[WEATHER])
    assert "<tools>" in prompt and '"name": "get_weather"' in prompt
    (out,) = qwen.chat(PARIS, SamplingParams(temperature=0, max_tokens=4), tools=[WEATHER], use_tqdm=False)
    assert out.prompt_token_ids == tok.encode(prompt, add_special_tokens=False)


def test_chat_tool_loop(qwen15):
    # The call: held to the tool's call schema, every sample's arguments validate.
    so = StructuredOutputsParams(json=call_schema(WEATHER))
    (out,) = qwen15.chat(PARIS, SamplingParams(structured_outputs=so, temperature=1.0, n=4, seed=5, max_tokens=80),
                         tools=[WEATHER], use_tqdm=False)
    for c in out.outputs:
        assert c.finish_reason == "stop"
        validate(c.text, call_schema(WEATHER))
    # Unconstrained and greedy, the model calls the tool by itself (Qwen2.5-Coder writes a ```json fence).
    (free,) = qwen15.chat(PARIS, SamplingParams(temperature=0, max_tokens=80), tools=[WEATHER], use_tqdm=False)
    call = json.loads(re.sub(r"^```(json)?\s*|\s*```$", "", free.outputs[0].text.strip()))
    validate(json.dumps(call), call_schema(WEATHER))
    assert "paris" in call["arguments"]["city"].lower()
    # The result goes back as a "tool" message after the assistant's call; the answer uses it.
    conversation = PARIS + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_0", "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]},
        {"role": "tool", "tool_call_id": "call_0",
         "content": json.dumps({"city": "Paris", "temperature": 18, "unit": "celsius", "sky": "cloudy"})}]
    prompt = qwen15.get_tokenizer().apply_chat_template(conversation, tokenize=False, add_generation_prompt=True,
                                                        tools=[WEATHER])
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city"' in prompt  # arguments as an object
    assert "<tool_response>" in prompt
    (answer,) = qwen15.chat(conversation, SamplingParams(temperature=0, max_tokens=48), tools=[WEATHER],
                            use_tqdm=False)
    text = answer.outputs[0].text
    assert answer.outputs[0].finish_reason == "stop" and "18" in text and "Paris" in text, text

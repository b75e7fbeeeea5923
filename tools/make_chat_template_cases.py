#!/usr/bin/env python3
"""Makes tests/data/chat_templates/: for every template in ../shared/chat-templates/
(real models' chat templates), a set of conversations and what Python's jinja2
renders for each, set up exactly as Hugging Face transformers sets it up for
apply_chat_template (its own compile function: ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, its tojson, raise_exception and
strftime_now), with the messages normalized as apply_chat_template does.
Where jinja2 raises (a template that refuses a system role, a filter jinja2
does not have), the case records the exception instead.

Also writes real/qwen2.5-coder-0.5b-instruct.json: the template read from the
real Qwen2.5-Coder-0.5B-Instruct GGUF (with the `gguf` package) and one rendered
conversation, when the model is in the cache scripts/fetch-models.sh fills.

Run by hand in the reference env (scripts/setup-reference-env.sh):
    ${SKIFF_REFENV:-/work/refenv}/bin/python tools/make_chat_template_cases.py
The tests only read the committed files and the templates in ../shared.
"""
import argparse
import copy
import datetime as dt
import hashlib
import json
import os
import pathlib

import jinja2
import transformers
import transformers.utils.chat_template_utils as ctu

# strftime_now formats this time instead of the clock, so outputs are stable.
FIXED_NOW = dt.datetime(2025, 3, 14, 9, 26, 53)
BOS, EOS = "<s>", "</s>"


class FixedClock(dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return FIXED_NOW


ctu.datetime = FixedClock  # the module's strftime_now calls datetime.now()

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "What is the capital of France?"}
ASSISTANT = {"role": "assistant", "content": "The capital of France is Paris."}
USER2 = {"role": "user", "content": "And of Germany?"}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city — in °C.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}


def tool_call_messages(arguments):
    return [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": '{"temperature": 18, "sky": "clear"}'},
    ]


def conversations(source):
    """(name, messages, add_generation_prompt, extra variables) for one template."""
    cases = []
    for agp in (True, False):
        suffix = "" if agp else "_no_generation_prompt"
        cases += [
            ("system_user" + suffix, [SYSTEM, USER], agp, {}),
            ("user_only" + suffix, [USER], agp, {}),
            ("multi_turn" + suffix, [USER, ASSISTANT, USER2], agp, {}),
        ]
    cases.append(("system_multi_turn", [SYSTEM, USER, ASSISTANT, USER2], True, {}))
    cases.append(("content_parts", [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "Name a colour."}, {"type": "text", "text": "Just one."}]},
    ], True, {}))
    cases.append(("whitespace_unicode", [
        {"role": "user", "content": "  Héllo, 世界! 🚀\n\n  Second line.  \n"},
        {"role": "assistant", "content": "\nBonjour ! <b>&</b> \"quoted\" 'single'\n"},
        {"role": "user", "content": "Tabs\tand\\backslashes"},
    ], True, {}))
    if "tools" in source:
        cases.append(("tools", [SYSTEM, USER], True, {"tools": [WEATHER_TOOL]}))
        cases.append(("tool_call_dict_arguments", tool_call_messages({"city": "Paris", "unit": "celsius"}), True,
                      {"tools": [WEATHER_TOOL]}))
        cases.append(("tool_call_string_arguments", tool_call_messages('{"city": "Paris"}'), True,
                      {"tools": [WEATHER_TOOL]}))
    if "reasoning_content" in source or "thinking" in source:
        cases.append(("reasoning", [
            USER,
            {"role": "assistant", "content": "Paris.", "reasoning_content": "The user asks about France."},
            USER2,
        ], True, {}))
    if "enable_thinking" in source:
        cases.append(("thinking_disabled", [USER], True, {"enable_thinking": False}))
    return cases


def render(source, messages, agp, extra, bos=BOS, eos=EOS):
    """What apply_chat_template renders (as text), or the exception jinja2 raises."""
    try:
        chat = ctu._normalize_chat_messages(copy.deepcopy(messages))
        extra = copy.deepcopy(extra)
        tools = extra.pop("tools", None)
        rendered, _ = ctu.render_jinja_template(
            conversations=[chat], tools=tools, chat_template=source, add_generation_prompt=agp,
            bos_token=bos, eos_token=eos, **extra)
        return {"expected": rendered[0]}
    except Exception as e:  # noqa: BLE001 - every exception is a recorded outcome
        return {"error": str(e), "error_type": type(e).__name__}


def template_cases(path):
    source = path.read_text(encoding="utf-8")
    cases = []
    for name, messages, agp, extra in conversations(source):
        case = {"name": name, "messages": messages, "add_generation_prompt": agp, "bos_token": BOS, "eos_token": EOS}
        if extra:
            case["extra"] = extra
        case.update(render(source, messages, agp, extra))
        cases.append(case)
    return {
        "template": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "now": FIXED_NOW.isoformat(),
        "cases": cases,
    }


def qwen_gguf_case(models_dir, out_dir):
    import gguf  # noqa: PLC0415 - only this part needs it
    path = pathlib.Path(models_dir) / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    if not path.exists():
        print(f"skipped {path}: not in the cache")
        return
    reader = gguf.GGUFReader(str(path))

    def field(name):
        f = reader.fields[name]
        return f.parts[f.data[0]]

    source = bytes(field("tokenizer.chat_template")).decode("utf-8")
    tokens = reader.fields["tokenizer.ggml.tokens"]
    token = lambda i: bytes(tokens.parts[tokens.data[i]]).decode("utf-8")  # noqa: E731
    bos = token(int(field("tokenizer.ggml.bos_token_id")[0]))
    eos = token(int(field("tokenizer.ggml.eos_token_id")[0]))
    messages = [SYSTEM, USER, ASSISTANT, USER2]
    case = {"model": path.name, "template_sha256": hashlib.sha256(source.encode()).hexdigest(),
            "messages": messages, "add_generation_prompt": True, "bos_token": bos, "eos_token": eos}
    case.update(render(source, messages, True, {}, bos, eos))
    (out_dir / "real").mkdir(exist_ok=True)
    (out_dir / "real" / "qwen2.5-coder-0.5b-instruct.json").write_text(
        json.dumps(case, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote real/qwen2.5-coder-0.5b-instruct.json (bos {bos!r}, eos {eos!r})")


def main():
    here = pathlib.Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--templates", default=str(here.parent / "shared" / "chat-templates"))
    parser.add_argument("--out", default=str(here / "tests" / "data" / "chat_templates"))
    parser.add_argument("--models", default=os.environ.get(
        "SKIFF_MODELS_CACHE", os.path.expanduser("~/.cache/skiff/models")))
    args = parser.parse_args()
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"jinja2 {jinja2.__version__}, transformers {transformers.__version__}")
    for path in sorted(pathlib.Path(args.templates).glob("*.jinja")):
        data = template_cases(path)
        errors = sum("error" in c for c in data["cases"])
        (out_dir / (path.stem + ".json")).write_text(
            json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{path.name}: {len(data['cases'])} cases, {errors} raise")
    qwen_gguf_case(args.models, out_dir)


if __name__ == "__main__":
    main()

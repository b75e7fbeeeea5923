#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (fuzz/corpus/<harness>/).

Each seed is small and valid (or nearly), so that libFuzzer starts from inputs
that reach deep into each reader: a tiny GGUF model with a SentencePiece
vocabulary, a BPE-only GGUF, a safetensors file, a tokenizer.json, a
SentencePiece protobuf, texts for the tokenizers, templates with messages, and
a request per server endpoint. Run from the repository root (with ../shared
beside it, for the chat templates and config.json files it copies):

    python3 tools/make_fuzz_seeds.py
"""
import json
import os
import re
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
SHARED = os.path.join(ROOT, "..", "shared")


def write(harness, name, data):
    folder = os.path.join(CORPUS, harness)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


# --- GGUF: header, typed metadata, tensor table, aligned data --------------
UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64 = 4, 5, 6, 7, 8, 9, 10


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, v):
    if kind == UINT32:
        return struct.pack("<I", v)
    if kind == INT32:
        return struct.pack("<i", v)
    if kind == FLOAT32:
        return struct.pack("<f", v)
    if kind == BOOL:
        return struct.pack("<B", v)
    if kind == STRING:
        return gguf_string(v)
    elem, items = v
    return struct.pack("<IQ", elem, len(items)) + b"".join(gguf_value(elem, x) for x in items)


def gguf_file(metadata, tensors, alignment=32):
    """metadata: [(key, type, value)]; tensors: [(name, ggml_type, dims, bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, kind, v in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, v)
    offset = 0
    for name, ggml_type, dims, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        out += struct.pack("<IQ", ggml_type, offset)
        offset += (len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * (-len(out) % alignment)
    for _, _, _, data in tensors:
        out += data + b"\0" * (-len(data) % alignment)
    return out


def f32(n, scale=0.1):
    return struct.pack(f"<{n}f", *[scale * ((i * 7919) % 17 - 8) / 8 for i in range(n)])


def tiny_llama(dim=8, ffn=8, vocab=8, heads=2, kv_heads=1):
    head = dim // heads
    spm = ["<unk>", "<s>", "</s>", "\u2581a", "\u2581b", "a", "b", "<0x41>"][:vocab]
    metadata = [
        ("general.architecture", STRING, "llama"),
        ("general.alignment", UINT32, 32),
        ("llama.block_count", UINT32, 1),
        ("llama.embedding_length", UINT32, dim),
        ("llama.attention.head_count", UINT32, heads),
        ("llama.attention.head_count_kv", UINT32, kv_heads),
        ("llama.feed_forward_length", UINT32, ffn),
        ("llama.context_length", UINT32, 16),
        ("llama.attention.layer_norm_rms_epsilon", FLOAT32, 1e-5),
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, spm)),
        ("tokenizer.ggml.scores", ARRAY, (FLOAT32, [0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -4.0, 0.0])),
        ("tokenizer.ggml.token_type", ARRAY, (INT32, [2, 3, 3, 1, 1, 1, 1, 6])),
        ("tokenizer.ggml.bos_token_id", UINT32, 1),
        ("tokenizer.ggml.eos_token_id", UINT32, 2),
    ]
    F32 = 0
    tensors = [("token_embd.weight", F32, [dim, vocab], f32(dim * vocab)),
               ("output_norm.weight", F32, [dim], f32(dim, 1.0)),
               ("blk.0.attn_norm.weight", F32, [dim], f32(dim, 1.0)),
               ("blk.0.attn_q.weight", F32, [dim, dim], f32(dim * dim)),
               ("blk.0.attn_k.weight", F32, [dim, head * kv_heads], f32(dim * head * kv_heads)),
               ("blk.0.attn_v.weight", F32, [dim, head * kv_heads], f32(dim * head * kv_heads)),
               ("blk.0.attn_output.weight", F32, [dim, dim], f32(dim * dim)),
               ("blk.0.ffn_norm.weight", F32, [dim], f32(dim, 1.0)),
               ("blk.0.ffn_gate.weight", F32, [dim, ffn], f32(dim * ffn)),
               ("blk.0.ffn_up.weight", F32, [dim, ffn], f32(dim * ffn)),
               ("blk.0.ffn_down.weight", F32, [ffn, dim], f32(dim * ffn))]
    return metadata, tensors


def tiny_moe(arch, dim=8, ffn=8, vocab=8, heads=2, experts=4, used=2):
    """tiny_llama's layer as `arch`'s mixture of experts (qwen3moe: q/k norms; gpt-oss: sinks,
    biases, the FFN norm named post_attention_norm)."""
    metadata, tensors = tiny_llama(dim, ffn, vocab, heads, kv_heads=heads)
    metadata = [(k.replace("llama.", arch + ".") if k != "general.architecture" else k, t,
                 arch if k == "general.architecture" else v) for k, t, v in metadata]
    metadata += [(arch + ".expert_count", UINT32, experts), (arch + ".expert_used_count", UINT32, used),
                 (arch + ".expert_feed_forward_length", UINT32, ffn)]
    F32, head = 0, dim // heads
    tensors = [t for t in tensors if not t[0].startswith("blk.0.ffn_")]
    norm = "blk.0.post_attention_norm.weight" if arch == "gpt-oss" else "blk.0.ffn_norm.weight"
    tensors += [(norm, F32, [dim], f32(dim, 1.0)),
                ("blk.0.ffn_gate_inp.weight", F32, [dim, experts], f32(dim * experts)),
                ("blk.0.ffn_gate_exps.weight", F32, [dim, ffn, experts], f32(dim * ffn * experts)),
                ("blk.0.ffn_up_exps.weight", F32, [dim, ffn, experts], f32(dim * ffn * experts)),
                ("blk.0.ffn_down_exps.weight", F32, [ffn, dim, experts], f32(dim * ffn * experts))]
    if arch == "qwen3moe":
        tensors += [("blk.0.attn_q_norm.weight", F32, [head], f32(head, 1.0)),
                    ("blk.0.attn_k_norm.weight", F32, [head], f32(head, 1.0))]
    if arch == "gpt-oss":
        tensors += [("blk.0.attn_sinks.weight", F32, [heads], f32(heads)),
                    ("blk.0.ffn_gate_inp.bias", F32, [experts], f32(experts)),
                    ("blk.0.ffn_gate_exps.bias", F32, [ffn, experts], f32(ffn * experts)),
                    ("blk.0.ffn_up_exps.bias", F32, [ffn, experts], f32(ffn * experts)),
                    ("blk.0.ffn_down_exps.bias", F32, [dim, experts], f32(dim * experts))]
        tensors += [(f"blk.0.attn_{w}.bias", F32, [n], f32(n)) for w, n in (("q", dim), ("k", dim), ("v", dim),
                                                                           ("output", dim))]
    return metadata, tensors


def gguf_seeds():
    for arch in ("qwen3moe", "gpt-oss"):
        metadata, tensors = tiny_moe(arch)
        write("gguf", f"tiny_{arch}_f32.gguf", gguf_file(metadata, tensors))
    metadata, tensors = tiny_llama()
    write("gguf", "tiny_llama_f32.gguf", gguf_file(metadata, tensors))
    write("gguf", "tiny_llama_align1.gguf", gguf_file(
        [(k, t, 1 if k == "general.alignment" else v) for k, t, v in metadata], tensors, alignment=1))
    bpe = [
        ("general.architecture", STRING, "llama"),
        ("tokenizer.ggml.model", STRING, "gpt2"),
        ("tokenizer.ggml.pre", STRING, "llama-bpe"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, ["a", "b", "ab", "\u0120", "\u0120ab", "<|end|>"])),
        ("tokenizer.ggml.token_type", ARRAY, (INT32, [1, 1, 1, 1, 1, 3])),
        ("tokenizer.ggml.merges", ARRAY, (STRING, ["a b", "\u0120 ab"])),
        ("tokenizer.ggml.eos_token_id", UINT32, 5),
    ]
    write("gguf", "bpe_vocab_only.gguf", gguf_file(bpe, []))


# --- safetensors ------------------------------------------------------------
def safetensors_seeds():
    header = {"__metadata__": {"format": "pt"},
              "model.embed_tokens.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
              "model.norm.weight": {"dtype": "BF16", "shape": [2], "data_offsets": [16, 20]}}
    text = json.dumps(header).encode()
    write("safetensors", "two_tensors.safetensors", struct.pack("<Q", len(text)) + text + f32(4) + b"\x80\x3f\x80\x3f")
    # gpt-oss's experts as OpenAI releases them: MXFP4 codes [1 expert, 2 rows, 1 block, 16] and E8M0 scales [1, 2, 1].
    header = {"model.layers.0.mlp.experts.down_proj_blocks": {"dtype": "U8", "shape": [1, 2, 1, 16], "data_offsets": [0, 32]},
              "model.layers.0.mlp.experts.down_proj_scales": {"dtype": "U8", "shape": [1, 2, 1], "data_offsets": [32, 34]}}
    text = json.dumps(header).encode()
    write("safetensors", "mxfp4_blocks.safetensors", struct.pack("<Q", len(text)) + text + bytes(range(32)) + b"\x7f\x80")
    write("safetensors_index", "two_shards.json", json.dumps({
        "metadata": {"total_size": 20},
        "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                       "model.norm.weight": "model-00002-of-00002.safetensors"}}))


def hf_config_seeds():
    for model in ("llama3_gqa", "gemma3_swa_qknorm", "phi3_longrope", "qwen2_gqa_bias_tied", "qwen3_moe", "qwen2_moe",
                  "olmoe", "mixtral", "granite_moe", "gpt_oss", "gpt_oss_mxfp4", "qwen2_yarn"):
        with open(os.path.join(ROOT, "tests", "data", "hf", model, "config.json")) as f:
            write("hf_config", model + ".json", f.read())


# --- tokenizer files --------------------------------------------------------
def tokenizer_json_seeds():
    added = [{"id": 5, "content": "<|end|>", "special": True}]
    byte_level = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3, "\u0120ab": 4, "<|end|>": 5},
                            "merges": ["a b", "\u0120 ab"]},
                  "added_tokens": added,
                  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                      {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"},
                       "behavior": "Isolated"},
                      {"type": "ByteLevel", "add_prefix_space": False}]}}
    write("tokenizer_json", "byte_level.json", json.dumps(byte_level))
    fallback = {"model": {"type": "BPE", "byte_fallback": True,
                          "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x41>": 3, "\u2581": 4, "a": 5, "\u2581a": 6},
                          "merges": [["\u2581", "a"]]},
                "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                                   {"type": "Replace", "pattern": {"String": " "},
                                                                    "content": "\u2581"}]},
                "added_tokens": [{"id": 1, "content": "<s>", "special": True}]}
    write("tokenizer_json", "byte_fallback.json", json.dumps(fallback))


def proto_varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def proto_bytes(field, data):
    return proto_varint(field << 3 | 2) + proto_varint(len(data)) + data


def sentencepiece_seeds():
    # ModelProto { pieces = 1 { piece = 1, score = 2 (float), type = 3 }; trainer_spec = 2 { unk_id = 40,
    # bos_id = 41, eos_id = 42 }; normalizer_spec = 3 { add_dummy_prefix = 3 } }
    pieces = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3), ("\u2581a", -1.0, 1), ("a", -2.0, 1), ("<0x41>", 0.0, 6)]
    model = b""
    for text, score, kind in pieces:
        piece = proto_bytes(1, text.encode()) + proto_varint(2 << 3 | 5) + struct.pack("<f", score)
        piece += proto_varint(3 << 3) + proto_varint(kind)
        model += proto_bytes(1, piece)
    trainer = b"".join(proto_varint(field << 3) + proto_varint(id) for field, id in ((40, 0), (41, 1), (42, 2)))
    model += proto_bytes(2, trainer)
    model += proto_bytes(3, proto_varint(3 << 3) + proto_varint(1))
    write("sentencepiece_model", "tiny.model", model)


# --- tokenizers over real vocabularies: pick, flags, text --------------------
TEXTS = ["Hello world", " \u00e9t\u00e9 12345 'll", "\u4e2d\u6587 \U0001F600\n\n\t x", "<s>[CLS] ab</s>"]


def tokenize_seeds():
    for harness, n_vocabs in (("tokenize_spm", 3), ("tokenize_bpe", 8), ("tokenize_wordpiece", 1)):
        for pick in range(n_vocabs):
            text = TEXTS[pick % len(TEXTS)]
            write(harness, f"vocab{pick}.txt", bytes([pick, 3]) + text.encode())


# --- pre-tokenizers: a name's index (pre_tokenizer_names()), then the text ----
PRE_TEXTS = TEXTS + ["x  1234 abc12 99x \u0661\u0662", "HelloWorld \u4e2d\u6587English 'S \u0e20\u0e32\u0e29\u0e32"]


def pretokenize_seeds():
    names_cpp = open(os.path.join(ROOT, "src", "tokenizer", "pretokenizer_names.cpp"), encoding="utf-8").read()
    names = re.findall(r'\{"([^"]+)", ', names_cpp[names_cpp.index("kNames[]"):])
    for pick in range(0, len(names), 7):  # names in steps, then the custom splits with their texts
        write("pretokenize", f"name{pick}.txt", bytes([pick]) + PRE_TEXTS[pick % len(PRE_TEXTS)].encode())
    for name, text in (("kimi-k2", PRE_TEXTS[-1]), ("afmoe", PRE_TEXTS[-2])):
        write("pretokenize", f"name{names.index(name)}.txt", bytes([names.index(name)]) + text.encode())


# --- chat templates: template, NUL, messages JSON ----------------------------
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "2+2?"}]


def jinja_seeds():
    for name in ("Qwen-Qwen2.5-7B-Instruct", "LFM2-8B-A1B", "llama-cpp-rwkv-world"):
        with open(os.path.join(SHARED, "chat-templates", name + ".jinja")) as f:
            template = f.read()
        write("jinja", name + ".txt", template + "\0" + json.dumps({"messages": MESSAGES, "add_generation_prompt": True}))
    features = ("{%- set ns = namespace(n=0) -%}{% macro m(x, y=2) %}{{ x * y }}{% endmacro %}"
                "{% for msg in messages if msg.role != 'system' %}{% set ns.n = ns.n + 1 %}"
                "{{ loop.index }}:{{ msg['content'] | trim | upper }}{{ m(loop.length) }}"
                "{% if not loop.last %}, {% endif %}{% endfor %}{{ ns.n }}"
                "{{ messages | map(attribute='role') | join('|') }}{{ tools | tojson }}"
                "{{ raise_exception('no') if false else strftime_now('%Y') }}")
    write("jinja", "features.txt", features + "\0" + json.dumps({"messages": MESSAGES, "tools": [{"type": "function"}]}))


# --- server requests: endpoint byte, body ------------------------------------
def server_seeds():
    bodies = [
        (0, {"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0.7, "top_p": 0.9, "stop": ["."],
             "logprobs": 2, "seed": 1, "n": 2, "stream": True, "stream_options": {"include_usage": True}}),
        (0, {"model": "stories", "prompt": [[1, 403, 407], "text"], "echo": True, "stop_token_ids": [2]}),
        (1, {"messages": MESSAGES, "max_completion_tokens": 4, "logprobs": True, "top_logprobs": 3,
             "chat_template_kwargs": {"enable_thinking": False}}),
        (2, {"prompt": "Once upon a time", "add_special_tokens": True, "return_token_strs": True}),
        (2, {"messages": MESSAGES}),
        (3, {"tokens": [1, 403, 407, 261]}),
        (4, {"model": "stories", "max_tokens": 8, "system": [{"type": "text", "text": "Be brief."}],
             "messages": [{"role": "user", "content": "Weather?"},
                          {"role": "assistant", "content": [
                              {"type": "thinking", "thinking": "Ask.", "signature": ""},
                              {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {"city": "Oslo"}}]},
                          {"role": "user", "content": [
                              {"type": "tool_result", "tool_use_id": "toolu_1", "content": "5 C"},
                              {"type": "text", "text": "Thanks"}]}],
             "tools": [{"name": "w", "description": "weather", "input_schema": {
                 "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
             "tool_choice": {"type": "any", "disable_parallel_tool_use": True}, "temperature": 0.5, "top_k": 4,
             "stop_sequences": ["."], "stream": True, "thinking": {"type": "enabled", "budget_tokens": 1024},
             "metadata": {"user_id": "u"}}),
        (5, {"system": "Be brief.", "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
             "tools": [{"name": "w", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "w"}}),
        (6, {"model": "stories", "instructions": "Be brief.", "max_output_tokens": 8, "input": [
                {"role": "developer", "content": "Use tools."},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
                {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Ask."}]},
                {"type": "function_call", "call_id": "call_1", "name": "w", "arguments": "{\"city\": \"Oslo\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "5 C"}],
             "tools": [{"type": "function", "name": "w", "description": "weather", "strict": True, "parameters": {
                 "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
             "tool_choice": {"type": "function", "name": "w"}, "parallel_tool_calls": False, "temperature": 0.5,
             "top_p": 0.9, "stream": True, "store": False, "reasoning": {"effort": "low"}, "metadata": {"k": "v"}}),
        (6, {"input": "Hi", "text": {"format": {"type": "json_schema", "name": "p", "strict": True,
                                                 "schema": {"type": "object", "properties": {"x": {"type": "integer"}}}}},
             "previous_response_id": "resp_1", "user": "u"}),
    ]
    for i, (endpoint, body) in enumerate(bodies):
        write("server_requests", f"request{i}.json", bytes([endpoint]) + json.dumps(body).encode())


if __name__ == "__main__":
    gguf_seeds()
    safetensors_seeds()
    hf_config_seeds()
    tokenizer_json_seeds()
    sentencepiece_seeds()
    tokenize_seeds()
    pretokenize_seeds()
    jinja_seeds()
    server_seeds()

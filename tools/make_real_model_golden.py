#!/usr/bin/env python3
"""Makes tests/data/real/<model>.json: what Hugging Face transformers computes
for the real GGUF models (scripts/fetch-models.sh) on a committed English text,
tests/data/real/text.txt, the opening of the GPL-3 (verbatim, as it allows).

transformers loads each GGUF itself (its own GGUF reader dequantizes the
weights to float, and it builds the tokenizer from the GGUF's vocabulary), so
nothing here comes from skiff. The text is tokenized with that tokenizer, BOS
prepended where the GGUF says add_bos_token (Gemma: yes, Qwen: no), and cut to
N_CTX tokens (512; 768 for gemma3-270m-768, past Gemma 3's sliding window); one
teacher-forced forward pass over them gives, per position,
the top-1 next token, the top1-top2 logit margin and the log-probability of
the actual next token, and the perplexity as llama-perplexity scores one chunk
of N_CTX tokens: the logits at positions N_CTX/2 .. N_CTX-2 predicting tokens
N_CTX/2+1 .. N_CTX-1, PPL = exp(mean NLL).

Run by hand in the reference env (scripts/setup-reference-env.sh):
    ${SKIFF_REFENV:-/work/refenv}/bin/python tools/make_real_model_golden.py [MODEL...]
"""
import argparse
import hashlib
import json
import math
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local; never ask a hub

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer
import gguf

N_CTX = 512
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "tests", "data", "real")
CACHE = os.environ.get("SKIFF_MODELS_CACHE", os.path.expanduser("~/.cache/skiff/models"))

# name -> (GGUF file in the cache, forward dtype, tokens). float64 where its
# weights fit in memory beside everything else (about 8 bytes a parameter);
# 1.5B in float32. gemma3-270m-768 reaches past the model's 512-token sliding
# window, which then hides the oldest keys from its local layers.
MODELS = {
    "qwen2.5-coder-0.5b": ("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", torch.float64, N_CTX),
    "qwen2.5-coder-1.5b": ("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", torch.float32, N_CTX),
    "gemma3-270m": ("gemma-3-270m-q4_k_m.gguf", torch.float64, N_CTX),
    "gemma3-270m-768": ("gemma-3-270m-q4_k_m.gguf", torch.float64, 768),
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def g5(x):
    return float(f"{float(x):.5g}")


def gguf_field(reader, key, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.parts[f.data[0]].tolist()[0]


def make(name, text):
    file, dtype, n_ctx = MODELS[name]
    path = os.path.join(CACHE, file)
    reader = gguf.GGUFReader(path)
    add_bos = bool(gguf_field(reader, "tokenizer.ggml.add_bos_token", False))
    bos = gguf_field(reader, "tokenizer.ggml.bos_token_id")
    del reader

    tok = AutoTokenizer.from_pretrained(CACHE, gguf_file=file)
    ids = tok.encode(text, add_special_tokens=False)
    if add_bos:
        ids = [bos] + ids
    assert len(ids) >= n_ctx, f"{name}: text gives only {len(ids)} tokens"
    ids = ids[:n_ctx]

    model = AutoModelForCausalLM.from_pretrained(CACHE, gguf_file=file, dtype=torch.float32,
                                                 attn_implementation="eager")
    model = model.to(dtype).eval()
    print(f"{name}: {model.__class__.__name__}, {dtype}, config:\n{model.config}", flush=True)
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()  # [n_ctx, vocab]
    logp = torch.log_softmax(logits, dim=-1)
    top2 = logits.topk(2, dim=-1)
    nxt = torch.tensor(ids[1:])
    next_logprob = logp[:-1].gather(1, nxt[:, None])[:, 0]     # log p(ids[p+1] | ids[..p])
    first = n_ctx // 2
    nll = -next_logprob[first:]                                 # positions first .. n_ctx-2
    ppl = math.exp(float(nll.mean()))
    ref = {
        "generator": "tools/make_real_model_golden.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "gguf": file,
        "gguf_sha256": sha256(path),
        "model_class": model.__class__.__name__,
        "dtype": str(dtype).replace("torch.", ""),
        "text": "tests/data/real/text.txt",
        "add_bos": add_bos,
        "n_ctx": n_ctx,
        "token_ids": ids,
        # per position p in 0..n_ctx-1: argmax of the logits at p, and its margin
        "top1": top2.indices[:, 0].tolist(),
        "top1_top2_margin": [g5(v) for v in (top2.values[:, 0] - top2.values[:, 1])],
        # per position p in 0..n_ctx-2: log-probability of token_ids[p+1]
        "next_logprob": [g5(v) for v in next_logprob],
        "ppl_first_position": first,
        "ppl_n_scored": int(nll.numel()),
        "ppl": g5(ppl),
    }
    out = os.path.join(OUT_DIR, f"{name}.json")
    with open(out, "w") as f:
        json.dump(ref, f, separators=(",", ":"))
        f.write("\n")
    acc = float((top2.indices[:-1, 0] == nxt).double().mean())
    print(f"{name}: {len(ids)} tokens, ppl {ppl:.4f} over {nll.numel()}, top-1 accuracy {acc:.3f}, "
          f"min margin {float((top2.values[:, 0] - top2.values[:, 1]).min()):.2e}, "
          f"{os.path.getsize(out)} bytes -> {out}", flush=True)
    del model, logits, logp


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help=f"some of {list(MODELS)} (default: all)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with open(os.path.join(OUT_DIR, "text.txt"), encoding="utf-8") as f:
        text = f.read()
    for name in args.models or list(MODELS):
        make(name, text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Makes tests/data/hf/<name>/: tiny random Llama-family checkpoints written by
Hugging Face transformers itself (config.json + model.safetensors) and the
logits transformers computes for them (reference.json).

Run by hand (needs torch, transformers, safetensors, numpy):
    python3 tools/make_hf_golden.py [--out tests/data/hf]
The tests only read the committed files; Python is not needed to run them.

Each model is float32 with weights drawn from N(0, 0.2) (norm weights around 1)
so that logits differ clearly between tokens and a RoPE, head-grouping or
weight-layout bug moves them by far more than the tolerance. The reference
forward pass runs in float64 on those same float32 weights.
"""
import argparse
import json
import math
import os
import shutil

import numpy as np
import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

N_TOKENS = 96    # longer than original_max_position_embeddings, so scaled frequencies matter
N_LOGITS = 4     # full logits for the last N_LOGITS positions
WEIGHT_STD = 0.2

# name -> (config class, model class, config kwargs)
def configs():
    out = {}
    # a: GQA 8/2, untied head, theta 5e5, Llama-3 scaling. head_dim 16 (explicit,
    # not hidden/heads) so the 8 rotated pairs have wavelengths on both sides of
    # and inside the [orig/high, orig/low] = [16, 64] band: kept, blended, scaled.
    out["llama3_gqa"] = (LlamaConfig, LlamaForCausalLM, dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=16,
        vocab_size=160, max_position_embeddings=256, rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        rope_theta=500000.0,
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 64}))
    # b: MHA, tied embeddings, linear scaling x2, head_dim 12 != 32/4.
    out["llama_mha_tied_linear"] = (LlamaConfig, LlamaForCausalLM, dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, head_dim=12,
        vocab_size=256, max_position_embeddings=256, rms_norm_eps=1e-6,
        tie_word_embeddings=True, rope_theta=10000.0,
        rope_scaling={"rope_type": "linear", "factor": 2.0}))
    # c: Mistral with GQA 4/2, no sliding window.
    if hasattr(transformers, "MistralForCausalLM"):
        out["mistral_gqa"] = (transformers.MistralConfig, transformers.MistralForCausalLM, dict(
            hidden_size=32, intermediate_size=80, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2,
            vocab_size=200, max_position_embeddings=256, rms_norm_eps=1e-5,
            tie_word_embeddings=False, rope_theta=1000000.0, sliding_window=None))
    return out


def make_config(cls, kwargs):
    kwargs = dict(kwargs)
    try:
        return cls(**kwargs)
    except TypeError:
        # transformers >= 5 names these rope_parameters; older ones rope_scaling.
        params = dict(kwargs.pop("rope_scaling", None) or {"rope_type": "default"})
        params["rope_theta"] = kwargs.pop("rope_theta")
        return cls(rope_parameters=params, **kwargs)


def build(name, cfg_cls, model_cls, kwargs, seed, out_dir):
    torch.manual_seed(seed)
    config = make_config(cfg_cls, kwargs)
    config._attn_implementation = "eager"
    model = model_cls(config).float().eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            else:
                p.copy_(WEIGHT_STD * torch.randn_like(p))

    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(d, safe_serialization=True)
    for f in os.listdir(d):  # keep config.json and model.safetensors only
        if f not in ("config.json", "model.safetensors"):
            os.remove(os.path.join(d, f))

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, config.vocab_size, size=N_TOKENS).tolist()
    model = model.double()
    with torch.no_grad():
        logits = model(torch.tensor([ids], dtype=torch.long)).logits[0]  # [N_TOKENS, vocab]
    ref = {
        "generator": "tools/make_hf_golden.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "model_class": model_cls.__name__,
        "seed": seed,
        "token_ids": ids,
        "logits_positions": list(range(N_TOKENS - N_LOGITS, N_TOKENS)),
        # float32-rounded float64 logits, printed with 9 significant digits.
        "logits": [[float(f"{v:.9g}") for v in np.float32(row.numpy())]
                   for row in logits[N_TOKENS - N_LOGITS:]],
        "argmax": logits.argmax(dim=-1).tolist(),
    }
    # Margin between best and second-best logit at each position: if tiny, an
    # argmax check could flip on rounding alone.
    top2 = logits.topk(2, dim=-1).values
    margin = float((top2[:, 0] - top2[:, 1]).min())
    with open(os.path.join(d, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
        f.write("\n")
    spread = float(logits[-1].std())
    print(f"{name}: vocab {config.vocab_size}, last-row logit std {spread:.3f}, "
          f"min top-2 margin {margin:.2e}, "
          f"{os.path.getsize(os.path.join(d, 'model.safetensors'))} bytes of weights")
    return margin


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "hf"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for seed, (name, (cfg_cls, model_cls, kwargs)) in enumerate(configs().items()):
        build(name, cfg_cls, model_cls, kwargs, 1000 + seed, args.out)


if __name__ == "__main__":
    main()

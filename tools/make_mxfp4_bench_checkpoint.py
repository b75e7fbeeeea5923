#!/usr/bin/env python3
"""Writes a gpt-oss-20b-shaped Hugging Face checkpoint cut to a few layers,
its experts as OpenAI releases them (MXFP4 `*_blocks` with random codes and
`*_scales` near 2^-7, under quantization_config {"quant_method": "mxfp4"}),
the rest BF16: the input of docs/benchmarks.md's HF gpt-oss figures (memory
and speed of loading such a directory against its GGUF conversion). Not a
golden file: nothing is compared against it.

    ${SKIFF_REFENV:-/work/refenv}/bin/python tools/make_mxfp4_bench_checkpoint.py OUT_DIR [--layers 3]
"""
import argparse
import json
import os

import numpy as np
import torch
from safetensors.torch import save_file

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, EXPERTS, FFN, VOCAB = 2880, 64, 8, 64, 32, 2880, 8192


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    torch.manual_seed(0)

    def bf16(*shape):
        return (0.02 * torch.randn(*shape)).to(torch.bfloat16)

    def ones(n):
        return torch.ones(n, dtype=torch.bfloat16)

    t = {"model.embed_tokens.weight": bf16(VOCAB, HIDDEN), "lm_head.weight": bf16(VOCAB, HIDDEN),
         "model.norm.weight": ones(HIDDEN)}
    for layer in range(args.layers):
        p = f"model.layers.{layer}."
        t.update({p + "input_layernorm.weight": ones(HIDDEN), p + "post_attention_layernorm.weight": ones(HIDDEN),
                  p + "self_attn.sinks": bf16(HEADS), p + "mlp.router.weight": bf16(EXPERTS, HIDDEN),
                  p + "mlp.router.bias": bf16(EXPERTS), p + "mlp.experts.gate_up_proj_bias": bf16(EXPERTS, 2 * FFN),
                  p + "mlp.experts.down_proj_bias": bf16(EXPERTS, HIDDEN)})
        for name, rows, cols in (("q", HEADS * HEAD_DIM, HIDDEN), ("k", KV_HEADS * HEAD_DIM, HIDDEN),
                                 ("v", KV_HEADS * HEAD_DIM, HIDDEN), ("o", HIDDEN, HEADS * HEAD_DIM)):
            t[p + f"self_attn.{name}_proj.weight"] = bf16(rows, cols)
            t[p + f"self_attn.{name}_proj.bias"] = bf16(rows)
        for name, rows, cols in (("gate_up_proj", 2 * FFN, HIDDEN), ("down_proj", HIDDEN, FFN)):
            shape = (EXPERTS, rows, cols // 32)
            t[p + f"mlp.experts.{name}_blocks"] = torch.from_numpy(rng.integers(0, 256, shape + (16,), dtype=np.uint8))
            t[p + f"mlp.experts.{name}_scales"] = torch.from_numpy(rng.integers(118, 123, shape, dtype=np.uint8))
    save_file(t, os.path.join(args.out, "model.safetensors"), metadata={"format": "pt"})
    config = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": HIDDEN,
              "intermediate_size": FFN, "num_hidden_layers": args.layers, "num_attention_heads": HEADS,
              "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM, "num_local_experts": EXPERTS,
              "num_experts_per_tok": 4, "vocab_size": VOCAB, "rms_norm_eps": 1e-5, "sliding_window": 128,
              "layer_types": [("sliding_attention", "full_attention")[i % 2] for i in range(args.layers)],
              "max_position_embeddings": 131072, "rope_theta": 150000, "tie_word_embeddings": False,
              "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                               "truncate": False, "original_max_position_embeddings": 4096},
              "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [
                  "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


if __name__ == "__main__":
    main()

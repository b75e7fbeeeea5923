#!/usr/bin/env python3
"""Makes tests/data/hf/gpt_oss_mxfp4/: a tiny random GptOssForCausalLM whose
experts are stored as OpenAI's gpt-oss checkpoints store them, already
quantized to MXFP4 (config.json's quantization_config {"quant_method": "mxfp4"}):
per matrix `mlp.experts.{gate_up,down}_proj_blocks` (U8 [experts, rows, cols/32, 16],
two E2M1 codes a byte, element 2i in the low nibble of byte i) and `..._scales`
(U8 [experts, rows, cols/32], E8M0: 2^(s - 127)); rows are the outputs (W·x),
for gate_up_proj gate and up interleaved (rows 0, 2, 4, ... gate; 1, 3, 5, ... up).

The quantization is this script's own (numpy, nearest E2M1 code under the
OCP scale floor(log2 max|x|) - 2); the reference does not depend on it: the
directory is read back by transformers itself (from_pretrained dequantizes
MXFP4 on a CPU without Triton), its expert weights must equal this script's
dequantization exactly, and reference.json holds that model's float64
forward (make_hf_golden.write_reference). expert_check.safetensors keeps
transformers' dequantized float32 weights of one expert (layer 1, expert
EXPERT_CHECKED) as its x·W tensors: gate_up_proj [hidden, 2·intermediate],
down_proj [intermediate, hidden], for a bit-exact test of a loader's repacking.

Run by hand in the reference env (scripts/setup-reference-env.sh):
    ${SKIFF_REFENV:-/work/refenv}/bin/python tools/make_hf_mxfp4_golden.py [--out tests/data/hf]
"""
import argparse
import json
import os

import numpy as np
import torch
import transformers
from safetensors.numpy import load_file, save_file

import make_hf_golden as golden

NAME = "gpt_oss_mxfp4"
SEED = 2000
EXPERT_CHECKED = 11
# E2M1 code -> value, as the OCP MX spec (and transformers' FP4_VALUES) numbers them.
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])
# The published checkpoints' list: what stays in float.
NOT_CONVERTED = ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]

# 16 experts, 4 per token as gpt-oss-20b routes (32, 4); hidden 64 and
# intermediate 96 are whole blocks of 32 with 2 and 3 blocks a row, and no
# transposition of one expert tensor fits the other's shape.
CONFIG = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
              vocab_size=240, max_position_embeddings=131072, rms_norm_eps=1e-6, rope_theta=1000000.0,
              intermediate_size=96, num_local_experts=16, num_experts_per_tok=4, sliding_window=32,
              layer_types=["sliding_attention", "full_attention"], tie_word_embeddings=False)


def quantize_mxfp4(w):
    """w [..., rows, cols] (cols a multiple of 32) -> (blocks U8 [..., rows, cols/32, 16], scales U8 [..., rows, cols/32])."""
    x = w.reshape(*w.shape[:-1], w.shape[-1] // 32, 32).astype(np.float64)
    amax = np.abs(x).max(axis=-1, keepdims=True)
    exponent = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - 2, -127)
    exponent = np.clip(exponent, -127, 127)
    scaled = x / np.exp2(exponent)
    codes = np.abs(scaled[..., None] - E2M1).argmin(axis=-1).astype(np.uint8)  # nearest, first of ties
    blocks = codes[..., 0::2] | (codes[..., 1::2] << 4)
    return blocks.astype(np.uint8), (exponent[..., 0] + 127).astype(np.uint8)


def dequantize_mxfp4(blocks, scales):
    """The inverse layout: [..., rows, cols] float32."""
    codes = np.stack([blocks & 0x0F, blocks >> 4], axis=-1).reshape(*blocks.shape[:-1], 32)
    values = E2M1[codes] * np.exp2(scales.astype(np.float64) - 127)[..., None]
    return values.reshape(*values.shape[:-2], -1).astype(np.float32)


def write_mxfp4_checkpoint(d):
    """Rewrites d's float experts as _blocks/_scales; returns their dequantized x·W tensors by name."""
    path = os.path.join(d, "model.safetensors")
    tensors = load_file(path)
    dequantized = {}
    for name in [n for n in tensors if n.endswith(("mlp.experts.gate_up_proj", "mlp.experts.down_proj"))]:
        w = tensors.pop(name)                  # x·W: [experts, in, out]
        blocks, scales = quantize_mxfp4(np.ascontiguousarray(w.transpose(0, 2, 1)))  # rows = outputs
        tensors[name + "_blocks"], tensors[name + "_scales"] = blocks, scales
        dequantized[name] = np.ascontiguousarray(dequantize_mxfp4(blocks, scales).transpose(0, 2, 1))
    save_file(tensors, path, metadata={"format": "pt"})
    with open(os.path.join(d, "config.json")) as f:
        config = json.load(f)
    config["quantization_config"] = {"modules_to_not_convert": NOT_CONVERTED, "quant_method": "mxfp4"}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    return dequantized


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "hf"))
    args = ap.parse_args()
    d = os.path.join(args.out, NAME)
    t = transformers
    model = golden.random_model(NAME, t.GptOssConfig, t.GptOssForCausalLM, CONFIG, SEED)
    golden.save_checkpoint(model, d)
    ours = write_mxfp4_checkpoint(d)

    # transformers reads the blocks back; its experts must be exactly our dequantization.
    loaded = t.GptOssForCausalLM.from_pretrained(
        d, quantization_config=t.Mxfp4Config(dequantize=True), dtype=torch.float32)
    loaded.config._attn_implementation = "eager"
    loaded.config._experts_implementation = "eager"
    state = loaded.state_dict()
    for name, w in ours.items():
        got = state[name].float().numpy()
        assert got.shape == w.shape and np.array_equal(got, w), f"{name}: transformers dequantizes otherwise"
    experts = "model.layers.1.mlp.experts."
    save_file({p: np.ascontiguousarray(state[experts + p][EXPERT_CHECKED].float().numpy())
               for p in ("gate_up_proj", "down_proj")},
              os.path.join(d, "expert_check.safetensors"),
              metadata={"checked": f"layer 1, expert {EXPERT_CHECKED}"})  # one key: safetensors orders them at random
    golden.write_reference(NAME, loaded.eval(), SEED, d)
    # How far MXFP4 moved the logits from the float weights it was made from (for the record).
    ids = torch.tensor([np.random.default_rng(SEED).integers(0, CONFIG["vocab_size"], golden.N_TOKENS).tolist()])
    with torch.no_grad():
        moved = (model.double()(ids).logits - loaded.double()(ids).logits).abs().max()
    print(f"  float experts instead of MXFP4: max |logit change| {float(moved):.3f}")


if __name__ == "__main__":
    main()

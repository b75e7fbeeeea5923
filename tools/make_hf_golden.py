#!/usr/bin/env python3
"""Makes tests/data/hf/<name>/: tiny random checkpoints written by Hugging Face
transformers itself (config.json + model.safetensors) and the logits
transformers computes for them (reference.json): Llama and Mistral, and Qwen2,
Qwen3, Gemma 2, Gemma 3 (text), Phi-3 (plain and LongRoPE), Mistral with a
sliding window, Qwen2 with YaRN RoPE; mixtures of experts: Qwen3-MoE, Qwen2-MoE, OLMoE, Mixtral,
Granite-MoE and gpt-oss. For the features a model is there to test (soft caps, sliding
windows, RoPE variants) it prints how far the logits move without each one.

Run by hand in the reference env (scripts/setup-reference-env.sh):
    ${SKIFF_REFENV:-/work/refenv}/bin/python tools/make_hf_golden.py [--out tests/data/hf] [NAME...]
The tests only read the committed files; Python is not needed to run them.

Each model is float32 with weights drawn from N(0, 0.2) (norm weights around 1)
so that logits differ clearly between tokens and a RoPE, head-grouping or
weight-layout bug moves them by far more than the tolerance. The reference
forward pass runs in float64 on those same float32 weights.
"""
import argparse
import copy
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
GEMMA2_ATTN_CAP = 4.0    # Gemma 2's real caps are 50 and 30: too loose to matter here
GEMMA2_FINAL_CAP = 3.0

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
    out.update(new_arch_configs())
    out.update(moe_configs())
    # Qwen2 with YaRN, as Qwen2.5 extends its context (factor 4 over 32
    # positions; max 128 = 4 x 32). head_dim 16 and theta 1e4 put the blend's
    # bounds at pairs 0 and 2: pair 0 kept, pair 1 half slowed, 2..7 slowed
    # by 4; cos and sin x (0.1 ln 4 + 1). Last, so the others keep their seeds.
    out["qwen2_yarn"] = (transformers.Qwen2Config, transformers.Qwen2ForCausalLM, dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        vocab_size=240, max_position_embeddings=128, rms_norm_eps=1e-6,
        tie_word_embeddings=False, rope_theta=10000.0,
        rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}))
    # gpt-oss's attention alone: gpt_oss with every expert tensor zero
    # (ZEROED), so each FFN adds exactly 0 and an engine's attention (sinks,
    # o bias, YaRN without rounding, the window) can be checked before its MoE.
    if hasattr(transformers, "GptOssForCausalLM"):
        out["gpt_oss_attention"] = moe_configs()["gpt_oss"]
    return out


# Parameters set to zero after the random draw, by name fragment.
ZEROED = {"gpt_oss_attention": ("mlp.experts.",)}


# Mixtures of experts (issue 43): 8 experts of 2 per token (Mixtral 4), each
# family's router as transformers writes it. The sequence routes its tokens
# over every expert, so a gather or routing bug moves many logits. Where a
# family stacks its experts in one tensor (Granite, gpt-oss), 2 x the expert
# size differs from the hidden size, so no transposition fits its shape.
def moe_configs():
    t = transformers
    out = {}
    moe = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
               vocab_size=240, max_position_embeddings=256, rms_norm_eps=1e-6, rope_theta=1000000.0)
    # Qwen3-MoE: softmax over all experts, top-2 renormalised; q/k norms; the
    # first layer dense (mlp_only_layers), as a mixed dense/sparse stack.
    if hasattr(t, "Qwen3MoeForCausalLM"):
        out["qwen3_moe"] = (t.Qwen3MoeConfig, t.Qwen3MoeForCausalLM, dict(
            moe, head_dim=16, intermediate_size=48, moe_intermediate_size=16, num_experts=8,
            num_experts_per_tok=2, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[0],
            tie_word_embeddings=False))
    # Qwen2-MoE: top-2 not renormalised, plus a shared expert behind a sigmoid gate; q/k/v biases.
    if hasattr(t, "Qwen2MoeForCausalLM"):
        out["qwen2_moe"] = (t.Qwen2MoeConfig, t.Qwen2MoeForCausalLM, dict(
            moe, intermediate_size=48, moe_intermediate_size=16, shared_expert_intermediate_size=24,
            num_experts=8, num_experts_per_tok=2, norm_topk_prob=False, decoder_sparse_step=1,
            mlp_only_layers=[], tie_word_embeddings=False))
    # OLMoE: q/k norms over the whole projection, top-2 not renormalised.
    if hasattr(t, "OlmoeForCausalLM"):
        out["olmoe"] = (t.OlmoeConfig, t.OlmoeForCausalLM, dict(
            moe, intermediate_size=16, num_experts=8, num_experts_per_tok=2, norm_topk_prob=False,
            tie_word_embeddings=False, pad_token_id=1, eos_token_id=2))
    # Mixtral: softmax over the top-2 router logits.
    if hasattr(t, "MixtralForCausalLM"):
        out["mixtral"] = (t.MixtralConfig, t.MixtralForCausalLM, dict(
            moe, intermediate_size=16, num_local_experts=4, num_experts_per_tok=2,
            tie_word_embeddings=False, sliding_window=None))
    # Granite-MoE: Mixtral's router, and Granite's multipliers on the
    # embeddings, the residuals, the attention scale and the logits.
    if hasattr(t, "GraniteMoeForCausalLM"):
        out["granite_moe"] = (t.GraniteMoeConfig, t.GraniteMoeForCausalLM, dict(
            moe, intermediate_size=24, num_local_experts=8, num_experts_per_tok=2,
            embedding_multiplier=6.0, residual_multiplier=0.5, attention_multiplier=0.1, logits_scaling=4.0,
            tie_word_embeddings=True))
    # gpt-oss: attention sinks, sliding (even) and full layers, experts with
    # biases and a clamped SwiGLU, softmax over the top-k router logits; its
    # default YaRN RoPE (factor 32 over 4,096 positions).
    if hasattr(t, "GptOssForCausalLM"):
        out["gpt_oss"] = (t.GptOssConfig, t.GptOssForCausalLM, dict(
            moe, max_position_embeddings=131072, head_dim=16, intermediate_size=24, num_local_experts=8,
            num_experts_per_tok=2,
            sliding_window=32, layer_types=["sliding_attention", "full_attention"],
            tie_word_embeddings=False))
    return out


# Models of the architectures after Llama. Each sequence (N_TOKENS) is longer
# than every sliding window, so windowed layers see fewer keys than full ones.
def new_arch_configs():
    t = transformers
    out = {}
    # Qwen2: q/k/v biases (no o bias), GQA 4/2, tied embeddings.
    out["qwen2_gqa_bias_tied"] = (t.Qwen2Config, t.Qwen2ForCausalLM, dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2,
        vocab_size=240, max_position_embeddings=256, rms_norm_eps=1e-6,
        tie_word_embeddings=True, rope_theta=1000000.0))
    # Qwen3: RMSNorm over each head's q and k before RoPE, explicit head_dim 16
    # != 32/4, no biases, GQA 4/2, tied.
    out["qwen3_qknorm"] = (t.Qwen3Config, t.Qwen3ForCausalLM, dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        vocab_size=240, max_position_embeddings=256, rms_norm_eps=1e-6,
        tie_word_embeddings=True, rope_theta=1000000.0))
    # Gemma 2: 4 layers alternating sliding (even) / full (odd), window 32;
    # attention scale query_pre_attn_scalar^-0.5 with 24 != head_dim 16; soft
    # caps small enough to bite on these logits (see ABLATIONS).
    out["gemma2_softcap_swa"] = (t.Gemma2Config, t.Gemma2ForCausalLM, dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        query_pre_attn_scalar=24, sliding_window=32,
        attn_logit_softcapping=GEMMA2_ATTN_CAP, final_logit_softcapping=GEMMA2_FINAL_CAP,
        vocab_size=256, max_position_embeddings=256, rms_norm_eps=1e-6,
        tie_word_embeddings=True, rope_theta=10000.0))
    # Gemma 3 (text only): q/k norms, 6 layers, every 3rd full (S S F S S F),
    # query_pre_attn_scalar 20 != head_dim 16 (as in Gemma 3 27B: 168 vs 128),
    # window 32, local RoPE base 1e4 on sliding layers and 1e6 on full ones.
    out["gemma3_swa_qknorm"] = (t.Gemma3TextConfig, t.Gemma3ForCausalLM, dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=6,
        num_attention_heads=4, num_key_value_heads=1, head_dim=16,
        query_pre_attn_scalar=20, sliding_window=32, sliding_window_pattern=3,
        vocab_size=256, max_position_embeddings=256, rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}))
    # Phi-3: fused qkv_proj and gate_up_proj. a: plain, MHA like Phi-3-mini.
    phi3 = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, vocab_size=200, rms_norm_eps=1e-5,
                tie_word_embeddings=False, pad_token_id=None, eos_token_id=2)
    out["phi3_plain"] = (t.Phi3Config, t.Phi3ForCausalLM, dict(
        phi3, num_key_value_heads=4, max_position_embeddings=256,
        original_max_position_embeddings=256, rope_theta=10000.0))
    # b: LongRoPE, GQA 4/2: 96 tokens > original 32, so the long factors apply
    # (to every position of a 96-token forward), and max 256 / original 32 = 8
    # gives cos and sin the factor sqrt(1 + ln 8 / ln 32).
    half = 16 // 2  # head_dim 64/4 = 16: one factor per rotated pair
    out["phi3_longrope"] = (t.Phi3Config, t.Phi3ForCausalLM, dict(
        phi3, num_key_value_heads=2, max_position_embeddings=256,
        original_max_position_embeddings=32, rope_theta=10000.0,
        rope_scaling={"rope_type": "longrope",
                      "short_factor": [round(1.0 + 0.05 * i, 4) for i in range(half)],
                      "long_factor": [round(1.0 + 1.5 * i, 4) for i in range(half)],
                      "original_max_position_embeddings": 32}))
    # Mistral with a sliding window of 24 on every layer.
    out["mistral_swa"] = (t.MistralConfig, t.MistralForCausalLM, dict(
        hidden_size=32, intermediate_size=80, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2,
        vocab_size=200, max_position_embeddings=256, rms_norm_eps=1e-5,
        tie_word_embeddings=False, rope_theta=1000000.0, sliding_window=24))
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


def random_model(name, cfg_cls, model_cls, kwargs, seed):
    """The model `name` with its random float32 weights (drawn after seeding torch with `seed`)."""
    torch.manual_seed(seed)
    config = make_config(cfg_cls, kwargs)
    config._attn_implementation = "eager"
    if hasattr(config, "_experts_implementation"):
        config._experts_implementation = "eager"  # the grouped product takes no float64
    model = model_cls(config).float().eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight"):
                # Gemma's norms scale by (1 + w): centre w on 0 so the scale is near 1 there too.
                centre = 0.0 if config.model_type.startswith("gemma") else 1.0
                p.copy_(centre + 0.3 * torch.randn_like(p))
            else:
                p.copy_(WEIGHT_STD * torch.randn_like(p))
            if any(part in pname for part in ZEROED.get(name, ())):
                p.zero_()
    return model


def save_checkpoint(model, d):
    """config.json and model.safetensors as save_pretrained writes them, nothing else."""
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(d, safe_serialization=True)
    for f in os.listdir(d):  # keep config.json and model.safetensors only
        if f not in ("config.json", "model.safetensors"):
            os.remove(os.path.join(d, f))


def write_reference(name, model, seed, d):
    """reference.json in d: the float64 forward of `model` (cast to float64 here) on
    N_TOKENS ids drawn from `seed`; prints the logits' spread and the smallest top-2 margin."""
    config = model.config
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, config.vocab_size, size=N_TOKENS).tolist()
    model = model.double()
    with torch.no_grad():
        logits = model(torch.tensor([ids], dtype=torch.long)).logits[0]  # [N_TOKENS, vocab]
    ref = {
        "generator": "tools/make_hf_golden.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "model_class": type(model).__name__,
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
    for label, overrides in ABLATIONS.get(name, {}).items():
        print(f"  without {label}: max |logit change| {ablated_diff(model, overrides, ids, logits):.3f}")
    spread = float(logits[-1].std())
    print(f"{name}: vocab {config.vocab_size}, last-row logit std {spread:.3f}, "
          f"min top-2 margin {margin:.2e}, "
          f"{os.path.getsize(os.path.join(d, 'model.safetensors'))} bytes of weights")
    return margin


def build(name, cfg_cls, model_cls, kwargs, seed, out_dir):
    model = random_model(name, cfg_cls, model_cls, kwargs, seed)
    d = os.path.join(out_dir, name)
    save_checkpoint(model, d)
    return write_reference(name, model, seed, d)


# Per model: features turned off one at a time (config overrides, or
# "state:NAME" for parameters set to a value). Each must
# move the logits by far more than the tests' tolerance, or the model would not
# test that feature.
def _longrope(**change):
    rope = dict(new_arch_configs()["phi3_longrope"][2]["rope_scaling"], rope_theta=10000.0)
    return {"rope_parameters": dict(rope, **change)}


def _yarn(**change):
    rope = dict(configs()["qwen2_yarn"][2]["rope_scaling"], rope_theta=10000.0)
    return {"rope_parameters": dict(rope, **change)}


ABLATIONS = {
    "gemma2_softcap_swa": {"attention soft cap": {"attn_logit_softcapping": None},
                           "final soft cap": {"final_logit_softcapping": None},
                           "sliding window": {"sliding_window": 1000},
                           "query_pre_attn_scalar (head_dim instead)": {"query_pre_attn_scalar": 16}},
    "gemma3_swa_qknorm": {"sliding window": {"sliding_window": 1000},
                          "query_pre_attn_scalar (head_dim instead)": {"query_pre_attn_scalar": 16},
                          "local RoPE base": {"rope_parameters": {
                              "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                              "sliding_attention": {"rope_type": "default", "rope_theta": 1000000.0}}}},
    "phi3_longrope": {"long factors (short ones instead)": _longrope(
                          long_factor=_longrope()["rope_parameters"]["short_factor"]),
                      "attention factor (1.0 instead)": _longrope(attention_factor=1.0)},
    "mistral_swa": {"sliding window": {"sliding_window": None}},
    "qwen2_yarn": {"YaRN's blend (linear x4 instead)": {"rope_parameters": {
                       "rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0}},
                   "attention factor (1.0 instead)": _yarn(attention_factor=1.0),
                   "rounded blend bounds (truncate false instead)": _yarn(truncate=False)},
    "gpt_oss_attention": {"YaRN's exact blend bounds (rounded instead)": {"rope_parameters": {
                              "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                              "truncate": True, "original_max_position_embeddings": 4096, "rope_theta": 1e6}},
                          "sinks": {"state:self_attn.sinks": -1e9},
                          "o bias": {"state:self_attn.o_proj.bias": 0.0}},
    "qwen3_moe": {"renormalised top-k": {"norm_topk_prob": False},
                  "two experts (one instead)": {"num_experts_per_tok": 1}},
    "qwen2_moe": {"top-k as is (renormalised instead)": {"norm_topk_prob": True}},
    "mixtral": {"two experts (one instead)": {"num_experts_per_tok": 1}},
}


def ablated_diff(model, overrides, ids, logits):
    config = copy.deepcopy(model.config)
    state = {n: t.clone() for n, t in model.state_dict().items()}
    for k, v in overrides.items():
        if k.startswith("state:"):  # the parameters whose names hold the rest, all set to v
            for n, t in state.items():
                if k[len("state:"):] in n:
                    t.fill_(v)
        else:
            setattr(config, k, v)
    other = type(model)(config).double().eval()
    other.load_state_dict(state)
    with torch.no_grad():
        got = other(torch.tensor([ids], dtype=torch.long)).logits[0]
    return float((got - logits).abs().max())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "hf"))
    ap.add_argument("names", nargs="*", help="models to make (default: all)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for seed, (name, (cfg_cls, model_cls, kwargs)) in enumerate(configs().items()):
        if not args.names or name in args.names:  # a model's seed is its place in configs()
            build(name, cfg_cls, model_cls, kwargs, 1000 + seed, args.out)


if __name__ == "__main__":
    main()

// An architecture as a description, not a forward pass: the names it goes by,
// where its files keep each tensor, and the facts of ModelConfig it sets
// beyond the hyperparameters every decoder has, most of them in each layer's
// LayerSpec (read by gguf_loader.cpp and hf_loader.cpp, written back by
// gguf_metadata.cpp). One arch_*.cpp file per family fills one in; the single
// forward pass in model.cpp composes each layer from its spec.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "model/config.h"
#include "model/hf_mxfp4.h"
#include "model/weights.h"

namespace skiff {

// GGUF metadata in the order it is written.
using GgufMetadata = std::vector<std::pair<std::string, gguf::Value>>;

// Sliding windows as a family's GGUF files imply them when they carry no key
// (llama.cpp's defaults); the keys any family may carry are read over these.
struct GgufSlidingDefaults {
  int window = 0;          // 0: no layer slides
  int period = 0;          // which layers slide, as sliding_every; 0: all of them
  float rope_theta = 0.0f; // > 0: sliding layers rotate at this base, unscaled
};

struct Architecture {
  std::string gguf_name;                    // general.architecture
  std::vector<std::string> hf_classes;      // config.json "architectures" (LlamaForCausalLM)
  std::vector<std::string> hf_model_types;  // config.json "model_type", when no class is known
  // How its GGUF files order each head's Q/K rows: llama.cpp's converter
  // interleaves them for "llama" only; HF checkpoints are rotate-half.
  RopeStyle gguf_rope_style = RopeStyle::kRotateHalf;
  bool fused_qkv = false;      // attn_qkv.weight holds the Q, K and V rows (Phi-3)
  bool fused_gate_up = false;  // ffn_up.weight holds the gate rows, then the up rows (Phi-3)
  bool hf_norm_plus_one = false;  // HF norm weights w scale by 1 + w (Gemma); GGUF ones hold 1 + w
  // HF layer tensor names ("post_attention_layernorm") that this family maps
  // to other GGUF names ("post_attention_norm") than Llama does.
  std::vector<std::pair<std::string, std::string>> hf_layer_names;
  // The GGUF name of the FFN's input norm (gpt-oss: "post_attention_norm").
  std::string ffn_norm_name = "ffn_norm";
  // Rewrites a checkpoint's tensors that GGUF lays out otherwise into GGUF's
  // layout (gpt-oss's experts: x·W with gate and up interleaved, or MXFP4
  // blocks and scales in `packed`), keeping the new buffers in `storage`.
  // Error on a shape the config does not give.
  void (*hf_tensors)(const ModelConfig& c, const PackedTensors& packed, TensorMap& tensors,
                     std::vector<std::shared_ptr<const void>>& storage) = nullptr;
  GgufSlidingDefaults gguf_sliding;
  // Set the family's facts once the common hyperparameters are in `c` and
  // its layers are Llama's (start_layers).
  void (*from_gguf)(const gguf::GgufFile& f, ModelConfig& c) = nullptr;
  void (*from_hf)(const nlohmann::json& j, ModelConfig& c) = nullptr;
  // The family's own keys, from which from_gguf reads its facts back (null:
  // none beyond those every family's files carry).
  void (*to_gguf)(const ModelConfig& c, GgufMetadata& m) = nullptr;
  // A config.json rope_scaling type this family defines ("longrope"); true
  // when handled. Types every family knows (linear, llama3) never get here.
  bool (*hf_rope_scaling)(const std::string& type, const nlohmann::json& scaling, const nlohmann::json& j,
                          ModelConfig& c) = nullptr;
};

// By general.architecture, or by a config.json's "architectures" (as vLLM
// picks a model class) and else its "model_type"; Error naming the supported
// ones otherwise.
const Architecture& gguf_architecture(const std::string& name);
const Architecture& hf_architecture(const nlohmann::json& config);

// The families (arch_*.cpp).
const Architecture& llama_architecture();
const Architecture& qwen2_architecture();
const Architecture& qwen3_architecture();
const Architecture& gemma2_architecture();
const Architecture& gemma3_architecture();
const Architecture& phi3_architecture();
const Architecture& qwen2moe_architecture();
const Architecture& qwen3moe_architecture();
const Architecture& olmoe_architecture();
const Architecture& granitemoe_architecture();
const Architecture& gpt_oss_architecture();

// Shared by the descriptions and loaders. Every layer as Llama's: global
// attention at the model's RoPE base, a SwiGLU FFN.
void start_layers(ModelConfig& c);
// Layers l with l % period != period - 1 slide (Gemma 2: every other layer
// from the first; Gemma 3: five of every six).
std::vector<bool> sliding_every(int n_layers, int period);
// The layers flagged in `sliding` [n_layers] get `window`.
void set_windows(ModelConfig& c, const std::vector<bool>& sliding, int window);
// config.json's "sliding_window", where it has one, on the layers "layer_types"
// calls sliding_attention, or else every layer sliding_every(default_period) picks.
void hf_sliding_windows(const nlohmann::json& j, ModelConfig& c, int default_period);
// config.json's "sliding_window", where it has one, on every layer (Mistral, Phi-3).
void hf_window_on_every_layer(const nlohmann::json& j, ModelConfig& c);
// The window every sliding layer has, 0 when none slides; Error when they
// differ (GGUF keeps one).
int common_window(const ModelConfig& c);
// The sliding layers rotate at `theta`, without the model's RoPE scaling.
void set_local_rope(ModelConfig& c, float theta);
// A small GGUF tensor (RoPE factors) as floats: Error naming it when its type
// cannot be read or its size is not n.
std::vector<float> gguf_vector(const gguf::GgufFile& f, const std::string& name, int64_t n);
// Mixtures of experts (arch_experts.cpp). The layers flagged in `sparse`
// [n_layers] become mixtures of `experts`.
void set_experts(ModelConfig& c, const ExpertsSpec& experts, const std::vector<bool>& sparse);
// config.json's experts: count_key's count, num_experts_per_tok, ffn_key's
// width, and norm_topk_prob where it is given (else `normalize`).
ExpertsSpec hf_experts(const nlohmann::json& j, const char* count_key, const char* ffn_key, bool normalize);
// transformers' sparse layers: every decoder_sparse_step-th, less mlp_only_layers.
std::vector<bool> hf_sparse_layers(const nlohmann::json& j, int n_layers);
// GGUF's {arch}.expert_count, expert_used_count, expert_feed_forward_length,
// expert_shared_feed_forward_length and expert_weights_norm over the family's
// `defaults`, on the layers that have a router tensor; nothing when the file
// has no expert count (a dense model of the family).
void gguf_experts(const gguf::GgufFile& f, ModelConfig& c, ExpertsSpec defaults);
// Those keys back; Error when the sparse layers differ (GGUF keeps one mixture).
void write_gguf_experts(const ModelConfig& c, GgufMetadata& m);
// v as an int in [0, 2^30] (a window, a period): Error naming `what` otherwise.
int bounded_int(int64_t v, const char* what);
// An optional config.json integer field (absent or null: fallback).
int64_t hf_int(const nlohmann::json& j, const char* key, int64_t fallback);
double hf_number(const nlohmann::json& j, const char* key, double fallback);

}  // namespace skiff

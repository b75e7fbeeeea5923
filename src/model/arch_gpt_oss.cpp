// gpt-oss (OpenAI's open-weight models; GGUF "gpt-oss"): attention with
// biases on q, k, v and the output, a learned sink logit per head, a window of
// 128 on every other layer from the first, YaRN RoPE; a mixture of experts in
// every layer whose router (with a bias) keeps the top k logits and softmaxes
// them, experts with biases and the clamped SwiGLU. Its FFN's input norm is
// GGUF's post_attention_norm. Checkpoints store the experts as x·W, gate and
// up columns interleaved, or (OpenAI's releases) as MXFP4 blocks of W·x with
// gate and up rows interleaved; GGUF as W·x in separate gate and up tensors.
#include <cmath>

#include "base/error.h"
#include "base/huge_page_buffer.h"
#include "gguf/gguf_writer.h"
#include "kernels/quant/quant.h"
#include "model/architecture.h"

namespace skiff {
namespace {

void set_attention(ModelConfig& c) {
  for (LayerSpec& layer : c.layers) {
    layer.attention.qkv_bias = layer.attention.o_bias = layer.attention.sinks = true;
    layer.ffn.activation = Activation::kSwigluOai;
  }
}

// The router softmaxes its top k logits, whatever the files say of
// normalising: llama.cpp reads no expert_weights_norm for gpt-oss (its gating
// is SOFTMAX_WEIGHT) and transformers no norm_topk_prob.
void softmax_top_k(ModelConfig& c) {
  for (LayerSpec& layer : c.layers)
    if (layer.ffn.kind == FfnKind::kExperts) layer.ffn.experts.normalize = true;
}

// The tensor `name` as floats [rows, cols] (the checkpoint may hold BF16).
std::vector<float> floats(const TensorMap& tensors, const std::string& name, int64_t rows, int64_t cols) {
  const auto it = tensors.find(name);
  if (it == tensors.end()) fail("model is missing tensor '{}'", name);
  const TensorRef& t = it->second;
  if (t.rows != rows || t.cols != cols)
    fail("tensor '{}' has shape [{}, {}], expected [{}, {}]", name, t.rows, t.cols, rows, cols);
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    dequantize_row(t.type, static_cast<const uint8_t*>(t.data) + r * row_bytes(t.type, cols), &out[r * cols], cols);
  return out;
}

// A new tensor of `type` in `storage`, entered in `tensors` as `name`: on huge
// pages, as a GGUF file read into memory, since decode streams it.
uint8_t* add_tensor(TensorMap& tensors, std::vector<std::shared_ptr<const void>>& storage, const std::string& name,
                    DType type, int64_t rows, int64_t cols) {
  auto buffer = std::make_shared<HugePageBuffer>(static_cast<size_t>(rows) * row_bytes(type, cols));
  storage.push_back(buffer);
  tensors[name] = TensorRef{type, rows, cols, buffer->data()};
  return buffer->data();
}

float* add_floats(TensorMap& tensors, std::vector<std::shared_ptr<const void>>& storage, const std::string& name,
                  int64_t rows, int64_t cols) {
  return reinterpret_cast<float*>(add_tensor(tensors, storage, name, DType::F32, rows, cols));
}

using Storage = std::vector<std::shared_ptr<const void>>;

// A layer's stacked expert tensor as the checkpoint names it.
std::string hf_experts_name(int layer, const char* what) {
  return "model.layers." + std::to_string(layer) + ".mlp.experts." + what;
}

// One layer's experts from floats as x·W (gate_up [E, dim, 2f], columns
// gate, up, gate, up, ...; down [E, f, dim]) into GGUF's W·x tensors.
void float_gate_up(TensorMap& tensors, Storage& storage, const std::string& p, int64_t n, int64_t f, int64_t d) {
  const std::vector<float> gate_up = floats(tensors, p + "ffn_gate_up_exps_xw.weight", n * d, 2 * f);
  float* gate = add_floats(tensors, storage, p + "ffn_gate_exps.weight", n * f, d);
  float* up = add_floats(tensors, storage, p + "ffn_up_exps.weight", n * f, d);
  for (int64_t x = 0; x < n; ++x)
    for (int64_t i = 0; i < f; ++i)
      for (int64_t k = 0; k < d; ++k) {
        gate[(x * f + i) * d + k] = gate_up[(x * d + k) * 2 * f + 2 * i];
        up[(x * f + i) * d + k] = gate_up[(x * d + k) * 2 * f + 2 * i + 1];
      }
}

void float_down(TensorMap& tensors, Storage& storage, const std::string& p, int64_t n, int64_t f, int64_t d) {
  const std::vector<float> down = floats(tensors, p + "ffn_down_exps_xw.weight", n * f, d);
  float* down_t = add_floats(tensors, storage, p + "ffn_down_exps.weight", n * d, f);
  for (int64_t x = 0; x < n; ++x)
    for (int64_t i = 0; i < f; ++i)
      for (int64_t k = 0; k < d; ++k) down_t[(x * d + k) * f + i] = down[(x * f + i) * d + k];
}

// The same from MXFP4 blocks, which are W·x already: gate_up's rows 2i and
// 2i + 1 are gate's and up's row i; their bytes are repacked, not dequantized.
void mxfp4_gate_up(const PackedTensors& packed, TensorMap& tensors, Storage& storage, int layer,
                   const std::string& p, int64_t n, int64_t f, int64_t d) {
  const Mxfp4Tensor gate_up(packed, p + "ffn_gate_up_exps", hf_experts_name(layer, "gate_up_proj"), n, 2 * f, d);
  uint8_t* gate = add_tensor(tensors, storage, p + "ffn_gate_exps.weight", DType::MXFP4, n * f, d);
  uint8_t* up = add_tensor(tensors, storage, p + "ffn_up_exps.weight", DType::MXFP4, n * f, d);
  const size_t row = row_bytes(DType::MXFP4, d);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < n * f; ++r) {
    gate_up.repack_row(2 * r, gate + r * row);
    gate_up.repack_row(2 * r + 1, up + r * row);
  }
  gate_up.release();
}

void mxfp4_down(const PackedTensors& packed, TensorMap& tensors, Storage& storage, int layer, const std::string& p,
                int64_t n, int64_t f, int64_t d) {
  const Mxfp4Tensor down(packed, p + "ffn_down_exps", hf_experts_name(layer, "down_proj"), n, d, f);
  uint8_t* out = add_tensor(tensors, storage, p + "ffn_down_exps.weight", DType::MXFP4, n * d, f);
  const size_t row = row_bytes(DType::MXFP4, f);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < n * d; ++r) down.repack_row(r, out + r * row);
  down.release();
}

// Each layer's experts, as floats or MXFP4 blocks, and gate_up's bias split
// as its columns are.
void hf_experts_to_gguf(const ModelConfig& c, const PackedTensors& packed, TensorMap& tensors, Storage& storage) {
  for (int l = 0; l < c.n_layers; ++l) {
    const ExpertsSpec& e = c.layers[l].ffn.experts;
    const int64_t n = e.n_experts, f = e.ffn_dim, d = c.dim;
    const std::string p = "blk." + std::to_string(l) + ".";
    // Floats where the checkpoint has them, else MXFP4 blocks; neither: the HF name in the error.
    auto source = [&](const char* gguf, const char* hf) {
      if (tensors.count(p + gguf + "_xw.weight")) return false;
      if (has_mxfp4(packed, p + gguf)) return true;
      fail("model is missing tensor '{}' (or its MXFP4 _blocks and _scales)", hf_experts_name(l, hf));
    };
    if (source("ffn_gate_up_exps", "gate_up_proj"))
      mxfp4_gate_up(packed, tensors, storage, l, p, n, f, d);
    else
      float_gate_up(tensors, storage, p, n, f, d);
    if (source("ffn_down_exps", "down_proj"))
      mxfp4_down(packed, tensors, storage, l, p, n, f, d);
    else
      float_down(tensors, storage, p, n, f, d);
    const std::vector<float> gate_up_bias = floats(tensors, p + "ffn_gate_up_exps_xw.bias", n, 2 * f);
    float* gate_bias = add_floats(tensors, storage, p + "ffn_gate_exps.bias", n, f);
    float* up_bias = add_floats(tensors, storage, p + "ffn_up_exps.bias", n, f);
    for (int64_t i = 0; i < n * f; ++i) {
      gate_bias[i] = gate_up_bias[2 * i];
      up_bias[i] = gate_up_bias[2 * i + 1];
    }
    for (const char* name : {"ffn_gate_up_exps_xw.weight", "ffn_down_exps_xw.weight", "ffn_gate_up_exps_xw.bias"})
      tensors.erase(p + name);
  }
}

}  // namespace

const Architecture& gpt_oss_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "gpt-oss";
    a.hf_classes = {"GptOssForCausalLM"};
    a.hf_model_types = {"gpt_oss"};
    a.hf_layer_names = {{"post_attention_layernorm", "post_attention_norm"}};
    a.ffn_norm_name = "post_attention_norm";
    a.gguf_sliding = {.window = 128, .period = 2};
    a.hf_tensors = hf_experts_to_gguf;
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      set_attention(c);
      gguf_experts(f, c, {.biases = true});
      softmax_top_k(c);
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      set_attention(c);
      // The clamped SwiGLU's constants are fixed (llama.cpp fixes them too).
      const std::pair<const char*, double> kFixed[] = {{"swiglu_limit", 7.0}, {"swiglu_alpha", 1.702}};
      for (const auto& [key, value] : kFixed)
        if (const double v = hf_number(j, key, value); std::abs(v - value) > 1e-6)
          fail("'{}' {} is not gpt-oss's {}", key, v, value);
      ExpertsSpec e = hf_experts(j, "num_local_experts", "intermediate_size", true);
      e.biases = true;
      set_experts(c, e, std::vector<bool>(c.n_layers, true));
      softmax_top_k(c);
      hf_sliding_windows(j, c, 2);
    };
    a.to_gguf = [](const ModelConfig& c, GgufMetadata& m) {
      write_gguf_experts(c, m);
      // Its readers take an absent window as 128: 0 says none.
      if (common_window(c) == 0) m.emplace_back("gpt-oss.attention.sliding_window", gguf::make_uint(gguf::ValueType::UINT32, 0));
    };
    return a;
  }();
  return arch;
}

}  // namespace skiff

// HF directory -> GGUF tensors and metadata, as llama.cpp's convert_hf_to_gguf.py
// writes each supported architecture. The weights come through the HF loader (which
// maps HF names to GGUF names and checks every shape); the metadata from its config
// (model/gguf_metadata.h); the tokenizer through Tokenizer::from_hf_dir.
#include <fmt/core.h>

#include <filesystem>

#include "base/error.h"
#include "convert/model_source.h"
#include "gguf/gguf_writer.h"
#include "model/architecture.h"
#include "model/gguf_metadata.h"
#include "model/loader.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace skiff::convert {
namespace {

namespace fs = std::filesystem;
using gguf::ValueType;

gguf::Value u32(int64_t v) { return gguf::make_uint(ValueType::UINT32, static_cast<uint64_t>(v)); }
gguf::Value f32(double v) { return gguf::make_float(ValueType::FLOAT32, v); }

// The vocabulary as tokenizer_gguf.cpp reads it back.
void add_tokenizer_metadata(const Vocab& v, GgufMetadata& m) {
  const bool spm = v.kind == VocabKind::Spm;
  m.emplace_back("tokenizer.ggml.model", gguf::make_string(spm ? "llama" : "gpt2"));
  if (!spm) m.emplace_back("tokenizer.ggml.pre", gguf::make_string(std::string(canonical_pre_tokenizer_name(v.pre))));
  m.emplace_back("tokenizer.ggml.tokens", gguf::make_string_array(v.texts));
  if (!v.scores.empty()) {
    std::vector<gguf::Value> scores;
    for (float s : v.scores) scores.push_back(f32(s));
    m.emplace_back("tokenizer.ggml.scores", gguf::make_array(ValueType::FLOAT32, std::move(scores)));
  }
  if (!v.types.empty()) {
    std::vector<gguf::Value> types;
    for (TokenType t : v.types) types.push_back(gguf::make_int(ValueType::INT32, static_cast<int>(t)));
    m.emplace_back("tokenizer.ggml.token_type", gguf::make_array(ValueType::INT32, std::move(types)));
  }
  if (!spm) m.emplace_back("tokenizer.ggml.merges", gguf::make_string_array(v.merges));
  const std::pair<const char*, int32_t> ids[] = {{"tokenizer.ggml.bos_token_id", v.bos_id},
                                                 {"tokenizer.ggml.eos_token_id", v.eos_id},
                                                 {"tokenizer.ggml.unknown_token_id", v.unk_id},
                                                 {"tokenizer.ggml.padding_token_id", v.pad_id}};
  for (const auto& [key, id] : ids)
    if (id >= 0) m.emplace_back(key, u32(id));
  m.emplace_back("tokenizer.ggml.add_bos_token", gguf::make_bool(v.add_bos));
  m.emplace_back("tokenizer.ggml.add_eos_token", gguf::make_bool(v.add_eos));
  if (spm) m.emplace_back("tokenizer.ggml.add_space_prefix", gguf::make_bool(v.add_space_prefix));
}

SourceTensor matrix_tensor(std::string name, const Matrix& w, int interleave_heads = 0) {
  if (w.layout != MatrixLayout::kRows) fail("{}: weights in a kernel layout cannot be written out", name);
  return {std::move(name), w.type, {w.cols, w.rows}, w.data, interleave_heads};
}

SourceTensor vector_tensor(std::string name, const std::vector<float>& v) {
  return {std::move(name), DType::F32, {static_cast<int64_t>(v.size())}, v.data(), 0};
}

// A layer's experts as GGUF's 3-D tensor [n_experts, rows, cols].
SourceTensor stacked_tensor(std::string name, const std::vector<Matrix>& experts) {
  SourceTensor t = matrix_tensor(std::move(name), experts.front());
  t.ne.push_back(static_cast<int64_t>(experts.size()));
  for (const Matrix& m : experts) {
    if (m.type != t.type || m.layout != MatrixLayout::kRows) fail("{}: experts of different types or layouts", t.name);
    t.parts.push_back(m.data);
  }
  return t;
}

// Each expert's bias, one after another: GGUF's [n_experts, width] (not a
// matrix to quantize: its name ends in .bias).
SourceTensor expert_bias_tensor(std::string name, const std::vector<float>& bias, int64_t n_experts) {
  SourceTensor t = vector_tensor(std::move(name), bias);
  t.ne = {static_cast<int64_t>(bias.size()) / n_experts, n_experts};
  return t;
}

// Matrices a, b (and c) as one: they are consecutive rows of one fused tensor.
Matrix fused(std::initializer_list<const Matrix*> parts) {
  Matrix m = **parts.begin();
  m.rows = 0;
  for (const Matrix* part : parts) m.rows += part->rows;
  return m;
}

// llama.cpp's tensor order: embedding, RoPE factors, blocks, output norm, head.
std::vector<SourceTensor> model_tensors(const Model& model, const Architecture& arch) {
  const ModelConfig& c = model.config();
  const ModelWeights& w = model.weights();
  std::vector<SourceTensor> t = {matrix_tensor("token_embd.weight", w.token_embedding)};
  if (!c.rope_freq_factors_short.empty()) {
    t.push_back(vector_tensor("rope_factors_long.weight", c.rope_freq_factors));
    t.push_back(vector_tensor("rope_factors_short.weight", c.rope_freq_factors_short));
  } else if (!c.rope_freq_factors.empty() && !linear_rope_scaling(c) && c.rope_yarn.factor == 0) {  // YaRN: keys
    t.push_back(vector_tensor("rope_freqs.weight", c.rope_freq_factors));
  }
  // HF keeps each head's rotated pairs as halves; GGUF "llama" interleaves them.
  const bool interleave = c.rope_style == RopeStyle::kRotateHalf && arch.gguf_rope_style == RopeStyle::kInterleaved;
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const AttentionWeights& A = w.layers[l].attention;
    const FfnWeights& F = w.layers[l].ffn;
    const std::string p = "blk." + std::to_string(l) + ".";
    auto vector_if = [&](const char* name, const std::vector<float>& v) {
      if (!v.empty()) t.push_back(vector_tensor(p + name, v));
    };
    t.push_back(vector_tensor(p + "attn_norm.weight", A.norm));
    if (arch.fused_qkv) {
      t.push_back(matrix_tensor(p + "attn_qkv.weight", fused({&A.wq, &A.wk, &A.wv})));
    } else {
      t.push_back(matrix_tensor(p + "attn_q.weight", A.wq, interleave ? c.n_heads : 0));
      t.push_back(matrix_tensor(p + "attn_k.weight", A.wk, interleave ? c.n_kv_heads : 0));
      t.push_back(matrix_tensor(p + "attn_v.weight", A.wv));
    }
    vector_if("attn_q.bias", A.bq);
    vector_if("attn_k.bias", A.bk);
    vector_if("attn_v.bias", A.bv);
    vector_if("attn_q_norm.weight", A.q_norm);
    vector_if("attn_k_norm.weight", A.k_norm);
    t.push_back(matrix_tensor(p + "attn_output.weight", A.wo));
    vector_if("attn_output.bias", A.bo);
    vector_if("attn_sinks.weight", A.sinks);
    vector_if("post_attention_norm.weight", A.post_norm);
    t.push_back(vector_tensor(p + arch.ffn_norm_name + ".weight", F.norm));
    const bool experts = !F.experts_gate.empty();
    if (experts) t.push_back(matrix_tensor(p + "ffn_gate_inp.weight", F.router));
    vector_if("ffn_gate_inp.bias", F.router_bias);
    const std::string dense = experts ? "_shexp.weight" : ".weight";  // a mixture's dense FFN is its shared expert
    if (arch.fused_gate_up && !experts) {
      t.push_back(matrix_tensor(p + "ffn_up.weight", fused({&F.w_gate, &F.w_up})));
    } else if (F.w_gate.data) {
      t.push_back(matrix_tensor(p + "ffn_gate" + dense, F.w_gate));
      t.push_back(matrix_tensor(p + "ffn_up" + dense, F.w_up));
    }
    if (F.w_down.data) t.push_back(matrix_tensor(p + "ffn_down" + dense, F.w_down));
    vector_if("ffn_gate_inp_shexp.weight", F.shared_gate);
    if (experts) {
      t.push_back(stacked_tensor(p + "ffn_gate_exps.weight", F.experts_gate));
      t.push_back(stacked_tensor(p + "ffn_up_exps.weight", F.experts_up));
      t.push_back(stacked_tensor(p + "ffn_down_exps.weight", F.experts_down));
      const auto n = static_cast<int64_t>(F.experts_gate.size());
      for (const auto& [name, bias] : {std::pair{"ffn_gate_exps.bias", &F.experts_gate_bias},
                                       std::pair{"ffn_up_exps.bias", &F.experts_up_bias},
                                       std::pair{"ffn_down_exps.bias", &F.experts_down_bias}})
        if (!bias->empty()) t.push_back(expert_bias_tensor(p + name, *bias, n));
    }
    vector_if("post_ffw_norm.weight", F.post_norm);
  }
  t.push_back(vector_tensor("output_norm.weight", w.output_norm));
  if (!c.tied_output) t.push_back(matrix_tensor("output.weight", w.output));
  return t;
}

uint64_t safetensors_bytes(const std::string& dir) {
  uint64_t bytes = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") bytes += e.file_size();
  return bytes;
}

}  // namespace

ModelSource hf_source(const std::string& dir) {
  // Mapped: the weights stay in the files' row layout, which GGUF keeps.
  std::shared_ptr<const Model> model = load_hf_model(dir, {.weights = FileLoad::kMmap});
  const ModelConfig& c = model->config();
  if (c.rope_dim != c.head_dim)
    fail("{}: partial rotary embeddings (rope dim {} of head dim {}) cannot be converted", dir,
         c.rope_dim, c.head_dim);
  ModelSource source;
  source.metadata = gguf_metadata(c);
  if (Tokenizer::hf_dir_has_tokenizer(dir))
    add_tokenizer_metadata(Tokenizer::from_hf_dir(dir)->vocab(), source.metadata);
  else
    fmt::print(stderr, "quantize: {} has no tokenizer files: the GGUF gets no tokenizer.ggml.* keys\n", dir);
  source.tensors = model_tensors(*model, gguf_architecture(c.arch));
  for (SourceTensor& t : source.tensors) t.stored_quantized = dtype_info(t.type).block_size > 1;
  source.input_bytes = safetensors_bytes(dir);
  source.storage.push_back(model);
  return source;
}

}  // namespace skiff::convert

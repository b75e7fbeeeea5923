// HF directory -> GGUF tensors and metadata, as llama.cpp's convert_hf_to_gguf.py
// writes each supported architecture. The weights come through the HF loader (which
// maps HF names to GGUF names and checks every shape); the tokenizer through
// Tokenizer::from_hf_dir.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "convert/model_source.h"
#include "gguf/gguf_writer.h"
#include "model/architecture.h"
#include "model/loader.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace skiff::convert {
namespace {

namespace fs = std::filesystem;
using gguf::ValueType;

using Metadata = std::vector<std::pair<std::string, gguf::Value>>;

gguf::Value u32(int64_t v) { return gguf::make_uint(ValueType::UINT32, static_cast<uint64_t>(v)); }
gguf::Value f32(double v) { return gguf::make_float(ValueType::FLOAT32, v); }

bool all_equal(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [&](float x) { return x == v.front(); });
}

// The period p with sliding_every(n, p) == layers, or 0 when there is none.
int sliding_period(const std::vector<bool>& layers) {
  for (int p = 1; p <= static_cast<int>(layers.size()) + 1; ++p)
    if (sliding_every(static_cast<int>(layers.size()), p) == layers) return p;
  return 0;
}

// The keys gguf_loader.cpp (and llama.cpp, for the keys it knows) read back
// into this config; facts the architecture implies (biases, norms, the
// activation) need none.
void add_model_metadata(const ModelConfig& c, Metadata& m) {
  const std::string p = c.arch + ".";
  m.emplace_back("general.architecture", gguf::make_string(c.arch));
  m.emplace_back("general.name", gguf::make_string(c.name));
  m.emplace_back(p + "vocab_size", u32(c.vocab_size));
  m.emplace_back(p + "context_length", u32(c.max_ctx));
  m.emplace_back(p + "embedding_length", u32(c.dim));
  m.emplace_back(p + "block_count", u32(c.n_layers));
  m.emplace_back(p + "feed_forward_length", u32(c.ffn_dim));
  m.emplace_back(p + "rope.dimension_count", u32(c.rope_dim));
  m.emplace_back(p + "attention.head_count", u32(c.n_heads));
  m.emplace_back(p + "attention.head_count_kv", u32(c.n_kv_heads));
  if (c.head_dim != c.dim / c.n_heads) {
    m.emplace_back(p + "attention.key_length", u32(c.head_dim));
    m.emplace_back(p + "attention.value_length", u32(c.head_dim));
  }
  m.emplace_back(p + "attention.layer_norm_rms_epsilon", f32(c.norm_eps));
  m.emplace_back(p + "rope.freq_base", f32(c.rope_theta));
  // Linear scaling is a factor key; other factors a tensor (rope_freqs.weight).
  if (!c.rope_freq_factors.empty() && all_equal(c.rope_freq_factors) && c.rope_freq_factors_short.empty()) {
    m.emplace_back(p + "rope.scaling.type", gguf::make_string("linear"));
    m.emplace_back(p + "rope.scaling.factor", f32(c.rope_freq_factors.front()));
  }
  if (!c.rope_freq_factors_short.empty()) {  // LongRoPE, as llama.cpp's converter writes it
    m.emplace_back(p + "rope.scaling.original_context_length", u32(c.rope_original_ctx));
    m.emplace_back(p + "rope.scaling.attn_factor", f32(c.rope_mscale));
  }
  if (c.attention_scale > 0) m.emplace_back(p + "attention.scale", f32(c.attention_scale));
  // Gemma 2's readers default absent soft-caps and window to on: 0 says off.
  const bool gemma2 = c.arch == "gemma2";
  if (c.attn_softcap > 0 || gemma2) m.emplace_back(p + "attn_logit_softcapping", f32(c.attn_softcap));
  if (c.logit_softcap > 0 || gemma2) m.emplace_back(p + "final_logit_softcapping", f32(c.logit_softcap));
  if (c.sliding_window == 0 && gemma2) m.emplace_back(p + "attention.sliding_window", u32(0));
  if (c.sliding_window > 0) {
    m.emplace_back(p + "attention.sliding_window", u32(c.sliding_window));
    if (const int period = sliding_period(c.sliding_layers)) {
      m.emplace_back(p + "attention.sliding_window_pattern", u32(period));
    } else {
      std::vector<gguf::Value> flags;
      for (bool f : c.sliding_layers) flags.push_back(gguf::make_bool(f));
      m.emplace_back(p + "attention.sliding_window_pattern", gguf::make_array(ValueType::BOOL, std::move(flags)));
    }
  }
  if (c.rope_theta_sliding > 0) m.emplace_back(p + "rope.freq_base_swa", f32(c.rope_theta_sliding));
}

// The vocabulary as tokenizer_gguf.cpp reads it back.
void add_tokenizer_metadata(const Vocab& v, Metadata& m) {
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
  } else if (!c.rope_freq_factors.empty() && !all_equal(c.rope_freq_factors)) {
    t.push_back(vector_tensor("rope_freqs.weight", c.rope_freq_factors));
  }
  // HF keeps each head's rotated pairs as halves; GGUF "llama" interleaves them.
  const bool interleave = c.rope_style == RopeStyle::kRotateHalf && arch.gguf_rope_style == RopeStyle::kInterleaved;
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& L = w.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    auto vector_if = [&](const char* name, const std::vector<float>& v) {
      if (!v.empty()) t.push_back(vector_tensor(p + name, v));
    };
    t.push_back(vector_tensor(p + "attn_norm.weight", L.attn_norm));
    if (arch.fused_qkv) {
      t.push_back(matrix_tensor(p + "attn_qkv.weight", fused({&L.wq, &L.wk, &L.wv})));
    } else {
      t.push_back(matrix_tensor(p + "attn_q.weight", L.wq, interleave ? c.n_heads : 0));
      t.push_back(matrix_tensor(p + "attn_k.weight", L.wk, interleave ? c.n_kv_heads : 0));
      t.push_back(matrix_tensor(p + "attn_v.weight", L.wv));
    }
    vector_if("attn_q.bias", L.bq);
    vector_if("attn_k.bias", L.bk);
    vector_if("attn_v.bias", L.bv);
    vector_if("attn_q_norm.weight", L.q_norm);
    vector_if("attn_k_norm.weight", L.k_norm);
    t.push_back(matrix_tensor(p + "attn_output.weight", L.wo));
    vector_if("post_attention_norm.weight", L.post_attn_norm);
    t.push_back(vector_tensor(p + "ffn_norm.weight", L.ffn_norm));
    if (arch.fused_gate_up) {
      t.push_back(matrix_tensor(p + "ffn_up.weight", fused({&L.w_gate, &L.w_up})));
    } else {
      t.push_back(matrix_tensor(p + "ffn_gate.weight", L.w_gate));
      t.push_back(matrix_tensor(p + "ffn_up.weight", L.w_up));
    }
    t.push_back(matrix_tensor(p + "ffn_down.weight", L.w_down));
    vector_if("post_ffw_norm.weight", L.post_ffn_norm);
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
  std::shared_ptr<const Model> model = load_hf_model(dir);
  const ModelConfig& c = model->config();
  if (c.rope_dim != c.head_dim)
    fail("{}: partial rotary embeddings (rope dim {} of head dim {}) cannot be converted", dir,
         c.rope_dim, c.head_dim);
  ModelSource source;
  add_model_metadata(c, source.metadata);
  if (Tokenizer::hf_dir_has_tokenizer(dir))
    add_tokenizer_metadata(Tokenizer::from_hf_dir(dir)->vocab(), source.metadata);
  else
    fmt::print(stderr, "quantize: {} has no tokenizer files: the GGUF gets no tokenizer.ggml.* keys\n", dir);
  source.tensors = model_tensors(*model, gguf_architecture(c.arch));
  source.input_bytes = safetensors_bytes(dir);
  source.storage.push_back(model);
  return source;
}

}  // namespace skiff::convert

// HF directory -> GGUF tensors and metadata, as llama.cpp's convert_hf_to_gguf.py
// writes a LlamaForCausalLM. The weights come through the HF loader (which
// maps HF names to GGUF names and checks every shape); the tokenizer through
// Tokenizer::from_hf_dir.
#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "convert/model_source.h"
#include "gguf/gguf_writer.h"
#include "model/loader.h"
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

// The keys gguf_loader.cpp (and llama.cpp) read for the llama architecture.
void add_llama_metadata(const ModelConfig& c, Metadata& m) {
  m.emplace_back("general.architecture", gguf::make_string("llama"));
  m.emplace_back("general.name", gguf::make_string(c.name));
  m.emplace_back("llama.vocab_size", u32(c.vocab_size));
  m.emplace_back("llama.context_length", u32(c.max_ctx));
  m.emplace_back("llama.embedding_length", u32(c.dim));
  m.emplace_back("llama.block_count", u32(c.n_layers));
  m.emplace_back("llama.feed_forward_length", u32(c.ffn_dim));
  m.emplace_back("llama.rope.dimension_count", u32(c.rope_dim));
  m.emplace_back("llama.attention.head_count", u32(c.n_heads));
  m.emplace_back("llama.attention.head_count_kv", u32(c.n_kv_heads));
  if (c.head_dim != c.dim / c.n_heads) {
    m.emplace_back("llama.attention.key_length", u32(c.head_dim));
    m.emplace_back("llama.attention.value_length", u32(c.head_dim));
  }
  m.emplace_back("llama.attention.layer_norm_rms_epsilon", f32(c.norm_eps));
  m.emplace_back("llama.rope.freq_base", f32(c.rope_theta));
  // Linear scaling is a factor key; Llama-3 scaling a rope_freqs.weight tensor.
  if (!c.rope_freq_factors.empty() && all_equal(c.rope_freq_factors)) {
    m.emplace_back("llama.rope.scaling.type", gguf::make_string("linear"));
    m.emplace_back("llama.rope.scaling.factor", f32(c.rope_freq_factors.front()));
  }
}

std::string pre_tokenizer_name(PreTokenizer pre) {
  switch (pre) {
    case PreTokenizer::Default: return "default";
    case PreTokenizer::Gpt2: return "gpt-2";
    case PreTokenizer::DeepseekCoder: return "deepseek-coder";
    case PreTokenizer::Llama3: return "llama-bpe";
    case PreTokenizer::Qwen2: return "qwen2";
  }
  return "default";
}

// The vocabulary as tokenizer_gguf.cpp reads it back.
void add_tokenizer_metadata(const Vocab& v, Metadata& m) {
  const bool spm = v.kind == VocabKind::Spm;
  m.emplace_back("tokenizer.ggml.model", gguf::make_string(spm ? "llama" : "gpt2"));
  if (!spm) m.emplace_back("tokenizer.ggml.pre", gguf::make_string(pre_tokenizer_name(v.pre)));
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

// llama.cpp's tensor order: embedding, RoPE factors, blocks, output norm, head.
std::vector<SourceTensor> llama_tensors(const Model& model) {
  const ModelConfig& c = model.config();
  const ModelWeights& w = model.weights();
  std::vector<SourceTensor> t = {matrix_tensor("token_embd.weight", w.token_embedding)};
  if (!c.rope_freq_factors.empty() && !all_equal(c.rope_freq_factors))
    t.push_back(vector_tensor("rope_freqs.weight", c.rope_freq_factors));
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& L = w.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back(vector_tensor(p + "attn_norm.weight", L.attn_norm));
    // HF keeps each head's rotated pairs as halves; GGUF llama interleaves them.
    const bool rotate_half = c.rope_style == RopeStyle::kRotateHalf;
    t.push_back(matrix_tensor(p + "attn_q.weight", L.wq, rotate_half ? c.n_heads : 0));
    t.push_back(matrix_tensor(p + "attn_k.weight", L.wk, rotate_half ? c.n_kv_heads : 0));
    t.push_back(matrix_tensor(p + "attn_v.weight", L.wv));
    t.push_back(matrix_tensor(p + "attn_output.weight", L.wo));
    t.push_back(vector_tensor(p + "ffn_norm.weight", L.ffn_norm));
    t.push_back(matrix_tensor(p + "ffn_gate.weight", L.w_gate));
    t.push_back(matrix_tensor(p + "ffn_up.weight", L.w_up));
    t.push_back(matrix_tensor(p + "ffn_down.weight", L.w_down));
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
  add_llama_metadata(c, source.metadata);
  add_tokenizer_metadata(Tokenizer::from_hf_dir(dir)->vocab(), source.metadata);
  source.tensors = llama_tensors(*model);
  source.input_bytes = safetensors_bytes(dir);
  source.storage.push_back(model);
  return source;
}

}  // namespace skiff::convert

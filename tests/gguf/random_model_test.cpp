// write_random_model and `skiff gen-model`: the files parse, carry llama.cpp's
// names, shapes, types and metadata, and the weights have the stated spread.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "base/error.h"
#include "gguf/gguf.h"
#include "gguf_test_util.h"
#include "kernels/quant/quant.h"
#include "model/loader.h"
#include "model/random_model.h"

namespace skiff {
namespace {

using gguf::GgufFile;
using gguf::testing::TempFile;

const std::string kModels = SKIFF_MODELS_DIR;
const std::string kSmallVocab = kModels + "/derived/stories260K-f32.gguf";  // 512 tokens

RandomModelSpec small_spec(DType type) {
  RandomModelSpec s;
  s.n_layers = 2;
  s.dim = dtype_info(type).block_size == 256 ? 256 : 64;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.ffn_dim = 2 * s.dim;
  s.vocab_path = kSmallVocab;
  s.file_type = type;
  s.context_length = 128;
  s.rope_theta = 500000.0f;
  s.seed = 5;
  return s;
}

std::vector<float> dequantized(const gguf::TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.n_elements()));
  dequantize_row(t.type, t.data, out.data(), t.n_elements());
  return out;
}

void expect_shape(const GgufFile& f, const std::string& name, DType type, std::vector<int64_t> ne) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  ASSERT_NE(t, nullptr) << name;
  EXPECT_EQ(t->type, type) << name;
  EXPECT_EQ(t->ne, ne) << name;
}

void expect_llama_layout(const GgufFile& f, const RandomModelSpec& s, int64_t vocab) {
  const int64_t kv_dim = s.dim / s.n_heads * s.n_kv_heads;
  const DType m = s.file_type.base;
  EXPECT_EQ(f.tensors().size(), 3u + 9u * s.n_layers);
  expect_shape(f, "token_embd.weight", m, {s.dim, vocab});
  expect_shape(f, "output_norm.weight", DType::F32, {s.dim});
  expect_shape(f, "output.weight", m, {s.dim, vocab});
  for (int l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    expect_shape(f, p + "attn_norm.weight", DType::F32, {s.dim});
    expect_shape(f, p + "attn_q.weight", m, {s.dim, s.dim});
    expect_shape(f, p + "attn_k.weight", m, {s.dim, kv_dim});
    expect_shape(f, p + "attn_v.weight", m, {s.dim, kv_dim});
    expect_shape(f, p + "attn_output.weight", m, {s.dim, s.dim});
    expect_shape(f, p + "ffn_norm.weight", DType::F32, {s.dim});
    expect_shape(f, p + "ffn_gate.weight", m, {s.dim, s.ffn_dim});
    expect_shape(f, p + "ffn_up.weight", m, {s.dim, s.ffn_dim});
    expect_shape(f, p + "ffn_down.weight", m, {s.ffn_dim, s.dim});
  }
  EXPECT_EQ(f.get_string("general.architecture", ""), "llama");
  EXPECT_EQ(f.get_string("general.name", ""), s.name);
  EXPECT_EQ(f.get_int("llama.embedding_length", 0), s.dim);
  EXPECT_EQ(f.get_int("llama.block_count", 0), s.n_layers);
  EXPECT_EQ(f.get_int("llama.feed_forward_length", 0), s.ffn_dim);
  EXPECT_EQ(f.get_int("llama.attention.head_count", 0), s.n_heads);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv", 0), s.n_kv_heads);
  EXPECT_EQ(f.get_int("llama.rope.dimension_count", 0), s.dim / s.n_heads);
  EXPECT_EQ(f.get_int("llama.context_length", 0), s.context_length);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("llama.rope.freq_base", 0)), s.rope_theta);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("llama.attention.layer_norm_rms_epsilon", 0)), s.norm_eps);
}

TEST(RandomLlama, EveryMatrixTypeHasLlamaLayoutAndWeightSpread) {
  const std::pair<DType, int> types_and_ftypes[] = {
      {DType::F32, 0}, {DType::F16, 1}, {DType::BF16, 32}, {DType::Q8_0, 7},
      {DType::Q4_0, 2}, {DType::Q4_K, 14}, {DType::Q5_K, 16}, {DType::Q6_K, 18}};
  for (const auto& [type, ftype] : types_and_ftypes) {
    SCOPED_TRACE(std::string(dtype_info(type).name));
    const RandomModelSpec s = small_spec(type);
    TempFile out;
    write_random_model(s, out.path());
    const GgufFile f(out.path());
    expect_llama_layout(f, s, 512);
    EXPECT_EQ(f.get_int("general.file_type", -1), ftype);

    for (float v : dequantized(*f.find_tensor("blk.1.ffn_norm.weight"))) ASSERT_EQ(v, 1.0f);
    const std::vector<float> w = dequantized(*f.find_tensor("token_embd.weight"));
    double sum = 0, sq = 0;
    for (float v : w) sum += v, sq += double{v} * v;
    const double mean = sum / w.size(), stddev = std::sqrt(sq / w.size() - mean * mean);
    EXPECT_NEAR(mean, 0.0, 0.001);
    EXPECT_NEAR(stddev, 0.02, 0.002);
  }
}

// gen-model --type q4_k_m: each matrix has the type the mix rule gives it.
TEST(RandomLlama, Q4KMediumMix) {
  RandomModelSpec s = small_spec(DType::Q4_K);
  s.n_layers = 8;
  s.file_type = gguf::FileType(DType::Q4_K, true);
  TempFile out;
  write_random_model(s, out.path());
  const GgufFile f(out.path());
  EXPECT_EQ(f.get_int("general.file_type", -1), 15);
  int q6k = 0;
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (t.ne.size() == 1) continue;
    EXPECT_EQ(t.type, s.file_type.matrix_type(t.name, {8, true})) << t.name;
    q6k += t.type == DType::Q6_K;
  }
  EXPECT_EQ(q6k, 1 + 2 * 4);  // the head; attn_v and ffn_down of layers 0, 3, 6, 7 (use_more_bits)
  EXPECT_EQ(load_model(out.path())->config().file_type, "Q4_K_M");  // what skiff bench labels it
}

// Every family with experts: the file has the family's tensors and keys (as
// skiff reads them back: each layer a mixture of the spec's shape), the mix's
// types, and the model runs. K-quant mixes need widths of whole 256-blocks.
TEST(RandomModel, EveryMixtureOfExpertsFamily) {
  const struct {
    const char* arch;
    gguf::FileType type;
    bool shared;
  } cases[] = {{"qwen3moe", gguf::FileType(DType::Q4_K, true), false},
               {"qwen2moe", DType::Q8_0, true},
               {"olmoe", DType::Q8_0, false},
               {"granitemoe", DType::F16, false},
               {"llama", gguf::FileType(DType::Q4_K, true), false},
               {"gpt-oss", gguf::FileType::mxfp4_moe(), false}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.arch);
    RandomModelSpec s = small_spec(DType::Q4_K);  // dim 256
    s.arch = c.arch;
    s.file_type = c.type;
    s.n_experts = 8;
    s.n_experts_used = 2;
    s.expert_ffn_dim = 256;
    s.shared_expert_ffn_dim = c.shared ? 512 : 0;
    TempFile out;
    write_random_model(s, out.path());
    const GgufFile f(out.path());
    EXPECT_EQ(f.get_string("general.architecture", ""), c.arch);
    expect_shape(f, "blk.1.ffn_gate_inp.weight", DType::F32, {256, 8});  // routers stay F32
    const DType experts = c.type.matrix_type("blk.0.ffn_up_exps.weight", {2, true, true, 8});
    expect_shape(f, "blk.0.ffn_up_exps.weight", experts, {256, 256, 8});
    expect_shape(f, "blk.1.ffn_down_exps.weight", c.type.matrix_type("blk.1.ffn_down_exps.weight", {2, true, true, 8}),
                 {256, 256, 8});
    EXPECT_EQ(f.find_tensor("blk.0.ffn_up_shexp.weight") != nullptr, c.shared);
    auto model = load_model(out.path());
    for (const LayerSpec& layer : model->config().layers) {
      ASSERT_EQ(layer.ffn.kind, FfnKind::kExperts);
      EXPECT_EQ(layer.ffn.experts.n_experts, 8);
      EXPECT_EQ(layer.ffn.experts.n_used, 2);
      EXPECT_EQ(layer.ffn.experts.ffn_dim, 256);
      EXPECT_EQ(layer.ffn.experts.shared_ffn_dim, c.shared ? 512 : 0);
    }
    PagedKvCache kv = model->make_kv_cache(1, 16);
    const std::vector<float> logits = model->prefill(kv, 0, std::vector<int32_t>{1, 5, 9, 200});
    EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
  }
  RandomModelSpec dense_family = small_spec(DType::F16);
  dense_family.arch = "qwen3";
  dense_family.n_experts = 8, dense_family.n_experts_used = 2, dense_family.expert_ffn_dim = 64;
  TempFile out;
  EXPECT_THROW(write_random_model(dense_family, out.path()), Error);  // qwen3 has no experts
}

TEST(RandomLlama, CopiesTheTokenizerOfTheVocabSource) {
  RandomModelSpec s = small_spec(DType::F16);
  s.vocab_path = kModels + "/gguf/llama-2-tiny-random.gguf";
  s.n_layers = 1;
  TempFile out;
  write_random_model(s, out.path());
  const GgufFile f(out.path());
  const GgufFile vocab(s.vocab_path);
  expect_llama_layout(f, s, 32000);
  size_t copied = 0;
  for (const auto& [key, value] : vocab.metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    ASSERT_NE(f.find(key), nullptr) << key;
    EXPECT_EQ(f.find(key)->type, value.type) << key;
    ++copied;
  }
  EXPECT_GE(copied, 5u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens"), vocab.get_string_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(f.get_float_array("tokenizer.ggml.scores"), vocab.get_float_array("tokenizer.ggml.scores"));
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(RandomLlama, TheSeedDecidesTheWeights) {
  RandomModelSpec s = small_spec(DType::Q8_0);
  TempFile a, b, c;
  write_random_model(s, a.path());
  write_random_model(s, b.path());
  s.seed = 6;
  write_random_model(s, c.path());
  EXPECT_EQ(file_bytes(a.path()), file_bytes(b.path()));
  EXPECT_NE(file_bytes(a.path()), file_bytes(c.path()));
}

TEST(RandomLlama, RejectsImpossibleSpecs) {
  TempFile out;
  RandomModelSpec s = small_spec(DType::F16);
  s.n_heads = 5;  // 64 / 5
  EXPECT_THROW(write_random_model(s, out.path()), Error);
  s = small_spec(DType::F16);
  s.n_kv_heads = 3;  // 4 heads
  EXPECT_THROW(write_random_model(s, out.path()), Error);
  s = small_spec(DType::Q4_K);
  s.dim = 128;  // Q4_K rows need multiples of 256
  s.n_heads = 2;
  EXPECT_THROW(write_random_model(s, out.path()), Error);
  s = small_spec(DType::F16);
  s.vocab_path = kModels + "/no-such.gguf";
  EXPECT_THROW(write_random_model(s, out.path()), Error);
}

TEST(GenModelCommand, WritesTheModelItsFlagsDescribe) {
  TempFile out;
  const std::string cmd = std::string(SKIFF_BINARY) + " gen-model -o " + out.path() +
                          " --layers 3 --dim 64 --heads 8 --kv-heads 4 --ffn 96 --type q8_0 --vocab-from " +
                          kSmallVocab + " --ctx 64 --seed 2 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const GgufFile f(out.path());
  RandomModelSpec s = small_spec(DType::Q8_0);
  s.n_layers = 3, s.n_heads = 8, s.n_kv_heads = 4, s.ffn_dim = 96, s.context_length = 64;
  s.rope_theta = 10000.0f;
  expect_llama_layout(f, s, 512);

  // A mixture of experts by its flags.
  const std::string moe = std::string(SKIFF_BINARY) + " gen-model -o " + out.path() +
                          " --arch qwen2moe --layers 2 --dim 64 --heads 4 --kv-heads 2 --experts 8 --experts-used 2"
                          " --expert-ffn 32 --shared-expert-ffn 96 --type q8_0 --vocab-from " + kSmallVocab + " 2>/dev/null";
  ASSERT_EQ(std::system(moe.c_str()), 0) << moe;
  const GgufFile m(out.path());
  EXPECT_EQ(m.get_string("general.architecture", ""), "qwen2moe");
  EXPECT_EQ(m.get_int("qwen2moe.expert_count", 0), 8);
  EXPECT_EQ(m.get_int("qwen2moe.expert_used_count", 0), 2);
  EXPECT_EQ(m.get_int("qwen2moe.expert_feed_forward_length", 0), 32);
  EXPECT_EQ(m.get_int("qwen2moe.expert_shared_feed_forward_length", 0), 96);
  expect_shape(m, "blk.1.ffn_down_exps.weight", DType::Q8_0, {32, 64, 8});
  expect_shape(m, "blk.1.ffn_gate_inp_shexp.weight", DType::F32, {64});

  const std::string bad = std::string(SKIFF_BINARY) + " gen-model -o " + out.path() +
                          " --type q7_3 --vocab-from " + kSmallVocab + " 2>/dev/null";
  EXPECT_NE(std::system(bad.c_str()), 0);
}

}  // namespace
}  // namespace skiff

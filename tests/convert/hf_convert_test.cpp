// HF directory -> GGUF: the written model runs with GGUF's interleaved RoPE
// and gives the HF model's logits, and those of the llama.cpp-converted
// stories260K-f32.gguf, which proves the per-head Q/K row permutation. The
// tokenizer written as tokenizer.ggml.* keys encodes as the HF files do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "convert/quantize.h"
#include "gguf/gguf.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace skiff::convert {
namespace {

const std::string kModels = SKIFF_MODELS_DIR;
const std::string kStoriesHf = kModels + "/derived/stories260K-hf";
const std::string kStoriesGguf = kModels + "/derived/stories260K-f32.gguf";

// Logits after each of a few decode steps that follow a prefilled prompt.
std::vector<float> logits_trace(const std::string& path) {
  auto model = load_model(path);
  PagedKvCache kv = model->make_kv_cache(1, 64, KvType::kF32);
  std::vector<float> trace = model->prefill(kv, 0, std::vector<int32_t>{1, 403, 407, 261, 378, 429});
  for (int32_t t : {68, 259, 13, 288}) {
    const std::vector<float> step = model->decode(kv, 0, t);
    trace.insert(trace.end(), step.begin(), step.end());
  }
  return trace;
}

// Equal within float rounding: 1e-5 of the largest logit (the two RoPE
// layouts and kernel paths round differently, by ~1e-6 relative).
void expect_close(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  double scale = 0, max_diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, double(std::fabs(b[i])));
    max_diff = std::max(max_diff, double(std::fabs(a[i] - b[i])));
  }
  EXPECT_LE(max_diff, 1e-5 * scale) << what << " (largest logit " << scale << ")";
}

class HfToGguf : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new std::string(::testing::TempDir() + "/skiff_hf_stories260K-f32.gguf");
    quantize_model(kStoriesHf, *out_, DType::F32);
  }
  static void TearDownTestSuite() {
    std::remove(out_->c_str());
    delete out_;
  }
  static std::string* out_;
};
std::string* HfToGguf::out_ = nullptr;

TEST_F(HfToGguf, LogitsEqualHfModelAndLlamaCppConversion) {
  const std::vector<float> converted = logits_trace(*out_);
  expect_close(converted, logits_trace(kStoriesHf), "vs HF model");
  expect_close(converted, logits_trace(kStoriesGguf), "vs stories260K-f32.gguf");
}

TEST_F(HfToGguf, QkRowsArePermutedPerHead) {
  // The permutation is what makes the logits agree; check it on the tensors too.
  const gguf::GgufFile converted(*out_), reference(kStoriesGguf);
  for (const char* name : {"blk.0.attn_q.weight", "blk.3.attn_k.weight", "blk.2.attn_v.weight"}) {
    const gguf::TensorInfo* a = converted.find_tensor(name);
    const gguf::TensorInfo* b = reference.find_tensor(name);
    ASSERT_TRUE(a && b) << name;
    EXPECT_EQ(a->ne, b->ne) << name;
    const auto* fa = reinterpret_cast<const float*>(a->data);
    const auto* fb = reinterpret_cast<const float*>(b->data);
    for (int64_t i = 0; i < a->n_elements(); ++i) ASSERT_EQ(fa[i], fb[i]) << name << " at " << i;
  }
}

TEST_F(HfToGguf, LlamaMetadataAndTokenizer) {
  const gguf::GgufFile f(*out_);
  EXPECT_EQ(f.get_string("general.architecture", ""), "llama");
  EXPECT_EQ(f.get_int("llama.block_count", 0), 5);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv", 0), 4);
  EXPECT_FLOAT_EQ(f.get_float("llama.rope.freq_base", 0), 10000.0f);
  EXPECT_EQ(f.get_int("general.file_type", -1), 0);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model", ""), "llama");
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);  // tied, as config.json says

  const auto from_gguf = Tokenizer::from_gguf(f);
  const auto from_hf = Tokenizer::from_hf_dir(kStoriesHf);
  for (const char* text : {"Once upon a time, Lily saw a big dog.", " two  spaces\nand é"})
    EXPECT_EQ(from_gguf->encode(text, true, true), from_hf->encode(text, true, true)) << text;
  EXPECT_EQ(from_gguf->bos_id(), from_hf->bos_id());
  EXPECT_EQ(from_gguf->eos_id(), from_hf->eos_id());
}

}  // namespace
}  // namespace skiff::convert

// The hyperparameters a GGUF file may leave out, as llama.cpp's loader fills
// them in (src/models/gemma2.cpp, gemma3.cpp, phi3.cpp of the llama.cpp
// scripts/build-llama-cpp.sh builds): each case is a file of metadata and an
// embedding only, read by config_from_gguf; and what gguf_metadata (skiff
// quantize) writes of a config, read back.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "base/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/gguf_metadata.h"
#include "model/loader.h"

namespace skiff {
namespace {

using gguf::ValueType;

constexpr int kLayers = 6;

// The config of a file of these keys and an embedding [8, 64].
ModelConfig config_of_keys(const GgufMetadata& keys) {
  gguf::GgufWriter w;
  for (const auto& [key, value] : keys) w.set(key, value);
  w.add_tensor("token_embd.weight", DType::F32, {64, 8}, std::vector<uint8_t>(64 * 8 * 4));
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "defaults.gguf").string();
  w.write(path);
  ModelConfig config = config_from_gguf(gguf::GgufFile(path));
  std::filesystem::remove(path);
  return config;
}

// A 6-layer model of `arch` (width 64, 4 heads of 16) with `extra` keys.
ModelConfig config_of(const std::string& arch, const GgufMetadata& extra = {}) {
  GgufMetadata keys = {{"general.architecture", gguf::make_string(arch)},
                       {arch + ".block_count", gguf::make_uint(ValueType::UINT32, kLayers)},
                       {arch + ".embedding_length", gguf::make_uint(ValueType::UINT32, 64)},
                       {arch + ".feed_forward_length", gguf::make_uint(ValueType::UINT32, 128)},
                       {arch + ".attention.head_count", gguf::make_uint(ValueType::UINT32, 4)}};
  for (const auto& [key, value] : extra) keys.emplace_back(arch + "." + key, value);
  return config_of_keys(keys);
}

std::vector<int> windows(const ModelConfig& c) {
  std::vector<int> w;
  for (int l = 0; l < c.n_layers; ++l) w.push_back(c.window(l));
  return w;
}

// A layer count past the limit is refused before the layers' descriptions are
// allocated (a fuzzer's file asked for more than 2 GB of them).
TEST(GgufDefaults, AHugeLayerCountIsRefusedBeforeAllocating) {
  const GgufMetadata huge = {{"general.architecture", gguf::make_string("llama")},
                             {"llama.block_count", gguf::make_uint(ValueType::UINT32, 1 << 30)},
                             {"llama.embedding_length", gguf::make_uint(ValueType::UINT32, 64)},
                             {"llama.feed_forward_length", gguf::make_uint(ValueType::UINT32, 128)},
                             {"llama.attention.head_count", gguf::make_uint(ValueType::UINT32, 4)}};
  try {
    config_of_keys(huge);
    FAIL() << "a file of 2^30 layers was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer count must be in 1..4096, got 1073741824"), std::string::npos)
        << e.what();
  }
}

TEST(GgufDefaults, Gemma2) {
  const ModelConfig bare = config_of("gemma2");
  EXPECT_EQ(windows(bare), (std::vector<int>{4096, 0, 4096, 0, 4096, 0}));  // every other layer from the first
  EXPECT_FLOAT_EQ(bare.layers[0].attention.softcap, 50.0f);
  EXPECT_FLOAT_EQ(bare.logit_softcap, 30.0f);
  EXPECT_EQ(bare.layers[0].attention.rope, bare.layers[1].attention.rope);  // the local layers keep the global base
  EXPECT_FLOAT_EQ(bare.embedding_scale, 8.0f);
  const ModelConfig set = config_of("gemma2", {{"attention.sliding_window", gguf::make_uint(ValueType::UINT32, 256)},
                                               {"attn_logit_softcapping", gguf::make_float(ValueType::FLOAT32, 20)},
                                               {"final_logit_softcapping", gguf::make_float(ValueType::FLOAT32, 15)}});
  EXPECT_EQ(windows(set), (std::vector<int>{256, 0, 256, 0, 256, 0}));
  EXPECT_FLOAT_EQ(set.layers[0].attention.softcap, 20.0f);
  EXPECT_FLOAT_EQ(set.logit_softcap, 15.0f);
}

TEST(GgufDefaults, Gemma3) {
  const ModelConfig bare = config_of("gemma3");
  EXPECT_EQ(windows(bare), std::vector<int>(kLayers, 0));  // no window key: every layer global
  EXPECT_FLOAT_EQ(bare.logit_softcap, 0.0f);
  EXPECT_TRUE(bare.layers[0].attention.qk_norm);
  const ModelConfig set = config_of("gemma3", {{"attention.sliding_window", gguf::make_uint(ValueType::UINT32, 512)},
                                               {"final_logit_softcapping", gguf::make_float(ValueType::FLOAT32, 30)}});
  EXPECT_EQ(windows(set), (std::vector<int>{512, 512, 512, 512, 512, 0}));  // five of every six
  EXPECT_FALSE(set.layers[0].attention.rope.scaled);  // the local layers' own base, unscaled
  EXPECT_FLOAT_EQ(set.layers[0].attention.rope.theta, 10000.0f);
  EXPECT_FLOAT_EQ(set.logit_softcap, 30.0f);
  const ModelConfig every_other =
      config_of("gemma3", {{"attention.sliding_window", gguf::make_uint(ValueType::UINT32, 512)},
                           {"attention.sliding_window_pattern", gguf::make_uint(ValueType::UINT32, 2)},
                           {"rope.freq_base_swa", gguf::make_float(ValueType::FLOAT32, 5000)}});
  EXPECT_EQ(windows(every_other), (std::vector<int>{512, 0, 512, 0, 512, 0}));
  EXPECT_FLOAT_EQ(every_other.layers[0].attention.rope.theta, 5000.0f);
}

// A window in a Phi-3 file (its converter writes Phi-3 mini's 2047) applies to
// every layer, as transformers applies the config's; llama.cpp leaves it off.
TEST(GgufDefaults, Phi3) {
  const ModelConfig bare = config_of("phi3");
  EXPECT_EQ(windows(bare), std::vector<int>(kLayers, 0));
  EXPECT_TRUE(bare.rope_freq_factors.empty());
  EXPECT_FLOAT_EQ(bare.rope_mscale, 1.0f);
  const ModelConfig windowed = config_of("phi3", {{"attention.sliding_window", gguf::make_uint(ValueType::UINT32, 2047)}});
  EXPECT_EQ(windows(windowed), std::vector<int>(kLayers, 2047));
}

gguf::Value f32(double v) { return gguf::make_float(ValueType::FLOAT32, v); }

// YaRN as llama.cpp's converter writes it (type, factor, original context),
// with llama.cpp's defaults for the rest: betas 32 and 1, the bounds rounded
// out, YaRN's attention factor, times rope.scaling.attn_factor; a checkpoint's
// own factor (yarn_attn_factor) in its place.
TEST(GgufDefaults, Yarn) {
  const GgufMetadata yarn = {{"rope.scaling.type", gguf::make_string("yarn")},
                             {"rope.scaling.factor", f32(4)},
                             {"rope.scaling.original_context_length", gguf::make_uint(ValueType::UINT32, 32)}};
  const ModelConfig bare = config_of("qwen2", yarn);
  EXPECT_EQ(bare.rope_original_ctx, 32);
  EXPECT_FLOAT_EQ(bare.rope_yarn.beta_fast, 32.0f);
  EXPECT_FLOAT_EQ(bare.rope_yarn.beta_slow, 1.0f);
  EXPECT_TRUE(bare.rope_yarn.truncate);
  EXPECT_EQ(bare.rope_freq_factors, yarn_rope_factors(16, 10000.0f, YarnRope{4.0f}, 32));
  EXPECT_FLOAT_EQ(bare.rope_freq_factors[1], 1.6f);  // transformers' value, as config_test
  EXPECT_FLOAT_EQ(bare.rope_mscale, yarn_mscale(4.0f));

  GgufMetadata scaled = yarn;
  scaled.emplace_back("rope.scaling.attn_factor", f32(0.5));
  EXPECT_FLOAT_EQ(config_of("qwen2", scaled).rope_mscale, 0.5f * yarn_mscale(4.0f));
  scaled.emplace_back("rope.scaling.yarn_attn_factor", f32(1.25));
  EXPECT_FLOAT_EQ(config_of("qwen2", scaled).rope_mscale, 1.25f);
  GgufMetadata deepseek = yarn;
  deepseek.emplace_back("rope.scaling.yarn_log_multiplier", f32(0.1));
  EXPECT_THROW(config_of("qwen2", deepseek), Error);
  GgufMetadata no_factor = yarn;
  no_factor[1].second = f32(-2);
  EXPECT_THROW(config_of("qwen2", no_factor), Error);
}

// skiff quantize's keys give the config back: YaRN with every parameter off
// its default (gpt-oss's exact bounds, other betas, another attention factor).
TEST(GgufMetadataRoundTrip, Yarn) {
  ModelConfig c = config_of("qwen2");
  c.rope_yarn = {32.0f, 16.0f, 2.0f, false};
  c.rope_original_ctx = 64;
  c.rope_freq_factors = yarn_rope_factors(c.rope_dim, c.rope_theta, c.rope_yarn, c.rope_original_ctx);
  c.rope_mscale = 1.5f;
  const ModelConfig back = config_of_keys(gguf_metadata(c));
  EXPECT_EQ(back.rope_yarn.factor, 32.0f);
  EXPECT_EQ(back.rope_yarn.beta_fast, 16.0f);
  EXPECT_EQ(back.rope_yarn.beta_slow, 2.0f);
  EXPECT_FALSE(back.rope_yarn.truncate);
  EXPECT_EQ(back.rope_original_ctx, 64);
  EXPECT_EQ(back.rope_freq_factors, c.rope_freq_factors);
  EXPECT_FLOAT_EQ(back.rope_mscale, 1.5f);
  c.rope_mscale = yarn_mscale(32.0f);  // the default: no key for it
  EXPECT_FLOAT_EQ(config_of_keys(gguf_metadata(c)).rope_mscale, c.rope_mscale);
}

}  // namespace
}  // namespace skiff

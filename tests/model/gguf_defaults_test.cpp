// The hyperparameters a GGUF file may leave out, as llama.cpp's loader fills
// them in (src/models/gemma2.cpp, gemma3.cpp, phi3.cpp of the llama.cpp
// scripts/build-llama-cpp.sh builds): each case is a file of metadata and an
// embedding only, read by config_from_gguf.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/loader.h"

namespace skiff {
namespace {

using gguf::ValueType;

constexpr int kLayers = 6;

// A 6-layer model of `arch` (width 64, 4 heads of 16) with `extra` keys.
ModelConfig config_of(const std::string& arch, const std::vector<std::pair<std::string, gguf::Value>>& extra = {}) {
  gguf::GgufWriter w;
  w.set("general.architecture", gguf::make_string(arch));
  w.set(arch + ".block_count", gguf::make_uint(ValueType::UINT32, kLayers));
  w.set(arch + ".embedding_length", gguf::make_uint(ValueType::UINT32, 64));
  w.set(arch + ".feed_forward_length", gguf::make_uint(ValueType::UINT32, 128));
  w.set(arch + ".attention.head_count", gguf::make_uint(ValueType::UINT32, 4));
  for (const auto& [key, value] : extra) w.set(arch + "." + key, value);
  w.add_tensor("token_embd.weight", DType::F32, {64, 8}, std::vector<uint8_t>(64 * 8 * 4));
  const std::string path = (std::filesystem::path(::testing::TempDir()) / ("defaults_" + arch + ".gguf")).string();
  w.write(path);
  ModelConfig config = config_from_gguf(gguf::GgufFile(path));
  std::filesystem::remove(path);
  return config;
}

std::vector<int> windows(const ModelConfig& c) {
  std::vector<int> w;
  for (int l = 0; l < c.n_layers; ++l) w.push_back(c.window(l));
  return w;
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

}  // namespace
}  // namespace skiff

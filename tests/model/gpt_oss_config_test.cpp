// gpt-oss's facts that its files cannot change: the router softmaxes its top
// k logits (llama.cpp's SOFTMAX_WEIGHT gating, which reads no
// expert_weights_norm; transformers' GptOssTopKRouter, which reads no
// norm_topk_prob), the clamped SwiGLU, sinks and biases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "hf_reference.h"
#include "model/loader.h"

namespace skiff {
namespace {

using gguf::ValueType;

void expect_gpt_oss_facts(const ModelConfig& c) {
  for (const LayerSpec& layer : c.layers) {
    EXPECT_EQ(layer.ffn.kind, FfnKind::kExperts);
    EXPECT_TRUE(layer.ffn.experts.normalize) << "the softmax of the top k";
    EXPECT_TRUE(layer.ffn.experts.biases);
    EXPECT_EQ(layer.ffn.activation, Activation::kSwigluOai);
    EXPECT_TRUE(layer.attention.sinks);
    EXPECT_TRUE(layer.attention.qkv_bias && layer.attention.o_bias);
  }
}

// A 2-layer gpt-oss GGUF of metadata, an embedding and routers, whose
// expert_weights_norm says false.
TEST(GptOssConfig, GgufExpertWeightsNormDoesNotChangeTheRouting) {
  gguf::GgufWriter w;
  const std::string a = "gpt-oss.";
  w.set("general.architecture", gguf::make_string("gpt-oss"));
  for (const auto& [key, v] : {std::pair{"block_count", 2}, {"embedding_length", 64}, {"feed_forward_length", 32},
                               {"attention.head_count", 4}, {"expert_count", 8}, {"expert_used_count", 2},
                               {"expert_feed_forward_length", 32}})
    w.set(a + key, gguf::make_uint(ValueType::UINT32, v));
  w.set(a + "expert_weights_norm", gguf::make_bool(false));
  w.add_tensor("token_embd.weight", DType::F32, {64, 8}, std::vector<uint8_t>(64 * 8 * 4));
  for (int l = 0; l < 2; ++l)
    w.add_tensor("blk." + std::to_string(l) + ".ffn_gate_inp.weight", DType::F32, {64, 8},
                 std::vector<uint8_t>(64 * 8 * 4));
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "gpt_oss_norm.gguf").string();
  w.write(path);
  const ModelConfig c = config_from_gguf(gguf::GgufFile(path));
  std::filesystem::remove(path);
  expect_gpt_oss_facts(c);
  EXPECT_EQ(c.window(0), 128);  // llama.cpp's window, on every other layer from the first
  EXPECT_EQ(c.window(1), 0);
}

TEST(GptOssConfig, HfNormTopkProbDoesNotChangeTheRouting) {
  std::ifstream in(testing::kHfDataDir / "gpt_oss" / "config.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["norm_topk_prob"] = false;
  expect_gpt_oss_facts(config_from_hf(j));
}

}  // namespace
}  // namespace skiff

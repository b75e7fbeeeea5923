// Hugging Face checkpoints against Hugging Face transformers itself: tiny
// random Llama/Mistral models written by save_pretrained, with the logits
// transformers computed for them in float64 (tools/make_hf_golden.py). They
// cover what the real tiny models do not: GQA with head_dim != hidden/heads,
// Llama-3 and linear RoPE scaling over a context past the original one, an
// untied lm_head, Mistral, YaRN, and transformers 5's `rope_parameters` config
// form (each is also tried in the older `rope_theta` + `rope_scaling` form);
// gpt-oss's attention (sinks, output bias) before its family.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "convert/quantize.h"
#include "hf_reference.h"
#include "model/loader.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::batched_logits;
using testing::read_json;
using testing::read_reference;
using testing::Reference;

const fs::path kDataDir = testing::kHfDataDir;
constexpr double kTol = 1e-4;

int argmax(const float* v, int n) { return static_cast<int>(std::max_element(v, v + n) - v); }

// Largest |got - want| over the reference rows; `row(pos)` gives skiff's row.
template <typename RowFn>
double max_diff(const Reference& ref, int vocab, RowFn row) {
  double worst = 0;
  for (size_t r = 0; r < ref.logit_positions.size(); ++r) {
    const float* got = row(ref.logit_positions[r]);
    EXPECT_EQ(ref.logits[r].size(), static_cast<size_t>(vocab));
    for (int i = 0; i < vocab; ++i) worst = std::max(worst, std::abs(got[i] - ref.logits[r][i]));
  }
  return worst;
}

void check_argmax(const Reference& ref, int vocab, const std::vector<float>& all,
                  const std::string& what) {
  for (size_t p = 0; p < ref.ids.size(); ++p)
    EXPECT_EQ(argmax(&all[p * vocab], vocab), ref.argmax[p]) << what << ", position " << p;
}

class HfReference : public ::testing::TestWithParam<std::string> {};

TEST_P(HfReference, BatchedPrefillMatchesTransformers) {
  const fs::path dir = kDataDir / GetParam();
  const Reference ref = read_reference(dir);
  auto model = load_model(dir.string());
  const int vocab = model->config().vocab_size;
  const int n = static_cast<int>(ref.ids.size());
  const std::vector<float> all = batched_logits(*model, ref.ids);
  const double diff = max_diff(ref, vocab, [&](int pos) { return &all[pos * vocab]; });
  std::cout << "[ " << GetParam() << " ] batched prefill: max |logit - transformers| = " << diff
            << "\n";
  RecordProperty("max_abs_logit_diff", std::to_string(diff));
  EXPECT_LE(diff, kTol);
  check_argmax(ref, vocab, all, "batched");

  // The usual shape: logits for only the last few rows, and prefill's last row.
  const int n_out = static_cast<int>(ref.logit_positions.size());
  PagedKvCache kv = model->make_kv_cache(1, n, KvType::kF32);
  Batch batch{ref.ids, {{0, 0, n, n_out}}};
  std::vector<float> tail(static_cast<size_t>(n_out) * vocab);
  model->forward_and_append(batch, kv, tail.data());
  EXPECT_LE(max_diff(ref, vocab, [&](int pos) { return &tail[(pos - (n - n_out)) * vocab]; }), kTol);
  kv.truncate(0, 0);
  const std::vector<float> last = model->prefill(kv, 0, ref.ids);
  for (int i = 0; i < vocab; ++i) ASSERT_NEAR(last[i], ref.logits.back()[i], kTol) << i;
}

TEST_P(HfReference, StepwiseDecodeMatchesTransformers) {
  const fs::path dir = kDataDir / GetParam();
  const Reference ref = read_reference(dir);
  auto model = load_model(dir.string());
  const int vocab = model->config().vocab_size;
  const int n = static_cast<int>(ref.ids.size());
  PagedKvCache kv = model->make_kv_cache(1, n, KvType::kF32);
  std::vector<float> all(static_cast<size_t>(n) * vocab);
  for (int p = 0; p < n; ++p) {
    const std::vector<float> row = model->decode(kv, 0, ref.ids[p]);
    std::copy(row.begin(), row.end(), all.begin() + static_cast<size_t>(p) * vocab);
  }
  const double diff = max_diff(ref, vocab, [&](int pos) { return &all[pos * vocab]; });
  std::cout << "[ " << GetParam() << " ] stepwise decode: max |logit - transformers| = " << diff
            << "\n";
  EXPECT_LE(diff, kTol);
  check_argmax(ref, vocab, all, "stepwise");
  const std::vector<float> batched = batched_logits(*model, ref.ids);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_NEAR(all[i], batched[i], kTol / 2) << i;
}

// transformers < 5 writes the same RoPE settings as top-level `rope_theta` and
// `rope_scaling`; both forms must load to the same model.
TEST_P(HfReference, LegacyRopeConfigFormAgrees) {
  const fs::path dir = kDataDir / GetParam();
  json config = read_json(dir / "config.json");
  ASSERT_TRUE(config.contains("rope_parameters"));
  json params = config["rope_parameters"];
  config.erase("rope_parameters");
  if (params.contains("full_attention")) {  // Gemma 3: per layer type; the local base had its own key
    config["rope_local_base_freq"] = params["sliding_attention"].at("rope_theta");
    params = json(params["full_attention"]);
  }
  // Top-level keys before transformers 5 (Llama-3 kept its original context inside rope_scaling).
  for (const char* key : {"partial_rotary_factor", "original_max_position_embeddings"})
    if (params.contains(key) && (key[0] == 'p' || params.value("rope_type", "") == "longrope")) {
      config[key] = params[key];
      params.erase(key);
    }
  config["rope_theta"] = params.at("rope_theta");
  params.erase("rope_theta");
  if (params.value("rope_type", "default") != "default") {
    params["type"] = params["rope_type"];  // the oldest spelling, kept beside rope_type
    config["rope_scaling"] = params;
  } else {
    config["rope_scaling"] = nullptr;
  }
  const fs::path legacy = fs::path(::testing::TempDir()) / ("hf_legacy_" + GetParam());
  fs::remove_all(legacy);
  fs::create_directories(legacy);
  fs::copy_file(dir / "model.safetensors", legacy / "model.safetensors");
  std::ofstream(legacy / "config.json") << config.dump(2);

  const Reference ref = read_reference(dir);
  auto model = load_model(legacy.string());
  const int vocab = model->config().vocab_size;
  const std::vector<float> all = batched_logits(*model, ref.ids);
  EXPECT_LE(max_diff(ref, vocab, [&](int pos) { return &all[pos * vocab]; }), kTol);
  check_argmax(ref, vocab, all, "legacy config");
}

// skiff quantize ... F32 writes the architecture's GGUF keys and tensors; the
// file gives transformers' logits again.
TEST_P(HfReference, ConvertedToGgufAgrees) {
  const fs::path dir = kDataDir / GetParam();
  const std::string gguf = (fs::path(::testing::TempDir()) / (GetParam() + ".gguf")).string();
  convert::quantize_model(dir.string(), gguf, DType::F32);
  const Reference ref = read_reference(dir);
  auto model = load_model(gguf);
  EXPECT_EQ(model->config().arch, load_model(dir.string())->config().arch);
  const int vocab = model->config().vocab_size;
  const std::vector<float> all = batched_logits(*model, ref.ids);
  const double diff = max_diff(ref, vocab, [&](int pos) { return &all[pos * vocab]; });
  std::cout << "[ " << GetParam() << " ] converted to GGUF: max |logit - transformers| = " << diff << "\n";
  EXPECT_LE(diff, kTol);
  check_argmax(ref, vocab, all, "converted");
  fs::remove(gguf);
}

INSTANTIATE_TEST_SUITE_P(Transformers, HfReference,
                         ::testing::Values("llama3_gqa", "llama_mha_tied_linear", "mistral_gqa", "mistral_swa",
                                           "qwen2_gqa_bias_tied", "qwen3_qknorm", "gemma2_softcap_swa",
                                           "gemma3_swa_qknorm", "phi3_plain", "phi3_longrope", "qwen3_moe",
                                           "qwen2_moe", "olmoe", "mixtral", "granite_moe", "qwen2_yarn", "gpt_oss",
                                           "gpt_oss_attention"),
                         [](const auto& info) { return info.param; });

// The loaded configuration itself, so a failure above points at the field.
TEST(HfReferenceConfig, FieldsAsTransformersWroteThem) {
  auto a = load_model((kDataDir / "llama3_gqa").string());
  EXPECT_EQ(a->config().n_heads, 8);
  EXPECT_EQ(a->config().n_kv_heads, 2);
  EXPECT_EQ(a->config().head_dim, 16);
  EXPECT_FLOAT_EQ(a->config().rope_theta, 500000.0f);
  EXPECT_FALSE(a->config().tied_output);
  ASSERT_EQ(a->config().rope_freq_factors.size(), 8u);
  EXPECT_FLOAT_EQ(a->config().rope_freq_factors[0], 1.0f);   // wavelength 6.3 < 16: kept
  EXPECT_GT(a->config().rope_freq_factors[1], 1.0f);         // 32.5 in [16, 64]: blended
  EXPECT_LT(a->config().rope_freq_factors[1], 8.0f);
  EXPECT_FLOAT_EQ(a->config().rope_freq_factors[7], 8.0f);   // > 64: scaled
  auto b = load_model((kDataDir / "llama_mha_tied_linear").string());
  EXPECT_EQ(b->config().head_dim, 12);
  EXPECT_TRUE(b->config().tied_output);
  EXPECT_FLOAT_EQ(b->config().norm_eps, 1e-6f);
  EXPECT_EQ(b->config().rope_freq_factors, std::vector<float>(6, 2.0f));
  auto c = load_model((kDataDir / "mistral_gqa").string());
  EXPECT_FLOAT_EQ(c->config().rope_theta, 1e6f);
  EXPECT_TRUE(c->config().rope_freq_factors.empty());
}

// LongRoPE's short factors serve contexts up to the original one: a model set
// to such a context runs as one whose long factors were the short ones.
TEST(HfReferenceConfig, LongRopeShortFactorsForShortContexts) {
  const fs::path dir = kDataDir / "phi3_longrope";
  json config = read_json(dir / "config.json");
  config["rope_parameters"]["long_factor"] = config["rope_parameters"]["short_factor"];
  const fs::path both_short = fs::path(::testing::TempDir()) / "phi3_longrope_short";
  fs::remove_all(both_short);
  fs::create_directories(both_short);
  fs::copy_file(dir / "model.safetensors", both_short / "model.safetensors");
  std::ofstream(both_short / "config.json") << config.dump(2);

  const std::vector<int32_t> ids = read_reference(dir).ids;
  const std::vector<int32_t> first(ids.begin(), ids.begin() + 32);
  auto model = load_model(dir.string());
  const std::vector<float> long_logits = batched_logits(*model, first);
  model->set_context_length(32);  // the original context
  const std::vector<float> short_logits = batched_logits(*model, first);
  const std::vector<float> expected = batched_logits(*load_model(both_short.string()), first);
  EXPECT_EQ(short_logits, expected);
  EXPECT_NE(short_logits, long_logits);
  model->set_context_length(33);
  EXPECT_EQ(batched_logits(*model, first), long_logits);
}

// YaRN's divisors and attention factor as transformers computed them for
// qwen2_yarn (factor 4 over 32 positions, head_dim 16, theta 1e4).
TEST(HfReferenceConfig, YarnAsTransformersComputesIt) {
  const ModelConfig c = load_model((kDataDir / "qwen2_yarn").string())->config();
  EXPECT_EQ(c.rope_freq_factors, (std::vector<float>{1.0f, 1.6f, 4, 4, 4, 4, 4, 4}));
  EXPECT_FLOAT_EQ(c.rope_mscale, 1.138629436f);
  EXPECT_EQ(c.rope_original_ctx, 32);
  EXPECT_TRUE(c.rope_yarn.truncate);
}

}  // namespace
}  // namespace skiff

// skiff quantize: each output type loads and gives the logits of an F32 model
// built from its own dequantized tensors (the quantized file holds exactly
// what it claims); block-size fallbacks; metadata; and quantization error
// against the original F32 model within what each type's precision allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "convert/quantize.h"
#include "each_isa.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "kernels/isa.h"
#include "kernels/quant/quant.h"
#include "model/architecture.h"
#include "model/loader.h"
#include "model/random_model.h"

namespace skiff::convert {
namespace {

const std::string kModels = SKIFF_MODELS_DIR;
const std::string kStoriesF32 = kModels + "/derived/stories260K-f32.gguf";
const std::vector<int32_t> kPrompt = {1, 403, 407, 261, 378, 429, 68, 259, 13, 288};

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/skiff_quantize_" + name + ".gguf";
}

// Logits of the prompt's last token, then of one decode step after it.
std::vector<float> prompt_logits(Model& model) {
  PagedKvCache kv = model.make_kv_cache(1, 64, KvType::kF32);
  std::vector<float> logits = model.prefill(kv, 0, kPrompt);
  const std::vector<float> next = model.decode(kv, 0, 42);
  logits.insert(logits.end(), next.begin(), next.end());
  return logits;
}

// The model a quantized file describes, rebuilt with every tensor dequantized to F32.
std::unique_ptr<Model> dequantized_model(const std::string& path) {
  const gguf::GgufFile file(path);
  TensorMap tensors;
  std::vector<std::shared_ptr<const void>> storage;
  for (const gguf::TensorInfo& t : file.tensors()) {
    auto values = std::make_shared<std::vector<float>>(t.n_elements());
    dequantize_row(t.type, t.data, values->data(), t.n_elements());
    tensors[t.name] = TensorRef{DType::F32, t.n_elements() / t.ne[0], t.ne[0], values->data()};
    storage.push_back(values);
  }
  ModelConfig config = config_from_gguf(file);
  ModelWeights weights = build_weights(config, gguf_architecture(config.arch), tensors, 0.0f);
  weights.storage = std::move(storage);
  return std::make_unique<Model>(std::move(config), std::move(weights));
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

// The scalar kernels dequantize each row and dot it in float, so a quantized
// model and its dequantized twin run the same arithmetic.

void expect_tensor_types(const std::string& path, DType target, int expected_fallbacks) {
  const gguf::GgufFile file(path);
  int fallbacks = 0;
  for (const gguf::TensorInfo& t : file.tensors()) {
    EXPECT_EQ(t.type, tensor_type(target, t.name, t.ne)) << t.name;
    if (t.ne.size() == 1) {
      EXPECT_EQ(t.type, DType::F32) << t.name;
    }
    if (t.ne.size() >= 2 && t.type != target) ++fallbacks;
  }
  EXPECT_EQ(fallbacks, expected_fallbacks) << dtype_info(target).name;
}

TEST(QuantizeTypes, FallbacksFollowBlockSizes) {
  EXPECT_EQ(tensor_type(DType::Q4_K, "m.weight", {256, 8}), DType::Q4_K);
  // llama-quantize's fallbacks for rows that are not whole 256-blocks (896 = 3.5 blocks: Qwen2.5 0.5B).
  EXPECT_EQ(tensor_type(DType::Q4_K, "m.weight", {64, 512}), DType::Q5_0);
  EXPECT_EQ(tensor_type(DType::Q4_K, "m.weight", {896, 4864}), DType::Q5_0);
  EXPECT_EQ(tensor_type(DType::Q5_K, "m.weight", {896, 64}), DType::Q5_1);
  EXPECT_EQ(tensor_type(DType::Q6_K, "m.weight", {96, 4}), DType::Q8_0);
  EXPECT_EQ(tensor_type(DType::Q2_K, "m.weight", {640, 8}), DType::IQ4_NL);
  EXPECT_EQ(tensor_type(DType::Q3_K, "m.weight", {640, 8}), DType::IQ4_NL);
  EXPECT_EQ(tensor_type(DType::IQ4_XS, "m.weight", {640, 8}), DType::IQ4_NL);
  EXPECT_EQ(tensor_type(DType::IQ4_XS, "m.weight", {256, 8}), DType::IQ4_XS);
  EXPECT_EQ(tensor_type(DType::Q5_0, "m.weight", {896, 8}), DType::Q5_0);
  EXPECT_EQ(tensor_type(DType::Q4_0, "m.weight", {172, 64}), DType::F16);
  EXPECT_EQ(tensor_type(DType::Q4_K, "m.weight", {172, 64}), DType::F16);
  EXPECT_EQ(tensor_type(DType::Q3_K, "m.weight", {172, 64}), DType::F16);
  EXPECT_EQ(tensor_type(DType::BF16, "m.weight", {172, 64}), DType::BF16);
  EXPECT_EQ(tensor_type(DType::Q8_0, "m.weight", {64}), DType::F32);
  EXPECT_EQ(tensor_type(DType::Q8_0, "blk.0.ffn_gate_exps.bias", {256, 32}), DType::F32);  // gpt-oss's expert biases
  EXPECT_EQ(gguf::FileType(DType::Q8_0).id(), 7u);
  EXPECT_EQ(gguf::FileType(DType::Q4_0).id(), 2u);
  EXPECT_EQ(gguf::FileType(DType::BF16).id(), 32u);
  // LLAMA_FTYPE_MOSTLY_*: the plain K-quant files get their _S ids.
  const std::pair<DType, uint32_t> ids[] = {{DType::Q4_1, 3},  {DType::Q5_0, 8},    {DType::Q5_1, 9},
                                            {DType::Q2_K, 10}, {DType::Q3_K, 11},   {DType::IQ4_NL, 25},
                                            {DType::IQ4_XS, 30}};
  for (const auto& [type, id] : ids) {
    EXPECT_EQ(gguf::FileType(type).id(), id) << dtype_info(type).name;
    ASSERT_TRUE(gguf::file_type_from_id(id).has_value()) << id;
    EXPECT_EQ(gguf::file_type_from_id(id)->base, type) << id;
  }
}

struct TypeCase {
  DType type;
  int fallbacks;  // stories260K: the 5 ffn_down (rows of 172); for the K-quants all 37 matrices (dim 64)
  // Bound on max |logit - F32 logit| / max |F32 logit|, about 2.5x the measured
  // 0, 8.8e-4 (F16), 4.8e-3 (BF16), 2.5e-2 (Q8_0), 0.25 (Q4_0), 0.26 (Q4_1), 0.13 (Q5_0,
  // and Q4_K, which is Q5_0 here), 0.14 (Q5_1), 0.21 (IQ4_NL, and Q2_K / Q3_K, IQ4_NL here), 0.36 (MXFP4).
  double max_rel_error;
};

class QuantizeStories : public ::testing::TestWithParam<TypeCase> {};

TEST_P(QuantizeStories, LogitsEqualTheDequantizedModel) {
  const TypeCase c = GetParam();
  const std::string out = temp_path(std::string(dtype_info(c.type).name));
  const QuantizeSummary s = quantize_model(kStoriesF32, out, c.type);
  EXPECT_EQ(s.n_fallbacks, c.fallbacks);
  expect_tensor_types(out, c.type, c.fallbacks);

  const gguf::GgufFile in_file(kStoriesF32), out_file(out);
  for (const auto& [key, value] : in_file.metadata())
    if (key != "general.file_type") {
      EXPECT_NE(out_file.find(key), nullptr) << key;
    }
  EXPECT_EQ(out_file.get_int("general.file_type", -1), gguf::FileType(c.type).id());
  EXPECT_EQ(out_file.get_int("general.quantization_version", -1), 2);

  const testing::IsaGuard restore_isa;
  set_active_isa(Isa::kScalar);
  auto quantized = load_model(out);
  const std::vector<float> logits = prompt_logits(*quantized);
  const std::vector<float> reference = prompt_logits(*dequantized_model(out));
  EXPECT_LE(max_abs_diff(logits, reference), 1e-5 * max_abs(reference)) << dtype_info(c.type).name;

  const std::vector<float> f32 = prompt_logits(*load_model(kStoriesF32));
  const double rel = max_abs_diff(logits, f32) / max_abs(f32);
  EXPECT_LE(rel, c.max_rel_error) << dtype_info(c.type).name;
  if (c.type != DType::F32) {
    EXPECT_GT(rel, 0.0) << "quantizing changed nothing";
  }
  std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Types, QuantizeStories,
    ::testing::Values(TypeCase{DType::F32, 0, 0.0}, TypeCase{DType::F16, 0, 3e-3},
                      TypeCase{DType::BF16, 0, 1.5e-2}, TypeCase{DType::Q8_0, 5, 6e-2},
                      TypeCase{DType::Q4_0, 5, 0.6}, TypeCase{DType::Q4_K, 37, 0.35},
                      TypeCase{DType::Q4_1, 5, 0.65}, TypeCase{DType::Q5_0, 5, 0.35},
                      TypeCase{DType::Q5_1, 5, 0.35}, TypeCase{DType::IQ4_NL, 5, 0.55},
                      TypeCase{DType::Q2_K, 37, 0.55}, TypeCase{DType::Q3_K, 37, 0.55},
                      TypeCase{DType::MXFP4, 5, 0.9}),
    [](const auto& info) { return std::string(dtype_info(info.param.type).name); });

// See QuantizeStories.RepackedMatchesTheRows.
void check_repacked_against_rows(const std::string& out, DType type) {
  const testing::IsaGuard restore_isa;
  set_active_isa(Isa::kAvx512);
  auto packed = load_model(out, LoadOptions{FileLoad::kCopy});
  auto rows = load_model(out, LoadOptions{FileLoad::kMmap});
  EXPECT_EQ(packed->weights().layers[0].attention.wq.layout, MatrixLayout::kPanels);
  EXPECT_EQ(rows->weights().layers[0].attention.wq.layout, MatrixLayout::kRows);
  const std::vector<float> from_rows = prompt_logits(*rows);
  const std::vector<float> from_panels = prompt_logits(*packed);
  EXPECT_LE(max_abs_diff(from_panels, from_rows), 1e-5 * max_abs(from_rows));
  if (type != DType::F16) {  // the integer kernels' 8-bit activations, on both paths
    const std::vector<float> dequantized = prompt_logits(*dequantized_model(out));
    EXPECT_GT(max_abs_diff(from_rows, dequantized), 0.0);
    EXPECT_GT(max_abs_diff(from_panels, dequantized), 0.0);
  }

  set_active_isa(Isa::kScalar);
  const std::vector<float> reference = prompt_logits(*dequantized_model(out));
  EXPECT_LE(max_abs_diff(prompt_logits(*packed), reference), 1e-5 * max_abs(reference));
}

// Read into memory on AVX-512, Q8_0, the other blocks of 32, Q4_K and F16 matrices are repacked into
// panels (kernels/matmul/repack.h); mapped, they stay rows. On AVX-512 both go
// through the same arithmetic and agree to float rounding;
// on the scalar ISA the panels are read back exactly and give the dequantized
// model's logits.
TEST(QuantizeStories, RepackedMatchesTheRows) {
  if (!isa_supported(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::MXFP4,
                     DType::F16}) {
    SCOPED_TRACE(dtype_info(type).name);
    const std::string out = temp_path(std::string(dtype_info(type).name) + "_repacked");
    quantize_model(kStoriesF32, out, type);
    check_repacked_against_rows(out, type);
    std::remove(out.c_str());
  }
}

// The K-quants and IQ4_XS need rows of 256: a generated dim-256 model, every
// matrix converted; and the Q4_K_M mix.
TEST(QuantizeRandom, KQuantsWithRowsOf256) {
  RandomModelSpec spec;
  spec.n_layers = 2;
  spec.dim = 256;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 512;
  spec.context_length = 128;
  spec.file_type = DType::F32;
  spec.vocab_path = kModels + "/gguf/llama-2-tiny-random.gguf";
  const std::string f32 = temp_path("random-f32");
  write_random_model(spec, f32);
  for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q2_K, DType::Q3_K, DType::IQ4_XS}) {
    SCOPED_TRACE(dtype_info(type).name);
    const std::string out = temp_path("random-k");
    const QuantizeSummary s = quantize_model(f32, out, type);
    EXPECT_EQ(s.n_fallbacks, 0);
    EXPECT_LT(s.output_bytes * 5, s.input_bytes);  // 2.6 to 5.5 bits per weight against 32
    EXPECT_EQ(gguf::GgufFile(out).get_int("general.file_type", -1), gguf::FileType(type).id());
    expect_tensor_types(out, type, 0);

    const testing::IsaGuard restore_isa;
    set_active_isa(Isa::kScalar);
    const std::vector<float> logits = prompt_logits(*load_model(out));
    const std::vector<float> reference = prompt_logits(*dequantized_model(out));
    EXPECT_LE(max_abs_diff(logits, reference), 1e-5 * max_abs(reference));
    if ((type == DType::Q4_K || type == DType::IQ4_XS) && isa_supported(Isa::kAvx512)) check_repacked_against_rows(out, type);
    std::remove(out.c_str());
  }

  // Q4_K_M: with 2 layers, use_more_bits picks layer 1; the head is Q6_K too.
  const std::string mixed = temp_path("random-q4km");
  EXPECT_EQ(quantize_model(f32, mixed, gguf::FileType(DType::Q4_K, true)).n_fallbacks, 0);
  const gguf::GgufFile file(mixed);
  EXPECT_EQ(file.get_int("general.file_type", -1), 15);
  for (const gguf::TensorInfo& t : file.tensors()) {
    const bool q6 = t.name == "output.weight" || t.name == "blk.1.attn_v.weight" || t.name == "blk.1.ffn_down.weight";
    EXPECT_EQ(t.type, t.ne.size() == 1 ? DType::F32 : q6 ? DType::Q6_K : DType::Q4_K) << t.name;
  }
  const testing::IsaGuard restore_isa;
  set_active_isa(Isa::kScalar);
  const std::vector<float> reference = prompt_logits(*dequantized_model(mixed));
  EXPECT_LE(max_abs_diff(prompt_logits(*load_model(mixed)), reference), 1e-5 * max_abs(reference));
  std::remove(mixed.c_str());
  std::remove(f32.c_str());
}

// MXFP4_MOE on a dense model (no experts): every matrix Q8_0 (the 5 ffn_down,
// rows of 172, F16), llama.cpp's file type 38; the model loads and gives its
// dequantized twin's logits.
TEST(QuantizeStories, Mxfp4MoeMixOfADenseModelIsQ8_0) {
  const std::string out = temp_path("mxfp4_moe");
  EXPECT_EQ(quantize_model(kStoriesF32, out, gguf::FileType::mxfp4_moe()).n_fallbacks, 5);
  expect_tensor_types(out, DType::Q8_0, 5);
  EXPECT_EQ(gguf::GgufFile(out).get_int("general.file_type", -1), 38);
  const testing::IsaGuard restore_isa;
  set_active_isa(Isa::kScalar);
  const std::vector<float> reference = prompt_logits(*dequantized_model(out));
  EXPECT_LE(max_abs_diff(prompt_logits(*load_model(out)), reference), 1e-5 * max_abs(reference));
  std::remove(out.c_str());
}

TEST(QuantizeErrors, OutputOverInputAndMissingInput) {
  EXPECT_THROW(quantize_model(kStoriesF32, kStoriesF32, DType::Q8_0), Error);
  EXPECT_THROW(quantize_model(kStoriesF32, temp_path("iq3_s"), DType::IQ3_S), Error);  // read only
  EXPECT_THROW(quantize_model(kModels + "/nonexistent.gguf", temp_path("x"), DType::Q8_0), Error);
}

}  // namespace
}  // namespace skiff::convert

// gpt-oss checkpoints whose experts are stored as MXFP4 blocks and scales, as
// OpenAI publishes them (tests/data/hf/gpt_oss_mxfp4, tools/make_hf_mxfp4_golden.py):
// transformers dequantizes them and computes the reference in float64, so the
// comparison checks the layout and the kernels, not MXFP4's rounding. skiff
// repacks the bytes into GGUF's blocks and runs its MXFP4 kernels: the scalar
// ones multiply in float (the layout alone: 1e-5 of the logits' range), the
// SIMD ones with refined (~15-bit) activations within 1e-3. Their default
// 8-bit activations move this random model's logits by 2% of their range (it
// amplifies any rounding: MXFP4's own moved them by 4.4 of ~5), so that path
// is held to a looser bound that a layout or routing bug still breaks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "convert/quantize.h"
#include "error_of.h"
#include "gguf/gguf.h"
#include "../kernels/precision_guard.h"
#include "each_isa.h"
#include "hf_reference.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"
#include "model/loader.h"
#include "safetensors/safetensors.h"
#include "safetensors_writer.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;
using testing::StTensor;

const fs::path kDir = testing::kHfDataDir / "gpt_oss_mxfp4";
constexpr double kExactTol = 1e-5, kRefinedTol = 1e-3, kInt8Tol = 5e-2;

// max |got - want| / max |want| over the reference's rows of full logits.
double relative_error(const testing::Reference& ref, const std::vector<float>& all, int vocab) {
  double worst = 0, range = 0;
  for (size_t r = 0; r < ref.logit_positions.size(); ++r)
    for (int i = 0; i < vocab; ++i) {
      const double want = ref.logits[r][i];
      worst = std::max(worst, std::abs(all[static_cast<size_t>(ref.logit_positions[r]) * vocab + i] - want));
      range = std::max(range, std::abs(want));
    }
  return worst / range;
}

// Positions whose greedy token is transformers' (near-ties may differ).
int argmax_agreement(const testing::Reference& ref, const std::vector<float>& all, int vocab) {
  int same = 0;
  for (size_t p = 0; p < ref.ids.size(); ++p) {
    const float* row = &all[p * vocab];
    same += std::max_element(row, row + vocab) - row == ref.argmax[p];
  }
  return same;
}

void expect_matches_transformers(const std::string& path, const std::string& what, FileLoad load) {
  const testing::Reference ref = testing::read_reference(kDir);
  auto model = load_model(path, {.weights = load});
  const int vocab = model->config().vocab_size, n = static_cast<int>(ref.ids.size());
  auto check = [&](const std::string& how, double tolerance, int min_agreement) {
    const std::vector<float> all = testing::batched_logits(*model, ref.ids);
    const double rel = relative_error(ref, all, vocab);
    std::cout << "[ gpt_oss_mxfp4 ] " << what << ", " << how << ": max |logit - transformers| / max |logit| = " << rel
              << "\n";
    EXPECT_LE(rel, tolerance) << what << ", " << how;
    EXPECT_GE(argmax_agreement(ref, all, vocab), min_agreement) << what << ", " << how;
  };
  {
    const testing::PrecisionGuard refined(ActivationPrecision::kRefined);
    testing::for_each_isa([&](Isa isa) {
      check(std::string(isa_name(isa)) + " refined", isa == Isa::kScalar ? kExactTol : kRefinedTol, n);
    });
  }
  const testing::PrecisionGuard int8(ActivationPrecision::kInt8);
  check("int8 activations", kInt8Tol, n - 6);
}

// Read into memory, the experts are rewritten into the kernels' panels; mapped, they run as rows.
TEST(HfMxfp4, LogitsMatchTransformers) {
  const MatrixLayout copied = load_model(kDir.string())->weights().layers[1].ffn.experts_gate[3].layout;  // down's rows of 96 fill no panel (64)
  EXPECT_EQ(copied != MatrixLayout::kRows, panel_kernel_for(active_isa(), DType::MXFP4));
  expect_matches_transformers(kDir.string(), "HF directory", FileLoad::kCopy);
  expect_matches_transformers(kDir.string(), "HF directory mapped", FileLoad::kMmap);
}

// skiff quantize ... F32 keeps the experts MXFP4, as llama.cpp's
// convert_hf_to_gguf.py does, byte for byte; every other matrix is F32.
TEST(HfMxfp4, ConvertedToGgufKeepsMxfp4) {
  const std::string out = (fs::path(::testing::TempDir()) / "gpt_oss_mxfp4.gguf").string();
  const convert::QuantizeSummary summary = convert::quantize_model(kDir.string(), out, DType::F32);
  EXPECT_EQ(summary.n_fallbacks, 0);
  {
    const gguf::GgufFile file(out);
    int experts = 0;
    for (const gguf::TensorInfo& t : file.tensors()) {
      const bool expert = t.name.ends_with("_exps.weight");
      experts += expert;
      EXPECT_EQ(t.type, expert ? DType::MXFP4 : DType::F32) << t.name;
    }
    EXPECT_EQ(experts, 6);
  }
  expect_matches_transformers(out, "converted to GGUF", FileLoad::kCopy);
  fs::remove(out);
}

// The file type is convert_hf_to_gguf.py's: MXFP4_MOE (llama.cpp's 38) where
// it keeps the MXFP4 experts under a float type, Q8_0 (7) under Q8_0.
TEST(HfMxfp4, ConvertedFileTypeIsLlamaCpps) {
  const std::string out = (fs::path(::testing::TempDir()) / "gpt_oss_mxfp4_type.gguf").string();
  for (const auto& [type, id] : {std::pair{DType::F32, 38}, {DType::F16, 38}, {DType::BF16, 38}, {DType::Q8_0, 7}}) {
    convert::quantize_model(kDir.string(), out, type);
    EXPECT_EQ(gguf::GgufFile(out).get_int("general.file_type", -1), id) << dtype_info(type).name;
  }
  fs::remove(out);
}

// transformers' own dequantization of one expert (expert_check.safetensors,
// x·W) equals skiff's dequantization of the blocks it repacked, exactly.
TEST(HfMxfp4, RepackedBlocksDequantizeAsTransformers) {
  const safetensors::SafetensorsFile check((kDir / "expert_check.safetensors").string());
  const int layer = 1, expert = 11;  // make_hf_mxfp4_golden.py's EXPERT_CHECKED
  ASSERT_EQ(check.metadata().at("checked"), "layer 1, expert 11");
  auto model = load_model(kDir.string(), {.weights = FileLoad::kMmap});  // mapped: experts stay rows
  const ModelConfig& c = model->config();
  const int64_t d = c.dim, f = c.layers[layer].ffn.experts.ffn_dim;
  const safetensors::Tensor& gate_up = check.tensors().at("gate_up_proj");  // [d, 2f]
  const safetensors::Tensor& down = check.tensors().at("down_proj");        // [f, d]
  ASSERT_EQ(gate_up.shape, (std::vector<int64_t>{d, 2 * f}));
  ASSERT_EQ(down.shape, (std::vector<int64_t>{f, d}));
  auto at = [](const safetensors::Tensor& t, int64_t r, int64_t col) {
    return reinterpret_cast<const float*>(t.data)[r * t.shape[1] + col];
  };
  const FfnWeights& F = model->weights().layers[layer].ffn;
  // Row r of a matrix as floats, by skiff's MXFP4 dequantization.
  auto row = [](const Matrix& m, int64_t r) {
    EXPECT_EQ(m.type, DType::MXFP4);
    EXPECT_EQ(m.layout, MatrixLayout::kRows);
    std::vector<float> out(m.cols);
    dequantize_row(m.type, static_cast<const uint8_t*>(m.data) + r * row_bytes(m.type, m.cols), out.data(), m.cols);
    return out;
  };
  int nonzero = 0;
  for (int64_t i = 0; i < f; ++i) {
    const std::vector<float> g = row(F.experts_gate[expert], i), u = row(F.experts_up[expert], i);
    for (int64_t k = 0; k < d; ++k) {
      ASSERT_EQ(g[k], at(gate_up, k, 2 * i)) << "gate row " << i << " col " << k;
      ASSERT_EQ(u[k], at(gate_up, k, 2 * i + 1)) << "up row " << i << " col " << k;
      nonzero += g[k] != 0;
    }
  }
  for (int64_t k = 0; k < d; ++k) {
    const std::vector<float> w = row(F.experts_down[expert], k);
    for (int64_t i = 0; i < f; ++i) ASSERT_EQ(w[i], at(down, i, k)) << "down row " << k << " col " << i;
  }
  EXPECT_GT(nonzero, d * f / 2);
}

// The checkpoint's tensors, to write altered copies of it.
std::vector<StTensor> checkpoint_tensors() {
  const safetensors::SafetensorsFile file((kDir / "model.safetensors").string());
  std::vector<StTensor> out;
  for (const auto& [name, t] : file.tensors())
    out.push_back({name, t.dtype, t.shape, std::vector<uint8_t>(t.data, t.data + t.nbytes)});
  return out;
}

StTensor& tensor(std::vector<StTensor>& all, const std::string& name) {
  const auto it = std::find_if(all.begin(), all.end(), [&](const StTensor& t) { return t.name == name; });
  if (it == all.end()) throw std::runtime_error("no tensor " + name);
  return *it;
}

// The error loading a copy of the checkpoint with `tensors` and `config`.
std::string load_error(const std::string& name, const std::vector<StTensor>& tensors,
                       const nlohmann::json& config = testing::read_json(kDir / "config.json")) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("mxfp4_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  testing::write_file((dir / "config.json").string(), config.dump());
  testing::write_file((dir / "model.safetensors").string(), testing::safetensors_bytes(tensors));
  return testing::error_of([&] { load_model(dir.string()); });
}

TEST(HfMxfp4, BadBlocksAreClearErrors) {
  const std::string blocks = "model.layers.1.mlp.experts.down_proj_blocks";
  const std::string scales = "model.layers.0.mlp.experts.gate_up_proj_scales";
  EXPECT_EQ(load_error("intact", checkpoint_tensors()), "");
  auto contains = [](const std::string& what, const std::string& part) {
    return what.find(part) != std::string::npos;
  };
  {  // scales of another shape: [16, 192, 2] as [16, 96, 4]
    std::vector<StTensor> all = checkpoint_tensors();
    tensor(all, scales).shape = {16, 96, 4};
    const std::string what = load_error("scales_shape", all);
    EXPECT_TRUE(contains(what, scales) && contains(what, "[16, 96, 4]") && contains(what, "[16, 192, 2]")) << what;
  }
  {  // a missing _blocks
    std::vector<StTensor> all = checkpoint_tensors();
    std::erase_if(all, [&](const StTensor& t) { return t.name == blocks; });
    const std::string what = load_error("missing_blocks", all);
    EXPECT_TRUE(contains(what, "missing") && contains(what, blocks)) << what;
  }
  {  // both halves of a matrix missing: named by the float tensor it would be
    std::vector<StTensor> all = checkpoint_tensors();
    std::erase_if(all, [&](const StTensor& t) { return t.name.starts_with("model.layers.1.mlp.experts.down_proj_"); });
    const std::string what = load_error("missing_down", all);
    EXPECT_TRUE(contains(what, "model.layers.1.mlp.experts.down_proj")) << what;
  }
  {  // blocks of another dtype
    std::vector<StTensor> all = checkpoint_tensors();
    tensor(all, blocks).dtype = "I8";
    const std::string what = load_error("blocks_dtype", all);
    EXPECT_TRUE(contains(what, blocks) && contains(what, "I8")) << what;
  }
  {  // truncated data: the file ends inside the last tensor
    const fs::path dir = fs::path(::testing::TempDir()) / "mxfp4_truncated";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(kDir / "config.json", dir / "config.json");
    const std::string bytes = testing::safetensors_bytes(checkpoint_tensors());
    testing::write_file((dir / "model.safetensors").string(), bytes.substr(0, bytes.size() - 1000));
    const std::string what = testing::error_of([&] { load_model(dir.string()); });
    EXPECT_TRUE(contains(what, "outside")) << what;
  }
  {  // config.json disagreeing with the blocks: another expert width
    nlohmann::json config = testing::read_json(kDir / "config.json");
    config["intermediate_size"] = 64;
    const std::string what = load_error("config_width", checkpoint_tensors(), config);
    EXPECT_TRUE(contains(what, "gate_up_proj_blocks") && contains(what, "config.json")) << what;
  }
  {  // blocks without quantization_config, or another quant_method
    nlohmann::json config = testing::read_json(kDir / "config.json");
    config.erase("quantization_config");
    EXPECT_TRUE(contains(load_error("no_quant_config", checkpoint_tensors(), config), "quantization_config"));
    config["quantization_config"] = {{"quant_method", "fp8"}};
    const std::string what = load_error("fp8", checkpoint_tensors(), config);
    EXPECT_TRUE(contains(what, "'fp8' is not supported")) << what;
  }
}

}  // namespace
}  // namespace skiff

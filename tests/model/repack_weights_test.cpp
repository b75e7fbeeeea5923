// repack_for_kernels: matrices sharing data (a tied output head) are repacked
// once and all read the panels; data shared by differently shaped matrices,
// or not writable, or of a type the ISA has no panel kernel for, stays as it is.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/isa.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"
#include "model/weights.h"

namespace skiff {
namespace {

// Q4_K: the type both AVX-512 and AVX2 read as panels.
constexpr DType kType = DType::Q4_K;
constexpr int64_t kCols = 256;

std::vector<uint8_t> random_rows(DType type, int64_t rows, int64_t cols) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> row(cols);
  std::vector<uint8_t> bytes(rows * row_bytes(type, cols));
  if (type == DType::IQ4_XS) {  // quantize_row does not write it: random blocks, d a small normal fp16
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    for (size_t at = 0; at < bytes.size(); at += 136) bytes[at + 1] = 0x20;
    return bytes;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = dist(rng);
    quantize_row(type, row.data(), bytes.data() + r * row_bytes(type, cols), cols);
  }
  return bytes;
}

void expect_rows(const Matrix& m, const std::vector<uint8_t>& original) {
  std::vector<float> got(m.cols), want(m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    matrix_row(m, r, got.data());
    dequantize_row(m.type, original.data() + r * row_bytes(m.type, m.cols), want.data(), m.cols);
    ASSERT_EQ(got, want) << "row " << r;
  }
}

class RepackWeights : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!isa_supported(Isa::kAvx2)) GTEST_SKIP() << "panels are for the AVX2 and AVX-512 kernels";
    set_active_isa(isa_supported(Isa::kAvx512) ? Isa::kAvx512 : Isa::kAvx2);
  }
  testing::IsaGuard restore_isa_;
};

TEST_F(RepackWeights, TiedHeadIsRepackedOnceAndFollows) {
  const std::vector<uint8_t> original = random_rows(kType, 32, kCols);
  std::vector<uint8_t> bytes = original;
  ModelWeights w;
  w.token_embedding = Matrix{kType, 32, kCols, bytes.data()};
  w.output = w.token_embedding;
  auto writable = [&](const void* data) { return data == bytes.data() ? bytes.data() : nullptr; };
  EXPECT_EQ(repack_for_kernels(w, writable), 1);
  EXPECT_EQ(w.token_embedding.layout, MatrixLayout::kPanels);
  EXPECT_EQ(w.output.layout, MatrixLayout::kPanels);
  expect_rows(w.output, original);  // repacked twice, the rows would not read back
}

TEST_F(RepackWeights, SharedDataOfOtherShapesOrReadOnlyStaysRows) {
  const std::vector<uint8_t> original = random_rows(kType, 32, kCols);
  std::vector<uint8_t> bytes = original;
  ModelWeights w;
  w.token_embedding = Matrix{kType, 32, kCols, bytes.data()};
  w.output = Matrix{kType, 16, 2 * kCols, bytes.data()};  // same bytes, another shape
  EXPECT_EQ(repack_for_kernels(w, [&](const void*) { return bytes.data(); }), 0);
  EXPECT_EQ(w.token_embedding.layout, MatrixLayout::kRows);
  EXPECT_EQ(bytes, original);

  w.output = w.token_embedding;
  EXPECT_EQ(repack_for_kernels(w, [](const void*) -> uint8_t* { return nullptr; }), 0);  // a mapping
  EXPECT_EQ(w.output.layout, MatrixLayout::kRows);
  EXPECT_EQ(bytes, original);
}

TEST_F(RepackWeights, OnlyTypesTheIsaReadsAsPanels) {
  for (DType type : {DType::F16, DType::IQ4_XS, DType::Q2_K, DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
    const std::vector<uint8_t> original = random_rows(type, 32, kCols);
    std::vector<uint8_t> bytes = original;
    ModelWeights w;
    w.token_embedding = Matrix{type, 32, kCols, bytes.data()};
    w.output = w.token_embedding;
    const bool panels = panel_kernel_for(active_isa(), type);
    EXPECT_EQ(panels, active_isa() == Isa::kAvx512 || (active_isa() == Isa::kAvx2 && type != DType::F16))
        << dtype_info(type).name;
    EXPECT_EQ(repack_for_kernels(w, [&](const void*) { return bytes.data(); }), panels ? 1 : 0);
    EXPECT_EQ(w.output.layout, panels ? MatrixLayout::kPanels : MatrixLayout::kRows) << dtype_info(type).name;
    expect_rows(w.output, original);
  }
}

}  // namespace
}  // namespace skiff

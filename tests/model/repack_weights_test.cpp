// repack_for_kernels: matrices sharing data (a tied output head) are repacked
// once and all read the panels; data shared by differently shaped matrices,
// or not writable, stays as it is.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/isa.h"
#include "kernels/quant.h"
#include "model/weights.h"

namespace skiff {
namespace {

std::vector<uint8_t> random_q8_0(int64_t rows, int64_t cols) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> row(cols);
  std::vector<uint8_t> bytes(rows * row_bytes(DType::Q8_0, cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = dist(rng);
    quantize_row(DType::Q8_0, row.data(), bytes.data() + r * row_bytes(DType::Q8_0, cols), cols);
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
    if (!isa_supported(Isa::kAvx512)) GTEST_SKIP() << "panels are for the AVX-512 kernels";
    set_active_isa(Isa::kAvx512);
  }
  testing::IsaGuard restore_isa_;
};

TEST_F(RepackWeights, TiedHeadIsRepackedOnceAndFollows) {
  const std::vector<uint8_t> original = random_q8_0(32, 64);
  std::vector<uint8_t> bytes = original;
  ModelWeights w;
  w.token_embedding = Matrix{DType::Q8_0, 32, 64, bytes.data()};
  w.output = w.token_embedding;
  auto writable = [&](const void* data) { return data == bytes.data() ? bytes.data() : nullptr; };
  EXPECT_EQ(repack_for_kernels(w, writable), 1);
  EXPECT_EQ(w.token_embedding.layout, MatrixLayout::kPanels);
  EXPECT_EQ(w.output.layout, MatrixLayout::kPanels);
  expect_rows(w.output, original);  // repacked twice, the rows would not read back
}

TEST_F(RepackWeights, SharedDataOfOtherShapesOrReadOnlyStaysRows) {
  const std::vector<uint8_t> original = random_q8_0(32, 64);
  std::vector<uint8_t> bytes = original;
  ModelWeights w;
  w.token_embedding = Matrix{DType::Q8_0, 32, 64, bytes.data()};
  w.output = Matrix{DType::Q8_0, 16, 128, bytes.data()};  // same bytes, another shape
  EXPECT_EQ(repack_for_kernels(w, [&](const void*) { return bytes.data(); }), 0);
  EXPECT_EQ(w.token_embedding.layout, MatrixLayout::kRows);
  EXPECT_EQ(bytes, original);

  w.output = w.token_embedding;
  EXPECT_EQ(repack_for_kernels(w, [](const void*) -> uint8_t* { return nullptr; }), 0);  // a mapping
  EXPECT_EQ(w.output.layout, MatrixLayout::kRows);
  EXPECT_EQ(bytes, original);
}

}  // namespace
}  // namespace skiff

// Batch-invariant mode (kernels/matmul.h): a token's outputs are bit-identical
// whether it runs alone or among n tokens, on weights as stored (rows) of
// every float and quantized type the SIMD kernels read, on every ISA. Panels
// are invariant without it (matmul_float_test, engine/batch_invariance_test).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

namespace skiff {
namespace {

constexpr DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                            DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::Q2_K, DType::Q3_K, DType::Q4_K,
                            DType::Q5_K, DType::Q6_K};  // the types quantize_row writes, with SIMD kernels

// Sets the mode for one scope.
class InvariantMode {
 public:
  explicit InvariantMode(bool on) : saved_(batch_invariant()) { set_batch_invariant(on); }
  ~InvariantMode() { set_batch_invariant(saved_); }

 private:
  bool saved_;
};

// Whether every token's outputs among n equal its outputs alone, for each n.
bool token_outputs_match(const Matrix& w, const std::vector<float>& x, int max_tokens) {
  std::vector<float> alone(max_tokens * w.rows);
  for (int t = 0; t < max_tokens; ++t) matmul(w, x.data() + t * w.cols, 1, alone.data() + t * w.rows);
  for (int n : {2, 3, 4, 5, 9, 33, max_tokens}) {
    std::vector<float> y(n * w.rows);
    matmul(w, x.data(), n, y.data());
    if (std::memcmp(y.data(), alone.data(), y.size() * sizeof(float)) != 0) return false;
  }
  return true;
}

TEST(BatchInvariantMatmul, RowsGiveEveryTokenItsOwnSumsEveryTypeAndIsa) {
  constexpr int64_t kRows = 40, kCols = 512;
  constexpr int kMaxTokens = 70;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(kMaxTokens * kCols), values(kRows * kCols);
  for (float& v : x) v = dist(rng);
  x[5 * kCols + 17] = 400.0f;  // an outlier: added from its weight column (activation_outliers.h)
  for (float& v : values) v = dist(rng);
  InvariantMode on(true);
  for (DType type : kTypes) {
    std::vector<uint8_t> bytes(row_bytes(type, kCols) * kRows);
    for (int64_t r = 0; r < kRows; ++r)
      quantize_row(type, &values[r * kCols], bytes.data() + r * row_bytes(type, kCols), kCols);
    const Matrix w{type, kRows, kCols, bytes.data()};
    testing::for_each_isa([&](Isa isa) {
      EXPECT_TRUE(token_outputs_match(w, x, kMaxTokens)) << isa_name(isa) << " " << dtype_info(type).name;
    });
  }
}

// The test above can fail: without the mode, rows sum in another order for
// many tokens than for one.
TEST(BatchInvariantMatmul, RowsDifferWithoutTheMode) {
  constexpr int64_t kRows = 64, kCols = 1024;
  std::mt19937 rng(4);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(64 * kCols), values(kRows * kCols);
  for (float& v : x) v = dist(rng);
  for (float& v : values) v = dist(rng);
  std::vector<uint8_t> bytes(row_bytes(DType::F32, kCols) * kRows);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  const Matrix w{DType::F32, kRows, kCols, bytes.data()};
  testing::IsaGuard guard;
  if (!isa_supported(Isa::kAvx2)) GTEST_SKIP() << "no SIMD kernels on this CPU";
  set_active_isa(Isa::kAvx2);
  InvariantMode off(false);
  EXPECT_FALSE(token_outputs_match(w, x, 64));
}

}  // namespace
}  // namespace skiff

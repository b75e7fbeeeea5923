// Batch-invariant mode (kernels/matmul/matmul.h): a token's outputs are bit-identical
// whether it runs alone or among n tokens, on weights as stored (rows) of
// every float and quantized type the SIMD kernels read, on every ISA. Panels
// are invariant without it (below, matmul_float_test, engine/batch_invariance_test).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace {

constexpr DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                            DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::Q2_K, DType::Q3_K, DType::Q4_K,
                            DType::Q5_K, DType::Q6_K, DType::MXFP4};  // the types quantize_row writes, with SIMD kernels

// Sets the mode for one scope.
class InvariantMode {
 public:
  explicit InvariantMode(bool on) : saved_(batch_invariant()) { set_batch_invariant(on); }
  ~InvariantMode() { set_batch_invariant(saved_); }

 private:
  bool saved_;
};

// Whether every token's outputs among n equal its outputs alone, for each n;
// batch_invariant: the product asks for it (MatmulProduct::batch_invariant).
bool token_outputs_match(const Matrix& w, const std::vector<float>& x, int max_tokens, bool batch_invariant = false) {
  std::vector<float> alone(max_tokens * w.rows);
  for (int t = 0; t < max_tokens; ++t) matmul(w, x.data() + t * w.cols, 1, alone.data() + t * w.rows);
  for (int n : {2, 3, 4, 5, 9, 33, max_tokens}) {
    std::vector<float> y(n * w.rows);
    const MatmulProduct product{&w, y.data(), batch_invariant};
    matmul_many({&product, 1}, x.data(), n);
    if (std::memcmp(y.data(), alone.data(), y.size() * sizeof(float)) != 0) return false;
  }
  return true;
}

// Normal weights quantized to each type, and tokens with one outlier (added
// from its weight column: activation_outliers.h).
struct Case {
  static constexpr int64_t kCols = 512;
  static constexpr int kMaxTokens = 70;
  std::vector<float> x = std::vector<float>(kMaxTokens * kCols), values;
  int64_t rows;
  explicit Case(int64_t rows_) : values(rows_ * kCols), rows(rows_) {
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    x[5 * kCols + 17] = 400.0f;
    for (float& v : values) v = dist(rng);
  }
  Matrix quantized(DType type, std::vector<uint8_t>& bytes) const {
    bytes.resize(row_bytes(type, kCols) * rows);
    for (int64_t r = 0; r < rows; ++r)
      quantize_row(type, &values[r * kCols], bytes.data() + r * row_bytes(type, kCols), kCols);
    return Matrix{type, rows, kCols, bytes.data()};
  }
};

TEST(BatchInvariantMatmul, RowsGiveEveryTokenItsOwnSumsEveryTypeAndIsa) {
  const Case c(40);
  InvariantMode on(true);
  for (DType type : kTypes) {
    std::vector<uint8_t> bytes;
    const Matrix w = c.quantized(type, bytes);
    testing::for_each_isa([&](Isa isa) {
      EXPECT_TRUE(token_outputs_match(w, c.x, Case::kMaxTokens)) << isa_name(isa) << " " << dtype_info(type).name;
    });
  }
}

// Panels need no mode: their decode and their prefill add the same unit dots
// in the same order.
TEST(BatchInvariantMatmul, PanelsGiveEveryTokenItsOwnSumsWithoutTheMode) {
  const Case c(48);
  InvariantMode off(false);
  for (DType type : kTypes) {
    std::vector<uint8_t> bytes;
    Matrix w = c.quantized(type, bytes);
    if (!can_repack(w)) continue;
    repack(w, bytes.data());
    testing::for_each_isa([&](Isa isa) {
      EXPECT_TRUE(token_outputs_match(w, c.x, Case::kMaxTokens)) << isa_name(isa) << " " << dtype_info(type).name;
    });
  }
}

// F32 rows whose prefill kernel on AVX2 sums in another order for many tokens than for one.
struct OrderDependentRows {
  static constexpr int64_t kRows = 64, kCols = 1024;
  std::vector<float> x = std::vector<float>(64 * kCols), values = std::vector<float>(kRows * kCols);
  Matrix w{DType::F32, kRows, kCols, nullptr};
  OrderDependentRows() {
    std::mt19937 rng(4);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    for (float& v : values) v = dist(rng);
    w.data = values.data();
  }
};

// The test above can fail: without the mode, rows sum in another order for
// many tokens than for one.
TEST(BatchInvariantMatmul, RowsDifferWithoutTheMode) {
  const OrderDependentRows c;
  testing::IsaGuard guard;
  if (!isa_supported(Isa::kAvx2)) GTEST_SKIP() << "no SIMD kernels on this CPU";
  set_active_isa(Isa::kAvx2);
  InvariantMode off(false);
  EXPECT_FALSE(token_outputs_match(c.w, c.x, 64));
}

// Outside the mode a product may ask for it (a router's, whose token's
// experts must not depend on its batch): the same rows then give every token
// its own sums, on every ISA and type.
TEST(BatchInvariantMatmul, AProductAsksForItsTokensOwnSumsOutsideTheMode) {
  InvariantMode off(false);
  const OrderDependentRows c;
  testing::IsaGuard guard;
  if (!isa_supported(Isa::kAvx2)) GTEST_SKIP() << "no SIMD kernels on this CPU";
  set_active_isa(Isa::kAvx2);
  EXPECT_TRUE(token_outputs_match(c.w, c.x, 64, true));
  EXPECT_FALSE(token_outputs_match(c.w, c.x, 64, false)) << "rows whose sums depend on the batch";
  const Case q(40);
  for (DType type : kTypes) {
    std::vector<uint8_t> bytes;
    const Matrix w = q.quantized(type, bytes);
    testing::for_each_isa([&](Isa isa) {
      EXPECT_TRUE(token_outputs_match(w, q.x, Case::kMaxTokens, true)) << isa_name(isa) << " " << dtype_info(type).name;
    });
  }
}

}  // namespace
}  // namespace skiff

// matmul() on F32 / F16 / BF16 weights, every ISA this CPU has, against an
// fp64 reference computed here from dequantize_row (independent of the
// kernels). Shapes cover tails of every blocking: rows not a multiple of the
// tile, columns not a multiple of the vector width or the depth block, and
// token counts on the decode path (up to 4 tokens per pass over the weights)
// and the GEMM path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"
#include "token_invariance.h"

namespace skiff {
namespace {

constexpr DType kTypes[] = {DType::F32, DType::F16, DType::BF16};


struct Problem {
  DType type;
  int64_t rows, cols;
  int n_tokens;
  std::vector<uint8_t> weights;
  std::vector<float> x;
  std::vector<double> want;   // fp64 reference, [n_tokens][rows]
  std::vector<double> bound;  // allowed |error| per output
};

Problem make_problem(DType type, int64_t rows, int64_t cols, int n_tokens, uint32_t seed) {
  Problem p{type, rows, cols, n_tokens, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> w(rows * cols), wq(rows * cols);
  for (float& v : w) v = dist(rng);
  p.weights.resize(row_bytes(type, cols) * rows);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = p.weights.data() + row_bytes(type, cols) * r;
    quantize_row(type, &w[r * cols], row, cols);
    dequantize_row(type, row, &wq[r * cols], cols);  // the values the kernel sees
  }
  p.x.resize(n_tokens * cols);
  for (float& v : p.x) v = dist(rng);
  p.want.resize(n_tokens * rows);
  p.bound.resize(n_tokens * rows);
  for (int t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0, abs_sum = 0;
      for (int64_t k = 0; k < cols; ++k) {
        const double prod = double{wq[r * cols + k]} * p.x[t * cols + k];
        sum += prod;
        abs_sum += std::fabs(prod);
      }
      p.want[t * rows + r] = sum;
      // f32 accumulation: a few units of rounding per partial sum, well below
      // one term's share of abs_sum even at 2048 columns.
      p.bound[t * rows + r] = 1e-5 * abs_sum + 1e-30;
    }
  return p;
}

// Runs matmul on the active ISA; fails with the first output out of bounds.
// With repacked, the weights go through repack() first (kernels/matmul/repack.h).
void check(const Problem& p, bool repacked = false) {
  std::vector<uint8_t> bytes = p.weights;
  Matrix w{p.type, p.rows, p.cols, bytes.data()};
  if (repacked) repack(w, bytes.data());
  // NaN-filled so an output the kernel never writes fails the comparison.
  std::vector<float> y(p.n_tokens * p.rows, std::numeric_limits<float>::quiet_NaN());
  matmul(w, p.x.data(), p.n_tokens, y.data());
  for (size_t i = 0; i < y.size(); ++i) {
    const double err = std::fabs(y[i] - p.want[i]);
    ASSERT_TRUE(err <= p.bound[i])
        << isa_name(active_isa()) << " " << dtype_info(p.type).name << (repacked ? " repacked" : "")
        << " rows " << p.rows
        << " cols " << p.cols << " tokens " << p.n_tokens << ": output [" << i / p.rows << "]["
        << i % p.rows << "] = " << y[i] << ", want " << p.want[i] << " (bound " << p.bound[i]
        << ")";
  }
}

// Each problem is built once and run on every ISA the CPU supports.
void check_all_isas(const Problem& p, bool repacked = false) {
  testing::for_each_isa([&](Isa) { check(p, repacked); });
}

// Float weights repacked into 16-row panels at load: one panel, an odd number
// of panels (a 32-row GEMM tile with its second half empty), every decode pass
// width (1-8 tokens) and several passes, the GEMM from 32 tokens; rows read back exactly.
TEST(MatmulFloat, RepackedEveryIsaAndType) {
  uint32_t seed = 300;
  for (DType type : kTypes)
    for (int64_t rows : {16, 48, 160})
      for (int64_t cols : {64, 192, 768})
        for (int n_tokens : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 32, 64}) {
          if (rows * cols * n_tokens > 3'000'000) continue;
          check_all_isas(make_problem(type, rows, cols, n_tokens, seed++), true);
          if (HasFatalFailure()) return;
        }
  for (DType type : kTypes) {
    const Problem p = make_problem(type, 48, 192, 1, 7);
    std::vector<uint8_t> bytes = p.weights;
    Matrix w{type, 48, 192, bytes.data()};
    ASSERT_TRUE(can_repack(w));
    repack(w, bytes.data());
    EXPECT_EQ(w.layout, MatrixLayout::kPanels);
    std::vector<float> got(192), want(192);
    for (int64_t r = 0; r < 48; ++r) {
      matrix_row(w, r, got.data());
      dequantize_row(type, p.weights.data() + r * row_bytes(type, 192), want.data(), 192);
      ASSERT_EQ(got, want) << dtype_info(type).name << " row " << r;
    }
  }
  EXPECT_FALSE(can_repack(Matrix{DType::F16, 40, 192, nullptr})) << "rows not whole panels";
}

TEST(MatmulFloat, OddShapesEveryIsaAndType) {
  uint32_t seed = 1;
  for (DType type : kTypes)
    for (int64_t rows : {1, 7, 33, 100})
      for (int64_t cols : {1, 5, 31, 32, 33, 100, 257, 2048})
        for (int n_tokens : {1, 2, 3, 13, 64, 129}) {
          if (rows * cols * n_tokens > 5'000'000) continue;  // keeps the test to about a second
          check_all_isas(make_problem(type, rows, cols, n_tokens, seed++));
          if (HasFatalFailure()) return;
        }
}

// Several row blocks per thread, threads splitting rows mid-block, and (at
// 600 tokens) more than one pass of tokens through the GEMM.
TEST(MatmulFloat, ManyRowBlocksAndTokenPasses) {
  for (DType type : kTypes)
    for (int n_tokens : {4, 5, 31, 32, 40}) {
      check_all_isas(make_problem(type, 777, 300, n_tokens, 99 + n_tokens));
      if (HasFatalFailure()) return;
    }
  for (DType type : kTypes) {
    check_all_isas(make_problem(type, 45, 70, 600, 7));
    if (HasFatalFailure()) return;
  }
}

// Batch invariance: a token's outputs are bit-identical whether it runs alone
// or among n tokens, on the decode passes and the GEMM (depth blocks, token
// passes and row tails included) on panels. Rows as stored sum in another
// order for 32+ tokens (their decode reduces across lanes).
TEST(MatmulFloat, TokenOutputsDoNotDependOnTheBatchOnPanels) {
  constexpr int64_t kRows = 112, kCols = 1088;  // 7 panels (a half-empty tile); two depth blocks and a tail
  constexpr int kMaxTokens = 530;               // two token passes of the GEMM
  for (DType type : kTypes) {
    const Problem p = make_problem(type, kRows, kCols, kMaxTokens, 40);
    std::vector<uint8_t> bytes = p.weights;
    Matrix w{type, kRows, kCols, bytes.data()};
    repack(w, bytes.data());
    testing::expect_token_outputs_batch_invariant(w, p.x.data(), {2, 3, 4, 5, 8, 9, 13, 31, 32, 33, 64, kMaxTokens});
    if (HasFatalFailure()) return;
  }
}

// The SIMD paths must really be taken, not fall back to the scalar kernel.
TEST(MatmulFloat, SimdKernelsAreDispatched) {
  for (Isa isa : testing::supported_isas({Isa::kAvx2, Isa::kAvx512}))
    for (DType type : kTypes)
      EXPECT_NE(find_kernel(isa, type).fn, matmul_kernel_scalar(type).fn)
          << isa_name(isa) << " " << dtype_info(type).name;
}

}  // namespace
}  // namespace skiff

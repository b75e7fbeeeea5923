// The dispatcher's activation precision modes against fp64 products of the
// float activations: kInt8 takes a row's outliers (over 16x its RMS) out of the
// integer product and adds them exactly, so a spike no longer costs its block's other values their
// precision; kRefined adds the int8 residual's product, so the error falls to
// float rounding. Rows without outliers are what kPlainInt8 gives, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/quant/quant.h"
#include "precision_guard.h"

namespace skiff {
namespace {

using testing::PrecisionGuard;

struct Problem {
  Matrix w;
  std::vector<uint8_t> bytes;
  std::vector<float> x;     // [2, cols]: row 0 with a spike, row 1 without
  std::vector<double> want; // [2, rows], fp64 of the dequantized weights and the float x
};

Problem make_problem(DType type, int64_t rows, int64_t cols) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(rows * cols);
  for (float& v : values) v = normal(rng);
  Problem p;
  p.bytes.resize(rows * row_bytes(type, cols));
  for (int64_t r = 0; r < rows; ++r)
    quantize_row(type, &values[r * cols], p.bytes.data() + r * row_bytes(type, cols), cols);
  p.w = Matrix{type, rows, cols, p.bytes.data()};
  p.x.resize(2 * cols);
  for (float& v : p.x) v = normal(rng);
  p.x[37] = 60.0f;  // ~60x the row's RMS, as Qwen2's massive activations
  p.want.assign(2 * rows, 0.0);
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row(type, p.bytes.data() + r * row_bytes(type, cols), row.data(), cols);
    for (int t = 0; t < 2; ++t)
      for (int64_t c = 0; c < cols; ++c) p.want[t * rows + r] += double(row[c]) * p.x[t * cols + c];
  }
  return p;
}

// Largest |y - want| of token t's outputs.
double max_error(const Problem& p, ActivationPrecision precision, int t, std::vector<float>* y_out = nullptr) {
  PrecisionGuard guard(precision);
  std::vector<float> y(2 * p.w.rows);
  matmul(p.w, p.x.data(), 2, y.data());
  double worst = 0;
  for (int64_t r = 0; r < p.w.rows; ++r) worst = std::max(worst, std::fabs(y[t * p.w.rows + r] - p.want[t * p.w.rows + r]));
  if (y_out) *y_out = y;
  return worst;
}

TEST(ActivationPrecision, OutliersAndResidualsCutTheError) {
  for (DType type : {DType::Q8_0, DType::Q5_0, DType::Q4_K, DType::Q6_K}) {
    const Problem p = make_problem(type, 64, 512);
    testing::for_each_isa([&](Isa isa) {
      const std::string what = std::string(dtype_info(type).name) + " " + isa_name(isa);
      const double plain = max_error(p, ActivationPrecision::kPlainInt8, 0);
      const double split = max_error(p, ActivationPrecision::kInt8, 0);
      const double refined = max_error(p, ActivationPrecision::kRefined, 0);
      if (isa == Isa::kScalar) {  // float activations: nothing to refine
        EXPECT_LT(plain, 1e-3) << what;
        return;
      }
      EXPECT_LT(split, plain / 3) << what << ": plain " << plain;  // the other blocks' noise remains
      EXPECT_LT(refined, plain / 50) << what << ": plain " << plain;
      // The row without a spike: kInt8 is plain int8, bit for bit; kRefined still better.
      std::vector<float> y_plain, y_split;
      max_error(p, ActivationPrecision::kPlainInt8, 1, &y_plain);
      max_error(p, ActivationPrecision::kInt8, 1, &y_split);
      for (int64_t r = 0; r < p.w.rows; ++r) ASSERT_EQ(y_split[p.w.rows + r], y_plain[p.w.rows + r]) << what;
      EXPECT_LT(max_error(p, ActivationPrecision::kRefined, 1), max_error(p, ActivationPrecision::kPlainInt8, 1) / 20) << what;
    });
  }
}

}  // namespace
}  // namespace skiff

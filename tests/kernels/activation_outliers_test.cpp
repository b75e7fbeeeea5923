// kInt8's outliers (kernels/matmul/activation_outliers.h): their products come from
// weight columns dequantized exactly as matrix_row gives them, a token's
// outputs do not depend on its batch (panels, default mode), and the column
// cache changes no bit of the result.
#include "kernels/matmul/activation_outliers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/isa.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"
#include "precision_guard.h"
#include "token_invariance.h"

namespace skiff {
namespace {

using testing::PrecisionGuard;

constexpr DType kPanelTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,
                                 DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::Q2_K,
                                 DType::Q3_K, DType::Q4_K, DType::Q6_K, DType::IQ4_XS, DType::MXFP4};
constexpr DType kRowOnlyTypes[] = {DType::Q5_K};  // no panels; quantize_row writes it

struct Weights {
  std::vector<uint8_t> bytes;
  Matrix w;
};

Weights random_weights(DType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(cols);
  Weights out;
  out.bytes.resize(rows * row_bytes(type, cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : values) v = normal(rng);
    quantize_row(type, values.data(), out.bytes.data() + r * row_bytes(type, cols), cols);
  }
  out.w = Matrix{type, rows, cols, out.bytes.data()};
  return out;
}

// Token t has t % 4 outliers, at columns that vary by token (a token of
// kCols values can have at most kCols / 256 outliers: their own squares
// raise the RMS).
constexpr int64_t kCols = 1024;
std::vector<float> activations_with_outliers(int n_tokens, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> column(0, kCols - 1);
  std::vector<float> x(n_tokens * kCols);
  for (float& v : x) v = normal(rng);
  size_t want = 0;
  for (int t = 0; t < n_tokens; ++t)
    for (int k = 0; k < t % 4; ++k, ++want) x[t * kCols + column(rng)] = (k % 2 ? -90.0f : 100.0f);
  ActivationOutliers split;
  split_outliers(x.data(), n_tokens, kCols, split);
  EXPECT_EQ(split.values.size(), want) << "the test's outliers";
  return x;
}

// fill_columns over all rows at once, and over ranges that cut panels (as
// the threads' row ranges may on row layouts), gives each row's elements.
void expect_columns_are_rows_elements(const Matrix& w) {
  // Every sub-block of 32 of a K-quant super-block, low and high nibbles.
  const std::vector<int64_t> cols = {0, 1, 17, 31, 32, 70, 100, 140, 175, 200, 235, 255, 256, 300, w.cols - 1};
  const std::vector<std::vector<int64_t>> cuts = {{0, w.rows}, {0, 5, 16, 37, w.rows}};
  for (const std::vector<int64_t>& cut : cuts) {
    std::vector<float> got(cols.size() * w.rows, std::nanf("")), row(w.cols);
    std::vector<ColumnFill> fills;
    for (size_t k = 0; k < cols.size(); ++k) fills.push_back({cols[k], got.data() + k * w.rows});
    for (size_t i = 0; i + 1 < cut.size(); ++i) fill_columns(w, fills, cut[i], cut[i + 1]);
    for (int64_t r = 0; r < w.rows; ++r) {
      matrix_row(w, r, row.data());
      for (size_t k = 0; k < cols.size(); ++k)
        ASSERT_EQ(got[k * w.rows + r], row[cols[k]])
            << dtype_info(w.type).name << " row " << r << " col " << cols[k] << " in " << cut.size() - 1 << " ranges";
    }
  }
}

// IQ4_XS, which quantize_row does not write: random bytes, each block's d a
// small normal fp16.
Weights random_iq4_xs(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  Weights out;
  out.bytes.resize(rows * row_bytes(DType::IQ4_XS, cols));
  for (uint8_t& b : out.bytes) b = static_cast<uint8_t>(rng());
  for (size_t at = 0; at < out.bytes.size(); at += 136) out.bytes[at + 1] = 0x20;  // d = 2^-7 · (1 + m/1024)
  out.w = Matrix{DType::IQ4_XS, rows, cols, out.bytes.data()};
  return out;
}

TEST(ActivationOutliers, ColumnsAreTheRowsElementsInEveryLayout) {
  uint32_t seed = 1;
  for (DType type : kRowOnlyTypes) expect_columns_are_rows_elements(random_weights(type, 48, 512, seed++).w);
  for (DType type : kPanelTypes) {
    Weights weights = type == DType::IQ4_XS ? random_iq4_xs(48, 512, seed++) : random_weights(type, 48, 512, seed++);
    expect_columns_are_rows_elements(weights.w);
    repack(weights.w, weights.bytes.data());
    expect_columns_are_rows_elements(weights.w);
  }
}

TEST(ActivationOutliers, SplitTakesOnlyValuesOverTheRatio) {
  std::vector<float> x(2 * kCols, 1.0f);
  x[kCols + 7] = 10.0f;  // token 1's RMS ~1.05: 10 is under 16x
  ActivationOutliers out;
  EXPECT_FALSE(split_outliers(x.data(), 2, kCols, out));
  EXPECT_EQ(out.rest, nullptr);
  x[kCols + 7] = 1000.0f;  // RMS ~31.3: 1000 is ~32x
  ASSERT_TRUE(split_outliers(x.data(), 2, kCols, out));
  ASSERT_EQ(out.values.size(), 1u);
  EXPECT_EQ(out.values[0].token, 1);
  EXPECT_EQ(out.values[0].col, 7);
  EXPECT_EQ(out.values[0].value, 1000.0f);
  EXPECT_EQ(out.rest[kCols + 7], 0.0f);
  EXPECT_EQ(out.rest[7], 1.0f);
}

// Outliers among the first values, in the middle and in a row's tail past its
// last four (at most cols/256 can be over 16x the RMS): each taken once, in
// column order, and zeroed in the rest.
TEST(ActivationOutliers, SplitFindsOutliersAnywhereInARow) {
  constexpr int64_t kShortCols = 1001;  // a tail of one past the groups of four and eight
  const std::vector<int64_t> at = {3, 517, 1000};
  for (int n_tokens : {1, 2}) {
    std::vector<float> x(n_tokens * kShortCols, 0.5f);
    for (int t = 0; t < n_tokens; ++t)
      for (int64_t c : at) x[t * kShortCols + c] = (c % 2 ? -300.0f : 300.0f) - t;
    ActivationOutliers out;
    ASSERT_TRUE(split_outliers(x.data(), n_tokens, kShortCols, out));
    ASSERT_EQ(out.values.size(), at.size() * n_tokens);
    for (int t = 0; t < n_tokens; ++t)
      for (size_t k = 0; k < at.size(); ++k) {
        const auto& v = out.values[t * at.size() + k];
        EXPECT_EQ(v.token, t);
        EXPECT_EQ(v.col, at[k]);
        EXPECT_EQ(v.value, x[t * kShortCols + at[k]]);
        EXPECT_EQ(out.rest[t * kShortCols + at[k]], 0.0f);
      }
    for (int64_t c = 0; c < kShortCols; ++c) {
      if (std::find(at.begin(), at.end(), c) == at.end()) {
        ASSERT_EQ(out.rest[c], 0.5f) << c;
      }
    }
  }
}

// Every token's outputs, outliers included, are bit-identical alone and in
// any batch, on the layouts that are invariant by default (panels).
TEST(ActivationOutliers, TokenOutputsDoNotDependOnTheBatch) {
  PrecisionGuard guard(ActivationPrecision::kInt8);
  constexpr int kMaxTokens = 21;
  const std::vector<float> x = activations_with_outliers(kMaxTokens, 5);
  uint32_t seed = 40;
  for (DType type : {DType::Q8_0, DType::Q5_0, DType::Q4_K, DType::Q6_K}) {
    Weights weights = random_weights(type, 64, kCols, seed++);
    repack(weights.w, weights.bytes.data());
    testing::expect_token_outputs_batch_invariant(weights.w, x.data(), {2, 3, 4, 9, kMaxTokens});
    if (HasFatalFailure()) return;
  }
}

// The cache (full after kMaxColumns columns) changes no bit: outputs with it,
// then again from its kept columns, equal those without it.
TEST(ActivationOutliers, TheColumnCacheChangesNoBit) {
  PrecisionGuard guard(ActivationPrecision::kInt8);
  constexpr int kTokens = 40;  // ~60 distinct outlier columns: more than the cache keeps
  const std::vector<float> x = activations_with_outliers(kTokens, 9);
  Weights weights = random_weights(DType::Q4_K, 48, kCols, 3);
  testing::for_each_isa([&](Isa isa) {
    std::vector<float> without(kTokens * 48), first(kTokens * 48), again(kTokens * 48);
    Matrix w = weights.w;
    matmul(w, x.data(), kTokens, without.data());
    ColumnCache cache;
    w.column_cache = &cache;
    matmul(w, x.data(), kTokens, first.data());
    matmul(w, x.data(), kTokens, again.data());
    EXPECT_EQ(without, first) << isa_name(isa);
    EXPECT_EQ(without, again) << isa_name(isa);
  });
}

}  // namespace
}  // namespace skiff

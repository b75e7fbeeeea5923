// quantize_row -> dequantize_row on random rows: every element within the
// format's worst-case error, and the RMS error well under it.
//
// Bounds per block (A = max|x|, R = max(x, 0) - min(x, 0)):
//   F32  exact    F16  |e| <= 2^-11 max(|x|, 2^-14) (subnormals: half of 2^-24)
//   BF16 |e| <= 2^-8 |x|
//   Q8_0 |e| <= A/127 * (1/2 + 127 * 2^-11)   (half a step, plus fp16 d rounding)
//   Q4_0 |e| <= A/8 * (1 + 2^-8)             (a whole step where x = -max clamps 16 -> 15)
//   Q4_1 |e| <= R/15 * 0.52                  (half a step, plus fp16 d and m rounding)
//   Q5_0 |e| <= A/16 * (1 + 2^-7)            (a whole step where x = -max clamps 32 -> 31)
//   Q5_1 |e| <= R/31 * 0.53
//   IQ4_NL |e| <= A/127 * 14.2              (the widest table gap, 113 -> 127, where x = -max clamps)
//   IQ4_XS |e| <= A/127 * 14.2 * 1.04       (the same on a sub-block's 6-bit step, rounded up by < 1/32 of A/127)
//   Q2_K |e| <= R/3 * 0.54                   (half a step; 4-bit scale/min rounding adds ~3%)
//   Q3_K |e| <= A/4 * 1.05                   (a whole step where x = -max clamps, as Q4_0)
//   Q4_K |e| <= R/15 * 0.53                  (half a step; 6-bit scale/min rounding adds ~3%)
//   Q5_K |e| <= R/31 * 0.53                  (the same grid with 32 levels)
//   Q6_K |e| <= A/31 * 0.51                  (half a step; 8-bit scale rounding adds ~1%)
//   MXFP4 |e| <= A/4                          (A in [2^k, 2^(k+1)) on E2M1 values times 2^(k-2): half the gap 4 -> 6,
//                                              or where A > 6·2^(k-2) clamps)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "base/error.h"
#include "kernels/dtype.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace {

struct Format {
  DType type;
  // Largest allowed |error| for element x of a block with the given A and R.
  double (*bound)(double x, double amax, double range);
  double max_rms;  // RMS error on N(0, 1) data (measured: F16 2.1e-4, BF16 1.7e-3,
                   // Q8_0 5.4e-3, Q4_0 0.086, Q4_1 0.079, Q5_0 0.043, Q5_1 0.038,
                   // IQ4_NL 0.080, IQ4_XS 0.081, Q2_K 0.357, Q3_K 0.157, Q4_K 0.080, Q5_K 0.039, Q6_K 0.020,
                   // MXFP4 0.115 (the gguf package's quantizer on the same kind of data: 0.115))
};

const Format kFormats[] = {
    {DType::F32, [](double, double, double) { return 0.0; }, 0.0},
    {DType::F16, [](double x, double, double) { return std::ldexp(std::max(std::fabs(x), 0x1p-14), -11); }, 3e-4},
    {DType::BF16, [](double x, double, double) { return std::ldexp(std::fabs(x), -8); }, 3e-3},
    {DType::Q8_0, [](double, double a, double) { return a / 127 * (0.5 + 127.0 / 2048); }, 0.008},
    {DType::Q4_0, [](double, double a, double) { return a / 8 * (1 + 1.0 / 256); }, 0.1},
    {DType::Q4_1, [](double, double, double r) { return r / 15 * 0.52; }, 0.1},
    {DType::Q5_0, [](double, double a, double) { return a / 16 * (1 + 1.0 / 128); }, 0.05},
    {DType::Q5_1, [](double, double, double r) { return r / 31 * 0.53; }, 0.05},
    {DType::IQ4_NL, [](double, double a, double) { return a / 127 * 14.2; }, 0.1},
    {DType::IQ4_XS, [](double, double a, double) { return a / 127 * 14.2 * 1.04; }, 0.1},
    {DType::Q2_K, [](double, double, double r) { return r / 3 * 0.54; }, 0.4},
    {DType::Q3_K, [](double, double a, double) { return a / 4 * 1.05; }, 0.18},
    {DType::Q4_K, [](double, double, double r) { return r / 15 * 0.53; }, 0.1},
    {DType::Q5_K, [](double, double, double r) { return r / 31 * 0.53; }, 0.05},
    {DType::Q6_K, [](double, double a, double) { return a / 31 * 0.51; }, 0.025},
    {DType::MXFP4, [](double, double a, double) { return a / 4; }, 0.13},
};

// Blocks of N(0, 1) with a per-block scale over six decades, some blocks
// shifted to one sign, one constant and one zero block.
std::vector<float> test_row(int64_t n, size_t block, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> log_scale(-4, 2);
  std::vector<float> x(n);
  for (int64_t b = 0; b * static_cast<int64_t>(block) < n; ++b) {
    const float scale = std::pow(10.0f, log_scale(rng));
    const float shift = (b % 4 == 1) ? 3 * scale : (b % 4 == 2) ? -3 * scale : 0;
    for (size_t i = 0; i < block; ++i) x[b * block + i] = normal(rng) * scale + shift;
  }
  if (n / static_cast<int64_t>(block) >= 4) {
    std::fill(x.begin(), x.begin() + block, 0.0f);
    std::fill(x.begin() + 3 * block, x.begin() + 4 * block, 0.25f);
  }
  return x;
}

std::vector<float> round_trip(DType type, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_bytes(type, static_cast<int64_t>(x.size())));
  quantize_row(type, x.data(), q.data(), static_cast<int64_t>(x.size()));
  std::vector<float> y(x.size());
  dequantize_row(type, q.data(), y.data(), static_cast<int64_t>(y.size()));
  return y;
}

TEST(QuantRoundTrip, EveryElementWithinTheFormatBound) {
  std::mt19937 rng(7);
  for (const Format& f : kFormats) {
    const size_t block = std::max<size_t>(dtype_info(f.type).block_size, 32);
    for (int64_t blocks : {1, 3, 7, 13}) {
      const int64_t n = blocks * static_cast<int64_t>(block);
      const std::vector<float> x = test_row(n, block, rng);
      const std::vector<float> y = round_trip(f.type, x);
      for (int64_t b = 0; b < blocks; ++b) {
        const auto first = x.begin() + b * block, last = first + block;
        const auto [lo, hi] = std::minmax_element(first, last);
        const double amax = std::max(std::fabs(*lo), std::fabs(*hi));
        const double range = std::max(0.0f, *hi) - std::min(0.0f, *lo);
        for (size_t i = b * block; i < (b + 1) * block; ++i) {
          const double err = std::fabs(double{x[i]} - y[i]);
          ASSERT_LE(err, f.bound(x[i], amax, range) + 1e-30)
              << dtype_info(f.type).name << " n=" << n << " i=" << i << " x=" << x[i] << " y=" << y[i];
        }
      }
    }
  }
}

TEST(QuantRoundTrip, ZeroRowsComeBackExactly) {
  for (const Format& f : kFormats) {
    const int64_t n = static_cast<int64_t>(dtype_info(f.type).block_size) * 2;
    const std::vector<float> zeros(n, 0.0f);
    for (float v : round_trip(f.type, zeros)) ASSERT_EQ(v, 0.0f) << dtype_info(f.type).name;
  }
}

TEST(QuantRoundTrip, RmsErrorIsSmallOnGaussianData) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> x(256 * 64);
  for (float& v : x) v = normal(rng);
  for (const Format& f : kFormats) {
    const std::vector<float> y = round_trip(f.type, x);
    double sq = 0;
    for (size_t i = 0; i < x.size(); ++i) sq += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
    const double rms = std::sqrt(sq / x.size());
    EXPECT_LE(rms, f.max_rms) << dtype_info(f.type).name;
  }
}

// MXFP4 blocks where ggml's exponent cast is undefined: a max under 2^-125
// (the exponent would be negative) takes e = 0, its values 0 or the smallest
// steps; an infinity takes the largest finite exponent; NaNs are skipped.
TEST(QuantRoundTrip, Mxfp4ExponentsOutsideGgmlsRangeClamp) {
  std::vector<float> x(32, 0x1p-130f);
  x[5] = -0x1p-127f;
  std::vector<uint8_t> q(17);
  quantize_row(DType::MXFP4, x.data(), q.data(), 32);
  EXPECT_EQ(q[0], 0);
  std::vector<float> y(32);
  dequantize_row(DType::MXFP4, q.data(), y.data(), 32);
  for (int i = 0; i < 32; ++i) ASSERT_LE(std::fabs(x[i] - y[i]), 0x1p-128f) << i;
  x.assign(32, 1.0f);
  x[3] = std::numeric_limits<float>::infinity();
  x[4] = std::numeric_limits<float>::quiet_NaN();
  quantize_row(DType::MXFP4, x.data(), q.data(), 32);
  EXPECT_EQ(q[0], 254);
}

TEST(QuantRoundTrip, RejectsPartialBlocks) {
  std::vector<float> x(48);
  std::vector<uint8_t> q(1024);
  EXPECT_THROW(quantize_row(DType::Q8_0, x.data(), q.data(), 48), Error);
  EXPECT_THROW(dequantize_row(DType::Q4_K, q.data(), x.data(), 48), Error);
}

TEST(QuantRoundTrip, ReadOnlyTypesRefuseToQuantize) {
  std::vector<float> x(256);
  std::vector<uint8_t> q(1024);
  EXPECT_FALSE(can_quantize(DType::IQ3_S));
  EXPECT_THROW(quantize_row(DType::IQ3_S, x.data(), q.data(), 256), Error);
  for (const Format& f : kFormats) EXPECT_TRUE(can_quantize(f.type)) << dtype_info(f.type).name;
}

}  // namespace
}  // namespace skiff

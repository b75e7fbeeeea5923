// Row kernels on every ISA the CPU has, against float64 references, odd sizes included.
#include "kernels/ops/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/fp16.h"
#include "kernels/isa.h"

namespace skiff {
namespace {

std::vector<float> random_vector(int n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

const int kSizes[] = {1, 3, 15, 16, 17, 64, 100, 2048, 4099};

TEST(Ops, RmsnormMatchesReference) {
  std::mt19937 rng(1);
  for (int n : kSizes) {
    const auto x = random_vector(n, rng, 3.0f), w = random_vector(n, rng);
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
    testing::for_each_isa([&](Isa isa) {
      std::vector<float> out(n);
      rmsnorm(x.data(), w.data(), n, 1e-5f, out.data());
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(out[i], x[i] * scale * w[i], 1e-5 * (1 + std::abs(x[i] * scale * w[i])))
            << isa_name(isa) << " n " << n;
    });
  }
}

TEST(Ops, SiluMulMatchesReference) {
  std::mt19937 rng(2);
  for (int n : kSizes) {
    const auto gate = random_vector(n, rng, 6.0f), up = random_vector(n, rng);
    testing::for_each_isa([&](Isa isa) {
      std::vector<float> g = gate;
      silu_mul(g.data(), up.data(), n);
      for (int i = 0; i < n; ++i) {
        const double want = gate[i] / (1.0 + std::exp(-double(gate[i]))) * up[i];
        ASSERT_NEAR(g[i], want, 1e-6 * (1 + std::abs(want))) << isa_name(isa) << " n " << n;
      }
    });
  }
  testing::for_each_isa([&](Isa isa) {  // saturated inputs stay finite
    std::vector<float> g = {-200.0f, 200.0f}, u = {1.0f, 1.0f};
    silu_mul(g.data(), u.data(), 2);
    EXPECT_NEAR(g[0], 0.0f, 1e-30) << isa_name(isa);
    EXPECT_FLOAT_EQ(g[1], 200.0f) << isa_name(isa);
  });
}

// Found by fuzz/gguf.cpp (a model whose attention scores were NaN): fast_exp
// converted NaN to int, which UBSan reports; NaN must come out as NaN.
TEST(Ops, SiluMulOfNanIsNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  testing::for_each_isa([&](Isa isa) {
    std::vector<float> g(37, 1.0f), u(37, 1.0f);
    for (int i = 0; i < 37; i += 3) g[i] = nan;  // in vector bodies and the tail
    silu_mul(g.data(), u.data(), 37);
    for (int i = 0; i < 37; ++i) EXPECT_EQ(std::isnan(g[i]), i % 3 == 0) << isa_name(isa) << " " << i;
  });
}

TEST(Ops, DotAndAddMatchReference) {
  std::mt19937 rng(3);
  for (int n : kSizes) {
    const auto a = random_vector(n, rng), b = random_vector(n, rng);
    double want = 0, bound = 0;
    for (int i = 0; i < n; ++i) {
      want += double(a[i]) * b[i];
      bound += std::abs(double(a[i]) * b[i]);
    }
    testing::for_each_isa([&](Isa isa) {
      EXPECT_NEAR(dot(a.data(), b.data(), n), want, 1e-6 * bound + 1e-7) << isa_name(isa) << " n " << n;
      std::vector<float> x = a;
      add(x.data(), b.data(), n);
      for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], a[i] + b[i]) << isa_name(isa);
    });
  }
}

// Every ISA's copy rounds as the scalar encoder, bit for bit (NaN aside),
// across normals, half subnormals, ties, overflow and infinities, tails included.
TEST(Ops, ToFp16MatchesTheScalarEncoderEveryIsa) {
  std::mt19937 rng(4);
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65519.99f, 65520.0f, -1e9f, 6e-8f, 3e-8f,
                               2.98023224e-8f, 1e-40f, 1.0009765625f + 0x1p-11f, INFINITY, -INFINITY};
  std::uniform_real_distribution<float> exponent(-30.0f, 18.0f);
  while (values.size() < 5000) {
    const float sign = rng() % 2 ? 1.0f : -1.0f;
    values.push_back(sign * std::exp2(exponent(rng)));
  }
  for (int n : {1, 7, 15, 16, 17, 4099, static_cast<int>(values.size())}) {
    testing::for_each_isa([&](Isa isa) {
      std::vector<uint16_t> out(n + 1, 0xABCD);
      to_fp16(values.data(), out.data(), n);
      for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], f32_to_fp16(values[i])) << isa_name(isa) << " " << values[i];
      EXPECT_EQ(out[n], 0xABCD) << isa_name(isa) << ": wrote past n " << n;
    });
  }
}

// d = max|x| / 127, each q within half a step of x / d, block sums of q; and
// every ISA's copy gives the same bytes.
TEST(Ops, QuantizeQ8SpanMatchesReferenceEveryIsa) {
  std::mt19937 rng(5);
  for (int n : {32, 64, 256, 2048}) {
    auto x = random_vector(n, rng, 2.0f);
    x[n / 3] = -9.0f;  // the largest magnitude, negative
    std::vector<int8_t> first_q;
    testing::for_each_isa([&](Isa isa) {
      std::vector<int8_t> q(n);
      std::vector<int32_t> sums(n / 32);
      const float d = quantize_q8_span(x.data(), q.data(), n, sums.data());
      ASSERT_EQ(d, 9.0f / 127) << isa_name(isa);
      EXPECT_EQ(q[n / 3], -127) << isa_name(isa);
      for (int i = 0; i < n; ++i) ASSERT_LE(std::abs(q[i] - double(x[i]) / d), 0.5 + 1e-5) << isa_name(isa);
      for (int b = 0; b < n / 32; ++b) {
        int32_t s = 0;
        for (int i = 0; i < 32; ++i) s += q[32 * b + i];
        ASSERT_EQ(sums[b], s) << isa_name(isa);
      }
      if (first_q.empty()) first_q = q;
      EXPECT_EQ(q, first_q) << isa_name(isa);
    });
  }
  testing::for_each_isa([&](Isa isa) {  // d = 1: ties round to even
    std::vector<float> x(32, 0.25f);
    x[0] = 127.0f;
    x[1] = 2.5f, x[2] = -3.5f, x[3] = 0.5f, x[4] = -0.5f, x[5] = 1.5f, x[6] = 126.5f;
    std::vector<int8_t> q(32);
    int32_t sum = 0;
    ASSERT_EQ(quantize_q8_span(x.data(), q.data(), 32, &sum), 1.0f) << isa_name(isa);
    EXPECT_EQ(std::vector<int8_t>(q.begin(), q.begin() + 8), (std::vector<int8_t>{127, 2, -4, 0, 0, 2, 126, 0}))
        << isa_name(isa);
    EXPECT_EQ(sum, 127 + 2 - 4 + 2 + 126) << isa_name(isa);
  });
  testing::for_each_isa([&](Isa isa) {  // 1/d overflows: zeros, as for an all-zero span
    std::vector<float> tiny(32, 0.0f);
    tiny[3] = 1e-38f;
    std::vector<int8_t> q(32, 1);
    int32_t sum = 1;
    quantize_q8_span(tiny.data(), q.data(), 32, &sum);
    EXPECT_EQ(q, std::vector<int8_t>(32, 0)) << isa_name(isa);
    EXPECT_EQ(sum, 0) << isa_name(isa);
  });
  testing::for_each_isa([&](Isa isa) {  // NaN or inf anywhere: zeros, d NaN (became INT_MIN sums)
    for (const float bad : {NAN, INFINITY, -INFINITY}) {
      for (int at : {0, 17, 31, 200}) {
        std::vector<float> x(256, 1.0f);
        x[at] = bad;
        std::vector<int8_t> q(256, 1);
        std::vector<int32_t> sums(8, 1);
        EXPECT_TRUE(std::isnan(quantize_q8_span(x.data(), q.data(), 256, sums.data()))) << isa_name(isa) << at;
        EXPECT_EQ(q, std::vector<int8_t>(256, 0)) << isa_name(isa) << " " << bad << " at " << at;
        EXPECT_EQ(sums, std::vector<int32_t>(8, 0)) << isa_name(isa);
      }
    }
  });
  testing::for_each_isa([&](Isa isa) {  // all zeros: d = 0, q = 0
    std::vector<float> zeros(32, 0.0f);
    std::vector<int8_t> q(32, 1);
    int32_t sum = 1;
    EXPECT_EQ(quantize_q8_span(zeros.data(), q.data(), 32, &sum), 0.0f) << isa_name(isa);
    EXPECT_EQ(q, std::vector<int8_t>(32, 0)) << isa_name(isa);
    EXPECT_EQ(sum, 0) << isa_name(isa);
  });
}

// RoPE rotates each pair by pos·freq: norms are kept and a rotation by 0 is identity.
TEST(Ops, RopeRotatesPairs) {
  std::vector<float> freq(4);
  rope_frequencies(8, 10000.0f, nullptr, freq.data());
  EXPECT_FLOAT_EQ(freq[0], 1.0f);
  EXPECT_NEAR(freq[1], std::pow(10000.0, -0.25), 1e-7);
  for (RopeStyle style : {RopeStyle::kInterleaved, RopeStyle::kRotateHalf}) {
    std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<float> cos(4), sin(4);
    rope_angles(freq.data(), 8, 0, cos.data(), sin.data());
    rope(x.data(), 1, 8, 8, cos.data(), sin.data(), style);
    EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
    rope_angles(freq.data(), 8, 3, cos.data(), sin.data());
    rope(x.data(), 1, 8, 8, cos.data(), sin.data(), style);
    const int a = 0, b = style == RopeStyle::kInterleaved ? 1 : 4;
    const float x0 = 1, x1 = style == RopeStyle::kInterleaved ? 2 : 5;
    EXPECT_NEAR(x[a], x0 * std::cos(3.0) - x1 * std::sin(3.0), 1e-6);
    EXPECT_NEAR(x[b], x0 * std::sin(3.0) + x1 * std::cos(3.0), 1e-6);
  }
}

}  // namespace
}  // namespace skiff

// Flash attention against a naive float64 attention, on every ISA the CPU has.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/attention.h"
#include "kernels/isa.h"
#include "kernels/scratch.h"

namespace skiff {
namespace exp_check {
#include "kernels/vec_math.h"
}

namespace {

struct Case {
  int n_ctx_before;  // cached positions before the first query
  int n_q;
  int group;
  int head_dim;
  int stride_pad;    // extra floats between positions (other KV heads)
};

// Naive attention in double: the reference.
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, const Case& c, int64_t stride) {
  const int rows = c.n_q * c.group;
  std::vector<double> out(rows * c.head_dim, 0.0);
  for (int t = 0; t < c.n_q; ++t)
    for (int h = 0; h < c.group; ++h) {
      const float* qr = &q[(t * c.group + h) * c.head_dim];
      const int n = c.n_ctx_before + t + 1;
      std::vector<double> s(n);
      double mx = -1e300;
      for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int d = 0; d < c.head_dim; ++d) dot += double(qr[d]) * k[j * stride + d];
        s[j] = dot / std::sqrt(double(c.head_dim));
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int j = 0; j < n; ++j)
        for (int d = 0; d < c.head_dim; ++d)
          out[(t * c.group + h) * c.head_dim + d] += s[j] / sum * v[j * stride + d];
    }
  return out;
}

void check(const Case& c, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int n_ctx = c.n_ctx_before + c.n_q;
  const int64_t stride = c.head_dim + c.stride_pad;
  std::vector<float> q(c.n_q * c.group * c.head_dim), k(n_ctx * stride), v(n_ctx * stride);
  for (float& x : q) x = 2.0f * normal(rng);  // sharp enough that the max matters
  for (float& x : k) x = normal(rng);
  for (float& x : v) x = normal(rng);
  const std::vector<double> want = reference(q, k, v, c, stride);
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    const Isa saved = active_isa();
    set_active_isa(isa);
    std::vector<float> out(q.size(), -1.0f);
    AttentionQueries queries{q.data(), c.group * c.head_dim, out.data(), c.group * c.head_dim,
                             c.n_q, c.group, c.n_ctx_before};
    flash_attention(queries, KvRun{k.data(), v.data(), stride, n_ctx}, c.head_dim,
                    1.0f / std::sqrt(float(c.head_dim)));
    set_active_isa(saved);
    // Outputs are convex combinations of V entries (|v| < ~5): float rounding
    // of scores and sums over up to thousands of keys stays well under 2e-5.
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_NEAR(out[i], want[i], 2e-5) << isa_name(isa) << " ctx " << c.n_ctx_before << " q "
                                         << c.n_q << " group " << c.group << " i " << i;
  }
}

TEST(FlashAttention, MatchesFloat64Reference) {
  std::mt19937 rng(5);
  const Case cases[] = {
      {0, 1, 1, 8, 0},    {0, 5, 4, 64, 0},    {3, 1, 8, 128, 64}, {31, 2, 2, 64, 0},
      {32, 1, 4, 128, 0}, {33, 8, 4, 64, 128}, {100, 3, 1, 40, 8}, {0, 32, 1, 64, 0},
      {1000, 1, 8, 128, 0}, {500, 4, 8, 64, 0}, {4095, 1, 4, 128, 0}, {7, 16, 2, 256, 0},
  };
  for (const Case& c : cases) check(c, rng);
}

TEST(FlashAttention, RejectsTooManyRows) {
  std::vector<float> buf(64 * 64);
  AttentionQueries queries{buf.data(), 64, buf.data(), 64, 33, 1, 0};
  EXPECT_ANY_THROW(flash_attention(queries, KvRun{buf.data(), buf.data(), 64, 33}, 64, 1.0f));
}

TEST(VecMath, ExpIsAccurate) {
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.001f) {
    const double want = std::exp(double(x));
    worst = std::max(worst, std::abs(exp_check::fast_exp(x) - want) / want);
  }
  EXPECT_LT(worst, 4e-7);  // a few float ulps
  EXPECT_EQ(exp_check::fast_exp(0.0f), 1.0f);
  EXPECT_GT(exp_check::fast_exp(1000.0f), 1e38f);  // clamped, finite
  EXPECT_LT(exp_check::fast_exp(-1000.0f), 1e-37f);
}

}  // namespace
}  // namespace skiff

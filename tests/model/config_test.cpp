#include "model/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/error.h"

namespace skiff {
namespace {

// Llama 3.1 8B's rope_scaling: theta 5e5, factor 8, low 1, high 4, original context 8192.
TEST(Llama3Rope, FactorsFollowTheWavelengthBands) {
  const int rope_dim = 128;
  const std::vector<float> f = llama3_rope_factors(rope_dim, 500000.0f, 8.0f, 1.0f, 4.0f, 8192);
  ASSERT_EQ(f.size(), 64u);
  for (int i = 0; i < 64; ++i) {
    const double wavelen = 2 * std::numbers::pi * std::pow(500000.0, 2.0 * i / rope_dim);
    if (wavelen < 8192 / 4.0) {
      EXPECT_FLOAT_EQ(f[i], 1.0f) << i;  // high frequencies kept
    } else if (wavelen > 8192 / 1.0) {
      EXPECT_FLOAT_EQ(f[i], 8.0f) << i;  // low frequencies slowed 8x
    } else {
      EXPECT_TRUE(f[i] > 1.0f && f[i] < 8.0f) << i;  // blended in between
    }
    if (i > 0) {
      EXPECT_GE(f[i], f[i - 1]);
    }
  }
  EXPECT_FLOAT_EQ(f[0], 1.0f);
  EXPECT_FLOAT_EQ(f[63], 8.0f);
}

// YaRN's divisors against transformers 5.25's _compute_yarn_parameters
// (1 / its inv_freq × the unscaled one, in float64 from its float32): gpt-oss's
// settings (theta 1e6 here, factor 32 over 4096, betas 32/1) on 16-dim heads,
// with the blend's bounds exact (its "truncate": false: pairs 1.74 to 3.75)
// and rounded out (the default, and llama.cpp's: pairs 1 to 4).
TEST(YarnRope, FactorsAsTransformersComputesThem) {
  YarnRope yarn{32.0f, 32.0f, 1.0f, false};
  const std::vector<double> exact = {1.0, 1.000000009069194, 1.1401373706756568, 2.535692104329056,
                                     31.999998480081633, 32.00000014357228, 32.0000023709112, 31.99999874886816};
  std::vector<float> f = yarn_rope_factors(16, 1e6f, yarn, 4096);
  ASSERT_EQ(f.size(), exact.size());
  for (size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f[i], exact[i], 2e-6 * exact[i]) << i;
  // Rounded out: a ramp over pairs 1..4, (i - 1) / 3 of each slowed 32x.
  yarn.truncate = true;
  f = yarn_rope_factors(16, 1e6f, yarn, 4096);
  for (int i = 0; i < 8; ++i) {
    const double slowed = std::clamp((i - 1) / 3.0, 0.0, 1.0);
    EXPECT_NEAR(f[i], 1 / (slowed / 32 + 1 - slowed), 1e-5 * f[i]) << i;
  }
  // Qwen2.5's form (factor 4 over 32, theta 1e4): transformers gives 1, 1.6, then 4.
  f = yarn_rope_factors(16, 1e4f, YarnRope{4.0f}, 32);
  EXPECT_FLOAT_EQ(f[0], 1.0f);
  EXPECT_FLOAT_EQ(f[1], 1.6f);
  for (int i = 2; i < 8; ++i) EXPECT_FLOAT_EQ(f[i], 4.0f) << i;
  EXPECT_FLOAT_EQ(yarn_mscale(4.0f), 1.138629436f);
  EXPECT_FLOAT_EQ(yarn_mscale(32.0f), 1.3465735903f);
  EXPECT_FLOAT_EQ(yarn_mscale(0.5f), 1.0f);
  EXPECT_THROW(yarn_rope_factors(16, 1e4f, YarnRope{-1.0f}, 32), Error);
  EXPECT_THROW(yarn_rope_factors(16, 1e4f, YarnRope{4.0f, NAN}, 32), Error);
  EXPECT_THROW(yarn_rope_factors(16, 1e4f, YarnRope{4.0f}, 0), Error);
}

TEST(ModelConfig, ValidateRejectsInconsistentShapes) {
  ModelConfig c;
  c.n_layers = 2; c.dim = 64; c.n_heads = 8; c.n_kv_heads = 4; c.head_dim = 8;
  c.ffn_dim = 128; c.vocab_size = 10; c.max_ctx = 16; c.rope_dim = 8;
  c.layers.resize(2);
  EXPECT_NO_THROW(c.validate());
  ModelConfig bad = c;
  bad.n_kv_heads = 3;
  EXPECT_THROW(bad.validate(), Error);
  bad = c;
  bad.rope_dim = 10;
  EXPECT_THROW(bad.validate(), Error);
  bad = c;
  bad.rope_freq_factors = {1.0f};
  EXPECT_THROW(bad.validate(), Error);
  bad = c;
  bad.n_layers = 0;
  EXPECT_THROW(bad.validate(), Error);
}

// A file whose heads x head dim wraps int to the true row count (65537 x 65536
// = 2^32 + 65536 -> 65536) must be refused, not passed to RoPE and attention.
TEST(ModelConfig, ValidateRejectsWidthsThatWrapInt) {
  ModelConfig c;
  c.n_layers = 2; c.dim = 64; c.n_heads = 65537; c.n_kv_heads = 65537; c.head_dim = 65536;
  c.ffn_dim = 128; c.vocab_size = 10; c.max_ctx = 16; c.rope_dim = 8;
  ASSERT_EQ(static_cast<int32_t>(static_cast<uint32_t>(int64_t{c.n_heads} * c.head_dim)), 65536);
  try {
    c.validate();
    FAIL() << "accepted a wrapping query width";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("query width"), std::string::npos) << e.what();
  }
  ModelConfig wide = c;
  wide.n_heads = wide.n_kv_heads = 8;
  wide.head_dim = 8;
  wide.vocab_size = 1 << 30;
  EXPECT_THROW(wide.validate(), Error);
  wide.vocab_size = 10;
  wide.ffn_dim = 1 << 30;
  EXPECT_THROW(wide.validate(), Error);
}

// Shapes the attention kernel cannot take are load errors, not a throw inside
// an OpenMP region (std::terminate) at the first forward pass.
TEST(ModelConfig, ValidateRejectsHeadsTheKernelCannotTake) {
  ModelConfig c;
  c.n_layers = 2; c.dim = 64; c.n_heads = 8; c.n_kv_heads = 4; c.head_dim = 8;
  c.ffn_dim = 128; c.vocab_size = 10; c.max_ctx = 16; c.rope_dim = 8;
  c.layers.resize(2);
  ModelConfig big_head = c;
  big_head.head_dim = 512;
  EXPECT_THROW(big_head.validate(), Error);
  ModelConfig big_group = c;
  big_group.n_heads = 64;
  big_group.n_kv_heads = 1;
  EXPECT_THROW(big_group.validate(), Error);
  ModelConfig window = c;
  window.layers[1].attention.window = (1 << 30) + 1;
  EXPECT_THROW(window.validate(), Error);
}

}  // namespace
}  // namespace skiff

// fp16 / bf16 conversions against values worked out by hand from IEEE 754:
// subnormals, the largest finite values, infinities, NaNs and rounding ties.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/fp16.h"

namespace skiff {
namespace {

float pow2(int e) { return std::ldexp(1.0f, e); }

TEST(Fp16, DecodesKnownValues) {
  EXPECT_EQ(fp16_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_f32(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0x0400), pow2(-14));          // smallest normal
  EXPECT_EQ(fp16_to_f32(0x0001), pow2(-24));          // smallest subnormal
  EXPECT_EQ(fp16_to_f32(0x03FF), 1023 * pow2(-24));   // largest subnormal
  EXPECT_EQ(fp16_to_f32(0x8001), -pow2(-24));
  EXPECT_TRUE(std::signbit(fp16_to_f32(0x8000)) && fp16_to_f32(0x8000) == 0.0f);
  EXPECT_EQ(fp16_to_f32(0x7C00), INFINITY);
  EXPECT_EQ(fp16_to_f32(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7E00)));
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7C01)));  // signalling pattern stays a NaN
}

TEST(Fp16, EncodesWithRoundToNearestEven) {
  EXPECT_EQ(f32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_fp16(1.0f + pow2(-11)), 0x3C00);      // tie, down to even
  EXPECT_EQ(f32_to_fp16(1.0f + 3 * pow2(-11)), 0x3C02);  // tie, up to even
  EXPECT_EQ(f32_to_fp16(1.0f + pow2(-11) + pow2(-20)), 0x3C01);  // just past the tie
  EXPECT_EQ(f32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(65519.0f), 0x7BFF);   // below the halfway point to 65536
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);   // tie rounds to even: overflow to inf
  EXPECT_EQ(f32_to_fp16(-1e10f), 0xFC00);
  EXPECT_EQ(f32_to_fp16(INFINITY), 0x7C00);
  EXPECT_EQ(f32_to_fp16(-INFINITY), 0xFC00);
  const uint16_t nan = f32_to_fp16(NAN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
}

TEST(Fp16, EncodesSubnormals) {
  EXPECT_EQ(f32_to_fp16(pow2(-24)), 0x0001);
  EXPECT_EQ(f32_to_fp16(pow2(-25)), 0x0000);            // tie, down to even (zero)
  EXPECT_EQ(f32_to_fp16(pow2(-25) * 1.0001f), 0x0001);
  EXPECT_EQ(f32_to_fp16(3 * pow2(-25)), 0x0002);        // tie, up to even
  EXPECT_EQ(f32_to_fp16(pow2(-14) - pow2(-25)), 0x0400);  // tie at the normal boundary
  EXPECT_EQ(f32_to_fp16(1e-10f), 0x0000);
  EXPECT_EQ(f32_to_fp16(-1e-45f), 0x8000);              // f32 subnormal
}

TEST(Fp16, EveryHalfSurvivesARoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_fp16(f), h) << std::hex << h;
  }
}

TEST(Bf16, ConvertsKnownValues) {
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xC040), -3.0f);
  EXPECT_EQ(bf16_to_f32(0x0001), bits_to_f32(0x00010000));  // subnormal
  EXPECT_EQ(bf16_to_f32(0x7F80), INFINITY);
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7FC0)));
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3F808000)), 0x3F80);  // tie, down to even
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3F818000)), 0x3F82);  // tie, up to even
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3F808001)), 0x3F81);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x00018000)), 0x0002);  // subnormal tie, up to even
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x7F7FFFFF)), 0x7F80);  // largest float overflows
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xFF80);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x7F800001)), 0x7FC0);  // NaN stays NaN, made quiet
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0xFFC00000)), 0xFFC0);
}

TEST(Bf16, EveryBf16SurvivesARoundTrip) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_f32(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_bf16(f), b) << std::hex << b;
  }
}

}  // namespace
}  // namespace skiff

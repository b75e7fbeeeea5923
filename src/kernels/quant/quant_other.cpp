// MXFP4 (with integer kernels and a quantizer), and formats skiff reads through
// dequantize_row only (the scalar matmul kernel: dequantize a row, then dot
// it), as ggml defines them (ggml-common.h):
//   TQ1_0 (256 in 54 bytes): u8 qs[48], u8 qh[4], fp16 d; ternary digits
//         (x = d·(t - 1), t in 0..2) packed 5 per byte (qs) or 4 (qh) in base 3
//         as a fixed-point fraction: digit k of byte b is (b·3^k mod 256)·3 >> 8.
//         Elements 0-159 are digit k = e / 32 of qs[e % 32], 160-239 digit
//         (e - 160) / 16 of qs[32 + e % 16], 240-255 digit (e - 240) / 4 of qh[e % 4].
//   TQ2_0 (256 in 66 bytes): u8 qs[64], fp16 d; element 128h + 32s + l is bits
//         2s of qs[32h + l], x = d·(q - 1).
//   MXFP4 (32 in 17 bytes): u8 e (an E8M0 scale, halved: 2^(e - 128)), u8 qs[16]
//         of E2M1 codes (doubled: 0, 1, 2, 3, 4, 6, 8, 12 and their negatives),
//         the low nibbles elements 0-15, the high ones 16-31.
//   NVFP4 (64 in 36 bytes): u8 scales[4], unsigned E4M3 (bias 7, halved as
//         MXFP4's; 0 and 0x7F read as 0), one per 16 elements; u8 qs[32]: 16
//         elements s take qs[8s .. 8s + 8], low nibbles first, as E2M1 codes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quant/quant_formats.h"

namespace skiff {
namespace {

constexpr int kTq1Bytes = 54, kTq2Bytes = 66, kMxfp4Bytes = 17, kNvfp4Bytes = 36;

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

int ternary_digit(uint8_t byte, int k) {
  uint8_t shifted = byte;
  for (int i = 0; i < k; ++i) shifted = static_cast<uint8_t>(shifted * 3);  // mod 256, as uint8 arithmetic
  return (static_cast<int>(shifted) * 3) >> 8;
}

// An unsigned E4M3 scale, halved (exact in float: 3 mantissa bits).
float ue4m3_half(uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  const int exp = (x >> 3) & 0xF, man = x & 7;
  const float value = exp == 0 ? std::ldexp(static_cast<float>(man), -9)
                               : std::ldexp(1.0f + static_cast<float>(man) / 8.0f, exp - 7);
  return value * 0.5f;
}

}  // namespace

void dequantize_tq1_0(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kTq1Bytes, y += 256) {
    const float d = fp16_to_f32(load_u16(src + 52));
    for (int e = 0; e < 256; ++e) {
      int t;
      if (e < 160) t = ternary_digit(src[e % 32], e / 32);
      else if (e < 240) t = ternary_digit(src[32 + e % 16], (e - 160) / 16);
      else t = ternary_digit(src[48 + e % 4], (e - 240) / 4);
      y[e] = d * static_cast<float>(t - 1);
    }
  }
}

void dequantize_tq2_0(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kTq2Bytes, y += 256) {
    const float d = fp16_to_f32(load_u16(src + 64));
    for (int e = 0; e < 256; ++e) {
      const int q = (src[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
      y[e] = d * static_cast<float>(q - 1);
    }
  }
}

void dequantize_mxfp4(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kMxfp4Bytes, y += 32) {
    const float d = e8m0_half(src[0]);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>(kE2M1Doubled[src[1 + j] & 0xF]);
      y[j + 16] = d * static_cast<float>(kE2M1Doubled[src[1 + j] >> 4]);
    }
  }
}

// ggml's best_index_mxfp4: the E2M1 value nearest x / d, the first of equals
// (so 0 before -0, and a tie between two values takes the one of smaller magnitude).
uint8_t nearest_e2m1(float x, float d) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kE2M1Doubled[0]) * d - x);
  for (int k = 1; k < 16; ++k) {
    const float err = std::fabs(static_cast<float>(kE2M1Doubled[k]) * d - x);
    if (err < best_err) {
      best = k;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(best);
}

// The exponent e = floor(log2 max|x|) - 2 + 127 puts max|x| in [4, 8)·2^(e - 127),
// where the top values 4 and 6 (doubled: 8, 12 on the halved scale) lie; above
// 6 it clamps. ggml casts that float to uint8 unchecked: a block under 2^-125
// (a negative e) or with an infinity is undefined there, clamped to 0..254 here.
void quantize_mxfp4(const float* x, uint8_t* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 32, dst += kMxfp4Bytes) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));  // a NaN is skipped, as in ggml
    const float e = amax > 0 ? std::clamp(std::floor(std::log2(amax)) - 2 + 127, 0.0f, 254.0f) : 0.0f;
    dst[0] = static_cast<uint8_t>(e);
    const float d = e8m0_half(dst[0]);
    for (int j = 0; j < 16; ++j)
      dst[1 + j] = static_cast<uint8_t>(nearest_e2m1(x[j], d) | nearest_e2m1(x[j + 16], d) << 4);
  }
}

void dequantize_nvfp4(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kNvfp4Bytes) {
    for (int sub = 0; sub < 4; ++sub, y += 16) {
      const float d = ue4m3_half(src[sub]);
      const uint8_t* qs = src + 4 + 8 * sub;
      for (int j = 0; j < 8; ++j) {
        y[j] = d * static_cast<float>(kE2M1Doubled[qs[j] & 0xF]);
        y[j + 8] = d * static_cast<float>(kE2M1Doubled[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace skiff

// Super-blocks of 256 (ggml-common.h):
//   Q2_K   (84 bytes): u8 scales[16] (low nibble: scale, high: min of each 16
//          elements); u8 qs[64]; fp16 d, dmin        x = d*sc * q - dmin*m, q in 0..3
//   Q3_K  (110 bytes): u8 hmask[32]; u8 qs[64]; 16 six-bit scales packed in
//          12 bytes; fp16 d                          x = d*(sc - 32) * q, q in -4..3
//   IQ4_XS (136 bytes): fp16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]
//                                                    x = d*(sc - 32) * kIq4Levels[q]
// Q2_K / Q3_K: element e = 128h + 32s + l (h < 2, s < 4, l < 32) has its 2 low
// bits at bits 2s of qs[32h + l]; Q3_K's third bit is bit e / 32 of hmask[e % 32],
// set meaning q as is, clear meaning q - 4. Q3_K's scale j keeps its low 4 bits
// in the low (j < 8) or high nibble of byte j % 8 and its top 2 in bits
// 2·(j / 4) of byte 8 + j % 4.
// IQ4_XS: sub-block j (of 32) takes scale bits 4·(j % 2) of scales_l[j / 2] and
// 2j of scales_h as its top 2; its 32 nibbles are qs[16j ..], elements 0-15
// low, 16-31 high.
#include <cstring>

#include "kernels/quant/quant_formats.h"

namespace skiff {
namespace {

constexpr int kQ2Scales = 0, kQ2Qs = 16, kQ2D = 80, kQ2Bytes = 84;
constexpr int kQ3Hmask = 0, kQ3Qs = 32, kQ3Scales = 96, kQ3D = 108, kQ3Bytes = 110;
constexpr int kXsD = 0, kXsScalesH = 2, kXsScalesL = 4, kXsQs = 8, kXsBytes = 136;

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// The 2-bit field of element e in a Q2_K / Q3_K qs array.
int two_bits(const uint8_t* qs, int e) { return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3; }

int q3_scale(const uint8_t* s, int j) {
  const int low = (s[j % 8] >> (4 * (j / 8))) & 0xF;
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | high << 4) - 32;
}

int iq4_xs_scale(const uint8_t* block, int j) {
  const int low = (block[kXsScalesL + j / 2] >> (4 * (j % 2))) & 0xF;
  const int high = (load_u16(block + kXsScalesH) >> (2 * j)) & 3;
  return (low | high << 4) - 32;
}

}  // namespace

void dequantize_q2_k(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQ2Bytes, y += 256) {
    const float d = fp16_to_f32(load_u16(src + kQ2D)), dmin = fp16_to_f32(load_u16(src + kQ2D + 2));
    for (int e = 0; e < 256; ++e) {
      const uint8_t sm = src[kQ2Scales + e / 16];
      const float scale = d * static_cast<float>(sm & 0xF), min = dmin * static_cast<float>(sm >> 4);
      y[e] = scale * static_cast<float>(two_bits(src + kQ2Qs, e)) - min;
    }
  }
}

void dequantize_q3_k(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQ3Bytes, y += 256) {
    const float d = fp16_to_f32(load_u16(src + kQ3D));
    for (int e = 0; e < 256; ++e) {
      const float scale = d * static_cast<float>(q3_scale(src + kQ3Scales, e / 16));
      const bool high = (src[kQ3Hmask + e % 32] >> (e / 32)) & 1;
      y[e] = scale * static_cast<float>(two_bits(src + kQ3Qs, e) - (high ? 0 : 4));
    }
  }
}

void dequantize_iq4_xs(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kXsBytes, y += 256) {
    const float d = fp16_to_f32(load_u16(src + kXsD));
    for (int j = 0; j < 8; ++j) {
      const float scale = d * static_cast<float>(iq4_xs_scale(src, j));
      const uint8_t* qs = src + kXsQs + 16 * j;
      for (int l = 0; l < 16; ++l) {
        y[32 * j + l] = scale * static_cast<float>(kIq4Levels[qs[l] & 0xF]);
        y[32 * j + 16 + l] = scale * static_cast<float>(kIq4Levels[qs[l] >> 4]);
      }
    }
  }
}

// Per sub-block of 16: the level grid starts at -m (m = -min(0, min x)) with
// step (max x + m) / 3; steps and mins are 4-bit multiples of the fp16 d and
// dmin, rounded up so the grid covers the sub-block (as quant.cpp's Q4_K).
void quantize_q2_k(const float* x, uint8_t* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 256, dst += kQ2Bytes) {
    float mins[16], maxs[16], max_min = 0;
    for (int s = 0; s < 16; ++s) {
      const auto [lo, hi] = std::minmax_element(x + 16 * s, x + 16 * s + 16);
      mins[s] = -std::min(0.0f, *lo);
      maxs[s] = *hi;
      max_min = std::max(max_min, mins[s]);
    }
    const uint16_t hdmin = fp16_round_up(max_min / 15);
    const float dmin = fp16_to_f32(hdmin);
    int lm[16];
    float steps[16], max_step = 0;
    for (int s = 0; s < 16; ++s) {
      lm[s] = ceil_multiple(mins[s], dmin, 15);
      steps[s] = std::max(0.0f, (maxs[s] + dmin * static_cast<float>(lm[s])) / 3);
      max_step = std::max(max_step, steps[s]);
    }
    const uint16_t hd = fp16_round_up(max_step / 15);
    const float d = fp16_to_f32(hd);
    std::memcpy(dst + kQ2D, &hd, 2);
    std::memcpy(dst + kQ2D + 2, &hdmin, 2);
    std::memset(dst + kQ2Qs, 0, 64);
    for (int s = 0; s < 16; ++s) {
      const int ls = ceil_multiple(steps[s], d, 15);
      dst[kQ2Scales + s] = static_cast<uint8_t>(ls | lm[s] << 4);
      const float step = d * static_cast<float>(ls), min = dmin * static_cast<float>(lm[s]);
      for (int e = 16 * s; e < 16 * s + 16; ++e) {
        const int q = step > 0 ? round_clamped((x[e] + min) / step, 0, 3) : 0;
        dst[kQ2Qs + 32 * (e / 128) + e % 32] |= static_cast<uint8_t>(q << (2 * ((e % 128) / 32)));
      }
    }
  }
}

// Per sub-block of 16, as Q4_0: the element of largest magnitude maps to -4
// steps, so the step's sign is the opposite of its; the signed step is a
// 6-bit multiple (-32..31) of the fp16 d, rounded away from zero.
void quantize_q3_k(const float* x, uint8_t* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 256, dst += kQ3Bytes) {
    float steps[16], max_step = 0;
    for (int s = 0; s < 16; ++s) {
      const float max = signed_max(x + 16 * s, 16);
      steps[s] = max / -4;
      max_step = std::max(max_step, std::fabs(max) / 4);
    }
    const uint16_t hd = fp16_round_up(max_step / 31);
    const float d = fp16_to_f32(hd);
    std::memcpy(dst + kQ3D, &hd, 2);
    std::memset(dst, 0, kQ3D);
    for (int s = 0; s < 16; ++s) {
      const int magnitude = ceil_multiple(std::fabs(steps[s]), d, steps[s] < 0 ? 32 : 31);
      const int sc = steps[s] < 0 ? -magnitude : magnitude;
      const int stored = sc + 32;
      dst[kQ3Scales + s % 8] |= static_cast<uint8_t>((stored & 0xF) << (4 * (s / 8)));
      dst[kQ3Scales + 8 + s % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (s / 4)));
      const float step = d * static_cast<float>(sc);
      for (int e = 16 * s; e < 16 * s + 16; ++e) {
        const int q = step != 0 ? round_clamped(x[e] / step, -4, 3) : 0;
        dst[kQ3Qs + 32 * (e / 128) + e % 32] |= static_cast<uint8_t>((q & 3) << (2 * ((e % 128) / 32)));
        if (q >= 0) dst[kQ3Hmask + e % 32] |= static_cast<uint8_t>(1 << (e / 32));
      }
    }
  }
}

// Per sub-block of 32, as IQ4_NL: the element of largest magnitude maps to
// level -127, so the step's sign is the opposite of its; the signed step is a
// 6-bit multiple (-32..31) of the fp16 d, rounded away from zero, and every
// element takes the nearest level on it.
void quantize_iq4_xs(const float* x, uint8_t* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 256, dst += kXsBytes) {
    float steps[8], max_step = 0;
    for (int j = 0; j < 8; ++j) {
      steps[j] = signed_max(x + 32 * j, 32) / -127;
      max_step = std::max(max_step, std::fabs(steps[j]));
    }
    const uint16_t hd = fp16_round_up(max_step / 32);
    const float d = fp16_to_f32(hd);
    std::memset(dst, 0, kXsQs);
    std::memcpy(dst + kXsD, &hd, 2);
    uint16_t scales_h = 0;
    for (int j = 0; j < 8; ++j) {
      const int magnitude = ceil_multiple(std::fabs(steps[j]), d, steps[j] < 0 ? 32 : 31);
      const int sc = steps[j] < 0 ? -magnitude : magnitude;
      const int stored = sc + 32;
      dst[kXsScalesL + j / 2] |= static_cast<uint8_t>((stored & 0xF) << (4 * (j % 2)));
      scales_h = static_cast<uint16_t>(scales_h | (stored >> 4) << (2 * j));
      const float step = d * static_cast<float>(sc);
      const float inverse = step != 0 ? 1.0f / step : 0.0f;
      uint8_t* qs = dst + kXsQs + 16 * j;
      for (int l = 0; l < 16; ++l)
        qs[l] = static_cast<uint8_t>(nearest_iq4_level(x[32 * j + l] * inverse) |
                                     nearest_iq4_level(x[32 * j + 16 + l] * inverse) << 4);
    }
    std::memcpy(dst + kXsScalesH, &scales_h, 2);
  }
}

}  // namespace skiff

// Blocks of 32 weights with one fp16 scale d (ggml-common.h):
//   Q4_1   (20 bytes): fp16 d, m; u8 qs[16]              x = d * q + m
//   Q5_0   (22 bytes): fp16 d; u32 qh; u8 qs[16]          x = d * (q - 16)
//   Q5_1   (24 bytes): fp16 d, m; u32 qh; u8 qs[16]       x = d * q + m
//   IQ4_NL (18 bytes): fp16 d; u8 qs[16]                  x = d * kIq4Levels[q]
// qs[j] holds element j in its low nibble and element j + 16 in its high one;
// bit j of the little-endian qh is element j's fifth bit (16s).
#include <cstring>

#include "kernels/quant/quant_formats.h"

namespace skiff {
namespace {

struct Block32Layout {
  int bytes;  // per block
  int m;      // offset of the fp16 min, or -1
  int qh;     // offset of the fifth bits, or -1
  int qs;     // offset of the nibbles
};
constexpr Block32Layout kQ4_1{20, 2, -1, 4}, kQ5_0{22, -1, 2, 6}, kQ5_1{24, 2, 4, 8}, kIq4Nl{18, -1, -1, 2};

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// The 32 levels of a block (0..15, or 0..31 with fifth bits).
void block_levels(const uint8_t* block, const Block32Layout& l, uint8_t q[32]) {
  uint32_t qh = 0;
  if (l.qh >= 0) std::memcpy(&qh, block + l.qh, 4);
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<uint8_t>((block[l.qs + j] & 0xF) | ((qh >> j) & 1) << 4);
    q[j + 16] = static_cast<uint8_t>((block[l.qs + j] >> 4) | ((qh >> (j + 16)) & 1) << 4);
  }
}

void store_levels(const uint8_t q[32], const Block32Layout& l, uint8_t* block) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    block[l.qs + j] = static_cast<uint8_t>((q[j] & 0xF) | (q[j + 16] & 0xF) << 4);
    qh |= static_cast<uint32_t>(q[j] >> 4) << j | static_cast<uint32_t>(q[j + 16] >> 4) << (j + 16);
  }
  if (l.qh >= 0) std::memcpy(block + l.qh, &qh, 4);
}

// x = d * q + m (Q4_1, Q5_1): the product rounded, then the sum, as ggml and
// numpy compute it (this file is generic code: no FMA contraction).
void dequantize_min_blocks(const uint8_t* src, float* y, int64_t nb, const Block32Layout& l) {
  uint8_t q[32];
  for (int64_t i = 0; i < nb; ++i, src += l.bytes, y += 32) {
    const float d = fp16_to_f32(load_u16(src)), m = fp16_to_f32(load_u16(src + l.m));
    block_levels(src, l, q);
    for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(q[j]) + m;
  }
}

// As ggml's reference: d = (max - min) / max_level, m = min, and each level
// (x - min) / d rounded half up and clamped.
void quantize_min_blocks(const float* x, uint8_t* dst, int64_t nb, const Block32Layout& l, int max_level) {
  uint8_t q[32];
  for (int64_t i = 0; i < nb; ++i, x += 32, dst += l.bytes) {
    float min = x[0], max = x[0];
    for (int j = 1; j < 32; ++j) {
      min = std::min(min, x[j]);
      max = std::max(max, x[j]);
    }
    const float d = (max - min) / static_cast<float>(max_level);
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const uint16_t hd = f32_to_fp16(d), hm = f32_to_fp16(min);
    std::memcpy(dst, &hd, 2);
    std::memcpy(dst + l.m, &hm, 2);
    for (int j = 0; j < 32; ++j)
      q[j] = static_cast<uint8_t>(std::min(max_level, static_cast<int>(static_cast<int8_t>((x[j] - min) * id + 0.5f))));
    store_levels(q, l, dst);
  }
}

}  // namespace

void dequantize_q4_1(const uint8_t* src, float* y, int64_t nb) { dequantize_min_blocks(src, y, nb, kQ4_1); }
void dequantize_q5_1(const uint8_t* src, float* y, int64_t nb) { dequantize_min_blocks(src, y, nb, kQ5_1); }

void dequantize_q5_0(const uint8_t* src, float* y, int64_t nb) {
  uint8_t q[32];
  for (int64_t i = 0; i < nb; ++i, src += kQ5_0.bytes, y += 32) {
    const float d = fp16_to_f32(load_u16(src));
    block_levels(src, kQ5_0, q);
    for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(q[j] - 16);
  }
}

void dequantize_iq4_nl(const uint8_t* src, float* y, int64_t nb) {
  uint8_t q[32];
  for (int64_t i = 0; i < nb; ++i, src += kIq4Nl.bytes, y += 32) {
    const float d = fp16_to_f32(load_u16(src));
    block_levels(src, kIq4Nl, q);
    for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(kIq4Levels[q[j]]);
  }
}

void quantize_q4_1(const float* x, uint8_t* dst, int64_t nb) { quantize_min_blocks(x, dst, nb, kQ4_1, 15); }
void quantize_q5_1(const float* x, uint8_t* dst, int64_t nb) { quantize_min_blocks(x, dst, nb, kQ5_1, 31); }

// As ggml's reference: the element of largest magnitude maps to level 0
// (value -16) exactly, the rest round half up into 0..31.
void quantize_q5_0(const float* x, uint8_t* dst, int64_t nb) {
  uint8_t q[32];
  for (int64_t i = 0; i < nb; ++i, x += 32, dst += kQ5_0.bytes) {
    const float max = signed_max(x, 32);
    const float d = max / -16;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const uint16_t hd = f32_to_fp16(d);
    std::memcpy(dst, &hd, 2);
    for (int j = 0; j < 32; ++j)
      q[j] = static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(x[j] * id + 16.5f))));
    store_levels(q, kQ5_0, dst);
  }
}

// The element of largest magnitude maps to the table's -127 exactly (d =
// max / -127); every element takes the nearest level of x / d.
void quantize_iq4_nl(const float* x, uint8_t* dst, int64_t nb) {
  uint8_t q[32];
  for (int64_t i = 0; i < nb; ++i, x += 32, dst += kIq4Nl.bytes) {
    const float max = signed_max(x, 32);
    const uint16_t hd = f32_to_fp16(max / -127);
    std::memcpy(dst, &hd, 2);
    const float d = fp16_to_f32(hd);
    const float id = d != 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) q[j] = nearest_iq4_level(x[j] * id);
    store_levels(q, kIq4Nl, dst);
  }
}

}  // namespace skiff

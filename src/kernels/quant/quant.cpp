// Block formats (ggml-common.h), per block of `block_size` elements:
//   Q8_0 (32):  fp16 d; int8 qs[32]                      x = d * q
//   Q4_0 (32):  fp16 d; u8 qs[16], low nibbles hold elements 0..15, high 16..31
//                                                        x = d * (q - 8)
//   Q4_K (256): fp16 d, dmin; 6-bit scale/min pairs for 8 sub-blocks of 32
//               packed in 12 bytes; u8 qs[128], each 32 bytes hold two
//               sub-blocks (low nibbles, then high)      x = d*sc * q - dmin*m
//   Q5_K (256): as Q4_K, plus u8 qh[32] before qs: bit j of qh[l] is the
//               fifth bit of element l of sub-block j     x = d*sc * q - dmin*m
//   Q6_K (256): u8 ql[128] (low 4 bits), u8 qh[64] (high 2 bits), int8
//               scales[16] (one per 16 elements); fp16 d  x = d*sc * (q - 32)
#include "kernels/quant/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "base/error.h"
#include "kernels/fp16.h"
#include "kernels/quant/quant_formats.h"

namespace skiff {
namespace {

constexpr int kQK = 32;    // block size of the _0 formats
constexpr int kQKK = 256;  // block size of the K formats

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// ---- dequantization -------------------------------------------------------

void dequantize_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

void dequantize_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>((b[i].qs[j] & 0xF) - 8) * d;
      y[j + kQK / 2] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void pack_scale_min(uint8_t* q, int j, uint8_t sc, uint8_t m) {
  if (j < 4) {
    q[j] = static_cast<uint8_t>((q[j] & 0xC0) | sc);
    q[j + 4] = static_cast<uint8_t>((q[j + 4] & 0xC0) | m);
  } else {
    q[j + 4] = static_cast<uint8_t>((sc & 0xF) | ((m & 0xF) << 4));
    q[j - 4] = static_cast<uint8_t>(q[j - 4] | ((sc >> 4) << 6));
    q[j] = static_cast<uint8_t>(q[j] | ((m >> 4) << 6));
  }
}

// Q4_K and Q5_K: sub-block `sub` of 32 is the low (even) or high (odd)
// nibbles of qs[32·(sub/2) ..]; Q5_K adds bit `sub` of qh[l] as 16.
template <class Block>
void dequantize_k_nibbles(const Block* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_f32(b[i].d);
    const float dmin = fp16_to_f32(b[i].dmin);
    for (int sub = 0; sub < 8; ++sub, y += 32) {
      uint8_t sc, m;
      unpack_scale_min(b[i].scales, sub, sc, m);
      const float scale = d * sc;
      const float min = dmin * m;
      const uint8_t* q = b[i].qs + (sub / 2) * 32;
      const int shift = (sub % 2) * 4;
      for (int l = 0; l < 32; ++l) {
        int level = (q[l] >> shift) & 0xF;
        if constexpr (std::is_same_v<Block, BlockQ5_K>) level |= ((b[i].qh[l] >> sub) & 1) << 4;
        y[l] = scale * static_cast<float>(level) - min;
      }
    }
  }
}

// The 6-bit value of element e (0..255) of a Q6_K block, unsigned (0..63).
// Each 128-element half uses 64 ql bytes and 32 qh bytes: element 32k + l
// takes ql[l + 32*(k%2)] (low nibble for k < 2, high for k >= 2) and bits
// 2k, 2k+1 of qh[l].
struct Q6Position {
  int ql_index, ql_shift, qh_index, qh_shift;
};
Q6Position q6_position(int e) {
  const int half = e / 128, k = (e % 128) / 32, l = e % 32;
  return {half * 64 + l + 32 * (k % 2), 4 * (k / 2), half * 32 + l, 2 * k};
}

void dequantize_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQKK) {
    const float d = fp16_to_f32(b[i].d);
    for (int e = 0; e < kQKK; ++e) {
      const Q6Position p = q6_position(e);
      const int q = ((b[i].ql[p.ql_index] >> p.ql_shift) & 0xF) |
                    (((b[i].qh[p.qh_index] >> p.qh_shift) & 3) << 4);
      y[e] = d * static_cast<float>(b[i].scales[e / 16]) * static_cast<float>(q - 32);
    }
  }
}

// ---- quantization ---------------------------------------------------------

// As ggml's reference: d = max|x| / 127, q = roundf(x / d).
void quantize_q8_0(const float* x, BlockQ8_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = f32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) b[i].qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
  }
}

// As ggml's reference: the element of largest magnitude maps to -8 exactly,
// the rest round half up into 0..15.
void quantize_q4_0(const float* x, BlockQ4_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float d = signed_max(x, kQK) / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = f32_to_fp16(d);
    auto level = [&](float v) {
      return static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(v * id + 8.5f))));
    };
    for (int j = 0; j < kQK / 2; ++j)
      b[i].qs[j] = static_cast<uint8_t>(level(x[j]) | (level(x[j + kQK / 2]) << 4));
  }
}

// Q4_K (levels 0..15) and Q5_K (0..31), per sub-block of 32: the level grid
// starts at -m (m = -min(0, min x)) with step (max x + m) / max level. Mins
// and steps are stored as 6-bit multiples of the fp16 dmin and d, each rounded
// up, so the grid always covers the sub-block and the error is at most half a
// step. Levels go to qs as nibbles (and Q5_K's fifth bits to qh).
template <class Block>
void quantize_k_nibbles_block(const float* x, Block& b) {
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  constexpr int kMaxLevel = kFive ? 31 : 15;
  float mins[8], maxs[8];
  float max_min = 0;
  for (int s = 0; s < 8; ++s) {
    const auto [lo, hi] = std::minmax_element(x + 32 * s, x + 32 * s + 32);
    mins[s] = -std::min(0.0f, *lo);
    maxs[s] = *hi;
    max_min = std::max(max_min, mins[s]);
  }
  b.dmin = fp16_round_up(max_min / 63);
  const float dmin = fp16_to_f32(b.dmin);
  uint8_t lm[8];
  float steps[8], max_step = 0;
  for (int s = 0; s < 8; ++s) {
    lm[s] = static_cast<uint8_t>(ceil_multiple(mins[s], dmin, 63));
    steps[s] = std::max(0.0f, (maxs[s] + dmin * lm[s]) / kMaxLevel);
    max_step = std::max(max_step, steps[s]);
  }
  b.d = fp16_round_up(max_step / 63);
  const float d = fp16_to_f32(b.d);
  std::memset(b.scales, 0, sizeof b.scales);
  std::memset(b.qs, 0, sizeof b.qs);
  if constexpr (kFive) std::memset(b.qh, 0, sizeof b.qh);
  for (int s = 0; s < 8; ++s) {
    const auto ls = static_cast<uint8_t>(ceil_multiple(steps[s], d, 63));
    pack_scale_min(b.scales, s, ls, lm[s]);
    const float step = d * ls;
    const float min = dmin * lm[s];
    uint8_t* q = b.qs + (s / 2) * 32;
    for (int l = 0; l < 32; ++l) {
      const int level = step > 0 ? round_clamped((x[32 * s + l] + min) / step, 0, kMaxLevel) : 0;
      q[l] = static_cast<uint8_t>(q[l] | ((level & 0xF) << ((s % 2) * 4)));
      if constexpr (kFive) b.qh[l] = static_cast<uint8_t>(b.qh[l] | ((level >> 4) << s));
    }
  }
}

// Per sub-block of 16: symmetric levels -31..31 with step max|x| / 31, stored
// as an 8-bit multiple of the fp16 d (rounded up, as for Q4_K).
void quantize_q6_k_block(const float* x, BlockQ6_K& b) {
  float steps[16], max_step = 0;
  for (int s = 0; s < 16; ++s) {
    float amax = 0;
    for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * s + l]));
    steps[s] = amax / 31;
    max_step = std::max(max_step, steps[s]);
  }
  b.d = fp16_round_up(max_step / 127);
  const float d = fp16_to_f32(b.d);
  std::memset(b.ql, 0, sizeof b.ql);
  std::memset(b.qh, 0, sizeof b.qh);
  for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<int8_t>(ceil_multiple(steps[s], d, 127));
  for (int e = 0; e < kQKK; ++e) {
    const float step = d * static_cast<float>(b.scales[e / 16]);
    const int q = (step > 0 ? round_clamped(x[e] / step, -32, 31) : 0) + 32;
    const Q6Position p = q6_position(e);
    b.ql[p.ql_index] = static_cast<uint8_t>(b.ql[p.ql_index] | ((q & 0xF) << p.ql_shift));
    b.qh[p.qh_index] = static_cast<uint8_t>(b.qh[p.qh_index] | ((q >> 4) << p.qh_shift));
  }
}

int64_t block_count(DType type, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  const auto bs = static_cast<int64_t>(info.block_size);
  if (n < 0 || n % bs != 0) fail("row of {} elements is not a whole number of {} blocks", n, info.name);
  return n / bs;
}

}  // namespace

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(type, n);
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(h[i]);
      return;
    }
    case DType::BF16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
      return;
    }
    case DType::Q8_0: dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb); return;
    case DType::Q4_0: dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb); return;
    case DType::Q4_K: dequantize_k_nibbles(static_cast<const BlockQ4_K*>(src), dst, nb); return;
    case DType::Q5_K: dequantize_k_nibbles(static_cast<const BlockQ5_K*>(src), dst, nb); return;
    case DType::Q6_K: dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb); return;
    case DType::Q4_1: return dequantize_q4_1(static_cast<const uint8_t*>(src), dst, nb);
    case DType::Q5_0: return dequantize_q5_0(static_cast<const uint8_t*>(src), dst, nb);
    case DType::Q5_1: return dequantize_q5_1(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ4_NL: return dequantize_iq4_nl(static_cast<const uint8_t*>(src), dst, nb);
    case DType::Q2_K: return dequantize_q2_k(static_cast<const uint8_t*>(src), dst, nb);
    case DType::Q3_K: return dequantize_q3_k(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ4_XS: return dequantize_iq4_xs(static_cast<const uint8_t*>(src), dst, nb);
    case DType::TQ1_0: return dequantize_tq1_0(static_cast<const uint8_t*>(src), dst, nb);
    case DType::TQ2_0: return dequantize_tq2_0(static_cast<const uint8_t*>(src), dst, nb);
    case DType::MXFP4: return dequantize_mxfp4(static_cast<const uint8_t*>(src), dst, nb);
    case DType::NVFP4: return dequantize_nvfp4(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ2_XXS: return dequantize_iq2_xxs(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ2_XS: return dequantize_iq2_xs(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ2_S: return dequantize_iq2_s(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ3_XXS: return dequantize_iq3_xxs(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ3_S: return dequantize_iq3_s(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ1_S: return dequantize_iq1_s(static_cast<const uint8_t*>(src), dst, nb);
    case DType::IQ1_M: return dequantize_iq1_m(static_cast<const uint8_t*>(src), dst, nb);
  }
  fail("cannot dequantize type {}", static_cast<uint32_t>(type));
}

bool can_quantize(DType type) {
  switch (type) {
    case DType::TQ1_0: case DType::TQ2_0: case DType::NVFP4: case DType::IQ2_XXS:
    case DType::IQ2_XS: case DType::IQ2_S: case DType::IQ3_XXS: case DType::IQ3_S: case DType::IQ1_S:
    case DType::IQ1_M:
      return false;
    default:
      return true;
  }
}

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(type, n);
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: {
      auto* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_fp16(src[i]);
      return;
    }
    case DType::BF16: {
      auto* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::Q8_0: quantize_q8_0(src, static_cast<BlockQ8_0*>(dst), nb); return;
    case DType::Q4_0: quantize_q4_0(src, static_cast<BlockQ4_0*>(dst), nb); return;
    case DType::Q4_K:
      for (int64_t i = 0; i < nb; ++i) quantize_k_nibbles_block(src + i * kQKK, static_cast<BlockQ4_K*>(dst)[i]);
      return;
    case DType::Q5_K:
      for (int64_t i = 0; i < nb; ++i) quantize_k_nibbles_block(src + i * kQKK, static_cast<BlockQ5_K*>(dst)[i]);
      return;
    case DType::Q6_K:
      for (int64_t i = 0; i < nb; ++i) quantize_q6_k_block(src + i * kQKK, static_cast<BlockQ6_K*>(dst)[i]);
      return;
    case DType::Q4_1: return quantize_q4_1(src, static_cast<uint8_t*>(dst), nb);
    case DType::Q5_0: return quantize_q5_0(src, static_cast<uint8_t*>(dst), nb);
    case DType::Q5_1: return quantize_q5_1(src, static_cast<uint8_t*>(dst), nb);
    case DType::Q2_K: return quantize_q2_k(src, static_cast<uint8_t*>(dst), nb);
    case DType::Q3_K: return quantize_q3_k(src, static_cast<uint8_t*>(dst), nb);
    case DType::IQ4_NL: return quantize_iq4_nl(src, static_cast<uint8_t*>(dst), nb);
    case DType::IQ4_XS: return quantize_iq4_xs(src, static_cast<uint8_t*>(dst), nb);
    case DType::MXFP4: return quantize_mxfp4(src, static_cast<uint8_t*>(dst), nb);
    default: break;  // read only (can_quantize)
  }
  fail("cannot quantize type {}", static_cast<uint32_t>(type));
}

}  // namespace skiff

// Where the parts of one quantized activation row lie (see matmul_activations.cpp
// for the formats). Shared by the quantizer, the integer kernels and the tests.
// Everything is constexpr in an anonymous namespace: each translation unit,
// whatever its ISA flags, gets its own internal copy, so nothing compiled for
// AVX-512 can be linked into a generic caller.
#pragma once
#include <cstdint>

#include "kernels/matmul/matmul_kernels.h"

namespace skiff {
namespace {

constexpr int64_t kActAlign = 64;  // every part starts on a cache line

constexpr int64_t act_round_up(int64_t n) { return (n + kActAlign - 1) / kActAlign * kActAlign; }

// Byte offsets inside a row of `cols` elements.
//   kQ8_0: int8 q[cols] | f32 d[cols/32] | int32 sum[cols/32]      (sum = Σ q of the block)
//   kQ8_K: int8 q[cols] | f32 d[cols/256] | f32 dsum[cols/32]      (dsum = d · Σ q of 32 elements)
//          | f32 dsum16[cols/16]                                   (the same per 16: Q2_K's mins)
//          | int16 qsum16[cols/16]                                 (Σ q of 16 elements, exact)
// Each part is padded with zeros to a multiple of 64 bytes, so a kernel may read
// the scales and sums of 8 or 16 blocks at once past the last block.
// qsum16 is made once with the row: the kernels that need Σq per 16 (Q6_K's
// offsets, Q2_K / Q3_K's sub-block sums) read it in every call, where making
// it per call cost each of a decode product's ~25 claims (UnitRanges) a pass
// over the row, a measurable part of a Q6_K decode on two threads
// (figures: docs/notes/kernel-design-figures.md).
struct ActLayout {
  int64_t scales;   // f32 d, one per 32 (kQ8_0) or 256 (kQ8_K) elements
  int64_t sums;     // int32 sum (kQ8_0) or f32 dsum (kQ8_K), one per 32 elements
  int64_t sums16;   // kQ8_K: f32 dsum per 16 elements (kQ8_0: none, = bytes)
  int64_t qsums16;  // kQ8_K: int16 Σq per 16 elements (kQ8_0: none, = bytes)
  int64_t bytes;    // the whole row
};

constexpr ActLayout act_layout(ActivationFormat format, int64_t cols) {
  const bool k = format == ActivationFormat::kQ8_K;
  const int64_t n_scales = k ? cols / 256 : cols / 32;
  const int64_t scales = act_round_up(cols);
  const int64_t sums = scales + act_round_up(4 * n_scales);
  const int64_t sums16 = sums + act_round_up(4 * (cols / 32));
  const int64_t qsums16 = sums16 + (k ? act_round_up(4 * (cols / 16)) : 0);
  return {scales, sums, sums16, qsums16, qsums16 + (k ? act_round_up(2 * (cols / 16)) : 0)};
}

// Token t's quantized activation row, split into its parts.
struct ActRow {
  const int8_t* q;
  const float* d;
  const void* sums;
  const float* sums16;     // kQ8_K only
  const int16_t* qsums16;  // kQ8_K only
};

inline ActRow act_row_at(const uint8_t* base, const ActLayout& l) {
  return {reinterpret_cast<const int8_t*>(base), reinterpret_cast<const float*>(base + l.scales), base + l.sums,
          reinterpret_cast<const float*>(base + l.sums16), reinterpret_cast<const int16_t*>(base + l.qsums16)};
}

inline ActRow act_row(const Activations& x, const ActLayout& l, int t) {
  return act_row_at(x.quant + x.quant_row_bytes * static_cast<size_t>(t), l);
}

// The quantized activations of up to kQuadTokens tokens interleaved per unit
// of 32 elements, for the AVX-512 integer tiles: one pointer with constant
// offsets reaches a tile's tokens (four rows' pointers, scales and sums did not
// fit the general registers next to the weights'). Quad k holds tokens
// 4k..4k+3 as [cols/32] units; lanes past the last token are zero.
constexpr int kQuadTokens = 4;
struct alignas(64) QuadUnit {
  int32_t q[8][kQuadTokens];  // group g: bytes 4g..4g+3 of the unit, per token
  float d[kQuadTokens];       // the token's scale for this unit (kQ8_K: its super-block's)
  float dsum[kQuadTokens];    // d·Σq of the unit
  // kQ8_0: sum[0] = Σq of the unit (sum[1] zero). kQ8_K: sum[h] = -32·Σq of
  // its elements 16h..16h+15, where the Q6_K tiles start their int32 sums (the
  // levels are stored + 32: Σ (q - 32)·x = Σ q·x - 32·Σx).
  int32_t sum[2][kQuadTokens];
};
static_assert(sizeof(QuadUnit) == 192, "three cache lines per unit");

}  // namespace
}  // namespace skiff

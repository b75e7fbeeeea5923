// Where the parts of one quantized activation row lie (see matmul_activations.cpp
// for the formats). Shared by the quantizer, the integer kernels and the tests.
// Everything is constexpr in an anonymous namespace: each translation unit,
// whatever its ISA flags, gets its own internal copy, so nothing compiled for
// AVX-512 can be linked into a generic caller.
#pragma once
#include <cstdint>

#include "kernels/matmul_kernels.h"

namespace skiff {
namespace {

constexpr int64_t kActAlign = 64;  // every part starts on a cache line

constexpr int64_t act_round_up(int64_t n) { return (n + kActAlign - 1) / kActAlign * kActAlign; }

// Byte offsets inside a row of `cols` elements.
//   kQ8_0: int8 q[cols] | f32 d[cols/32] | int32 sum[cols/32]      (sum = Σ q of the block)
//   kQ8_K: int8 q[cols] | f32 d[cols/256] | f32 dsum[cols/32]      (dsum = d · Σ q of 32 elements)
// Each part is padded with zeros to a multiple of 64 bytes, so a kernel may read
// the scales and sums of 8 or 16 blocks at once past the last block.
struct ActLayout {
  int64_t scales;  // f32 d, one per 32 (kQ8_0) or 256 (kQ8_K) elements
  int64_t sums;    // int32 sum (kQ8_0) or f32 dsum (kQ8_K), one per 32 elements
  int64_t bytes;   // the whole row
};

constexpr ActLayout act_layout(ActivationFormat format, int64_t cols) {
  const int64_t n_scales = format == ActivationFormat::kQ8_K ? cols / 256 : cols / 32;
  const int64_t scales = act_round_up(cols);
  const int64_t sums = scales + act_round_up(4 * n_scales);
  return {scales, sums, sums + act_round_up(4 * (cols / 32))};
}

}  // namespace
}  // namespace skiff

// Q8_0 weights repacked, once at load, into the layout the AVX-512 integer
// kernels read (as llama.cpp's CPU backend repacks Q4_0 into interleaved rows):
// no per-call packing in prefill, and decode streams 16 rows at once with no
// per-row reductions. Same bytes as the Q8_0 rows, rewritten in place.
//
// Rows go in panels of 16, each a run of U = cols/32 units of 544 bytes (16
// rows × 34 bytes, as Q8_0), unit u of panel p at byte (p · U + u) · 544:
//   weights: [8][64] bytes: group g = columns 32u+4g .. 32u+4g+3 of rows
//            0..15 (row i at bytes 4i..4i+3), each weight + 128 as an
//            unsigned byte (the u8 operand of vpdpbusd);
//   scales:  [16] fp16: the block scales of rows 0..15.
// The scales sit next to their weights so that decode reads one stream
// (a separate scale array per panel measured 25% slower on Zen 4).
#pragma once
#include <cstdint>

#include "kernels/matmul.h"

namespace skiff {

constexpr int kQ8PanelRows = 16;
constexpr int64_t kQ8PanelWeightBytes = 8 * 64;                    // one unit's weights
constexpr int64_t kQ8PanelUnitBytes = kQ8PanelWeightBytes + 32;  // and its scales

// Whether m can be repacked: Q8_0 rows, rows a multiple of 16, cols of 64.
bool can_repack_q8_0(const Matrix& m);

// Rewrites m's bytes (at `data`, the writable memory m.data points to) into
// panels and sets m.layout. Parallel over panels.
void repack_q8_0(Matrix& m, uint8_t* data);

// Start of panel p (its unit 0).
inline const uint8_t* q8_panel(const Matrix& m, int64_t p) {
  return static_cast<const uint8_t*>(m.data) + p * (m.cols / 32) * kQ8PanelUnitBytes;
}

// Row r of a repacked matrix as floats (bit-identical to dequantizing the Q8_0 row).
void q8_0_panel_row(const Matrix& m, int64_t r, float* out);

}  // namespace skiff

// Q8_0 and Q4_0 weights repacked, once at load, into the layout the AVX-512
// integer kernels read (as llama.cpp's CPU backend repacks Q4_0 into
// interleaved rows): no per-call packing in prefill, and decode streams 16
// rows at once with no per-row reductions. Same bytes as the GGUF rows,
// rewritten in place.
//
// Rows go in panels of 16, each a run of U = cols/32 units, unit u of panel p
// at byte (p · U + u) · unit_bytes, unit_bytes = 16 rows × the block's bytes:
//   Q8_0 (544 bytes): 8 vectors of 64 bytes, vector g holding columns
//        32u+4g .. 32u+4g+3 of rows 0..15 (row i at bytes 4i..4i+3), each
//        weight + 128 as an unsigned byte (the u8 operand of vpdpbusd);
//   Q4_0 (288 bytes): 4 vectors of 64 bytes, vector g holding bytes 4g..4g+3
//        of each row's 16 nibble bytes (row i at bytes 4i..4i+3): the low
//        nibbles are columns 32u+4g.., the high ones 32u+16+4g..;
//   then the 16 rows' fp16 block scales.
// The scales sit next to their weights so that decode reads one stream
// (a separate scale array per panel measured 25% slower on Zen 4).
#pragma once
#include <cstdint>

#include "kernels/matmul.h"

namespace skiff {

constexpr int kPanelRowCount = 16;

// Bytes of one unit's weights (before its scales), and of the whole unit.
constexpr int64_t panel_weight_bytes(DType type) { return type == DType::Q4_0 ? 4 * 64 : 8 * 64; }
constexpr int64_t panel_unit_bytes(DType type) { return panel_weight_bytes(type) + 2 * kPanelRowCount; }

// Whether m can be repacked: Q8_0 or Q4_0 rows, rows a multiple of 16, cols of 64.
bool can_repack(const Matrix& m);

// Rewrites m's bytes (at `data`, the writable memory m.data points to) into
// panels and sets m.layout. Parallel over panels.
void repack(Matrix& m, uint8_t* data);

// Start of panel p (its unit 0).
inline const uint8_t* panel_start(const Matrix& m, int64_t p) {
  return static_cast<const uint8_t*>(m.data) + p * (m.cols / 32) * panel_unit_bytes(m.type);
}

// Row r of a repacked matrix as floats (bit-identical to dequantizing the row).
void panel_row(const Matrix& m, int64_t r, float* out);

}  // namespace skiff

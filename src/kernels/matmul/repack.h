// Q8_0, the other blocks of 32, Q2_K, Q3_K, Q4_K, Q6_K, IQ4_XS and float
// weights repacked, once at load, into the layouts the AVX-512 kernels read
// (the integer types' also the AVX2 kernels:
// x86/avx2/matmul_block32_panels_avx2.cpp, matmul_q4_k_panels_avx2.cpp,
// matmul_k16_panels_avx2.cpp) (as llama.cpp's CPU backend repacks Q4_0 into
// interleaved rows): no per-call packing in prefill, and decode streams 16 rows
// at once with no per-row reductions. Same bytes as the GGUF rows, rewritten in
// place: panel p (rows 16p .. 16p+15) takes the place of its 16 rows, at
// byte p · 16 · row_bytes(type, cols).
//
// F32, F16, BF16: [cols][16] elements: column k of the 16 rows together (one
// vector after conversion, times the broadcast activation k).
// Q8_0 and the other blocks of 32 (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4): U = cols/32
// units, unit u at byte u · unit_bytes within the panel, unit_bytes = 16 rows ×
// the block's bytes:
//   Q8_0 (544 bytes): 8 vectors of 64 bytes, vector g holding columns
//        32u+4g .. 32u+4g+3 of rows 0..15 (row i at bytes 4i..4i+3), each
//        weight + 128 as an unsigned byte (the u8 operand of vpdpbusd);
//   the others: 4 vectors of 64 bytes, vector g holding bytes 4g..4g+3 of each
//        row's 16 nibble bytes (row i at bytes 4i..4i+3): the low nibbles are
//        columns 32u+4g.., the high ones 32u+16+4g..; Q5_0 / Q5_1: then a
//        vector of the 16 rows' fifth bits, byte 4i + c holding row i's
//        columns c, c + 4, …, c + 28 at bits 0..7: bit j is column 4j + c,
//        the one beside it in group j's vector (j >= 4: the high nibbles of
//        vector j - 4), so a group's fifth bits are one shift and an and on
//        AVX2, one vptestmb on AVX-512;
//   then the 16 rows' fp16 block scales d (MXFP4: their E8M0 bytes); Q4_1 /
//   Q5_1: then their fp16 mins m.
// Q4_K: per super-block of 256 columns, 16 × 144 = 2304 bytes: the 16 rows'
//   12 packed scale/min bytes as 3 vectors of 64 bytes (vector v: bytes
//   4v..4v+3 of row i at 4i, so lane i of a dword vector is row i), the 16
//   rows' fp16 d, their fp16 dmin, then its 8 units' nibbles in the Q4_0 form
//   above (256 bytes each; unit j is sub-block j).
// Q6_K: per super-block of 256 columns, 16 × 210 = 3360 bytes: the 16 rows' int8
//   sub-block scales (sub-block j of row i at byte 16j + i), their fp16 d, then
//   its 8 units of 32 columns, 384 bytes each: the low 4 bits of the levels in
//   the Q4_0 form above (4 vectors), then their top 2 bits as 2 vectors: vector
//   v, byte 4i + c, bits 2k, 2k+1: column 16v + 4k + c of row i.
// Q3_K: per super-block of 256 columns, 16 × 110 = 1760 bytes: the 16 rows'
//   sub-block scales as 3 vectors (bytes 4i..4i+3 of each: row i; the low 16
//   bits hold the even sub-blocks 2k, the high 16 the odd ones 2k+1; each
//   scale as the 6-bit two's complement of sc - 32, so a word shift
//   sign-extends it): unit k < 6 in vector k / 2 at bits 6·(k % 2) of the
//   word; units 6 and 7: the top 4 bits at bits 12..15 of vector 0 (unit 6) or
//   1 (unit 7), the low 2 at bits 12 (unit 6) or 14 (unit 7) of vector 2.
//   Then the rows' fp16 d, then its 8 units of 32 columns as 3 vectors, byte
//   4i + c of vector m holding row i's 3-bit levels u = low2 + 4·hbit (level
//   u - 4) of columns 4m + c at bits 0..2 and 16 + 4m + c at bits 3..5 (m < 3);
//   columns 12 + c and 28 + c have their low 2 bits at bits 6, 7 of vector 0
//   and 1, their third bit at bit 6 and 7 of vector 2. So six of a unit's
//   eight vpdpbusd inputs are one and.
// Q2_K: per super-block of 256 columns, 16 × 84 = 1344 bytes: the 16 rows'
//   scale/min bytes (sc | m << 4) as 4 vectors, dword lane i of vector v holding
//   row i's bytes of sub-blocks 4v, 4v + 2 (low 16 bits: units 2v, 2v + 1's A)
//   and 4v + 1, 4v + 3 (high: their B); then the rows' fp16 d, their fp16 dmin,
//   then its 8 units as 2 vectors, byte 4i + c of vector m holding row i's
//   levels of columns 8m + c, 8m + 4 + c, 16 + 8m + c, 16 + 8m + 4 + c at bits
//   0, 2, 4, 6.
// IQ4_XS: per super-block of 256 columns, 16 × 136 = 2176 bytes: the 16 rows'
//   4 scales_l bytes as a vector of 64 (row i at 4i: sub-block j's low 4 bits
//   at bits 4j of the dword), their 16-bit scales_h (sub-block j's top 2 bits
//   at bits 2j), their fp16 d, then its 8 units' nibbles in the Q4_0 form.
// The scales sit next to their weights so that decode reads one stream (a
// separate scale array per panel measured slower on Zen 4), and a Q4_K
// super-block's scales come first, so the stream only ever moves forward: with
// them after the weights (read before them), Zen 5's prefetcher fell behind and
// decode ran far slower than rows as stored (figures:
// docs/notes/kernel-design-figures.md).
#pragma once
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/isa.h"
#include "kernels/matmul/matrix.h"

namespace skiff {

constexpr int kPanelRowCount = 16;

// Bytes of one unit's weights (before its scales), and of the whole unit (the blocks of 32).
constexpr bool panel_has_qh(DType type) { return type == DType::Q5_0 || type == DType::Q5_1; }
constexpr bool panel_has_min(DType type) { return type == DType::Q4_1 || type == DType::Q5_1; }
constexpr int64_t panel_weight_bytes(DType type) {
  return type == DType::Q8_0 ? 8 * 64 : panel_has_qh(type) ? 5 * 64 : 4 * 64;
}
// Where a Q5_0 / Q5_1 unit's qh vector starts: after its 4 vectors of nibbles.
constexpr int64_t kPanelQhAt = 4 * 64;
// Bytes of a row's block scale (and min): fp16, or MXFP4's E8M0 byte.
constexpr int64_t panel_scale_bytes(DType type) { return type == DType::MXFP4 ? 1 : 2; }
constexpr int64_t panel_unit_bytes(DType type) {
  return panel_weight_bytes(type) + (panel_has_min(type) ? 2 : 1) * panel_scale_bytes(type) * kPanelRowCount;
}

// A Q4_K super-block's parts within a panel (byte offsets from its start).
constexpr int64_t kQ4KPanelGroupBytes = 16 * 144;
constexpr int64_t kQ4KPanelScales = 0;
constexpr int64_t kQ4KPanelD = kQ4KPanelScales + 3 * 64;
constexpr int64_t kQ4KPanelDmin = kQ4KPanelD + 2 * kPanelRowCount;
constexpr int64_t kQ4KPanelWeights = kQ4KPanelDmin + 2 * kPanelRowCount;
static_assert(kQ4KPanelWeights + 8 * panel_weight_bytes(DType::Q4_K) == kQ4KPanelGroupBytes,
              "a Q4_K panel is its rows' bytes");

// A Q6_K super-block's parts within a panel, and one unit's bytes (4 vectors of
// low bits, 2 of high bits).
constexpr int64_t kQ6KPanelGroupBytes = 16 * 210;
constexpr int64_t kQ6KPanelScales = 0;
constexpr int64_t kQ6KPanelD = kQ6KPanelScales + 16 * kPanelRowCount;
constexpr int64_t kQ6KPanelWeights = kQ6KPanelD + 2 * kPanelRowCount;
constexpr int64_t kQ6KPanelUnitBytes = 6 * 64;
static_assert(kQ6KPanelWeights + 8 * kQ6KPanelUnitBytes == kQ6KPanelGroupBytes, "a Q6_K panel is its rows' bytes");

// A Q3_K super-block's parts within a panel, and one unit's bytes (3 vectors).
constexpr int64_t kQ3KPanelGroupBytes = 16 * 110;
constexpr int64_t kQ3KPanelScales = 0;
constexpr int64_t kQ3KPanelD = kQ3KPanelScales + 3 * 64;
constexpr int64_t kQ3KPanelWeights = kQ3KPanelD + 2 * kPanelRowCount;
constexpr int64_t kQ3KPanelUnitBytes = 3 * 64;
static_assert(kQ3KPanelWeights + 8 * kQ3KPanelUnitBytes == kQ3KPanelGroupBytes, "a Q3_K panel is its rows' bytes");

// A Q2_K super-block's parts within a panel, and one unit's bytes (2 vectors).
constexpr int64_t kQ2KPanelGroupBytes = 16 * 84;
constexpr int64_t kQ2KPanelScales = 0;
constexpr int64_t kQ2KPanelD = kQ2KPanelScales + 4 * 64;
constexpr int64_t kQ2KPanelDmin = kQ2KPanelD + 2 * kPanelRowCount;
constexpr int64_t kQ2KPanelWeights = kQ2KPanelDmin + 2 * kPanelRowCount;
constexpr int64_t kQ2KPanelUnitBytes = 2 * 64;
static_assert(kQ2KPanelWeights + 8 * kQ2KPanelUnitBytes == kQ2KPanelGroupBytes, "a Q2_K panel is its rows' bytes");

// An IQ4_XS super-block's parts within a panel.
constexpr int64_t kIq4XsPanelGroupBytes = 16 * 136;
constexpr int64_t kIq4XsPanelScalesLow = 0;
constexpr int64_t kIq4XsPanelScalesHigh = kIq4XsPanelScalesLow + 4 * kPanelRowCount;
constexpr int64_t kIq4XsPanelD = kIq4XsPanelScalesHigh + 2 * kPanelRowCount;
constexpr int64_t kIq4XsPanelWeights = kIq4XsPanelD + 2 * kPanelRowCount;
static_assert(kIq4XsPanelWeights + 8 * 4 * 64 == kIq4XsPanelGroupBytes, "an IQ4_XS panel is its rows' bytes");

// Whether kernels of `isa` read panels of `type` (the loader repacks only
// then): AVX-512 every type can_repack takes, AVX2 all but the floats (the
// tables, x86/<isa>/matmul_table_<isa>.cpp; matmul.cpp).
bool panel_kernel_for(Isa isa, DType type);

// Whether m can be repacked: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q2_K, Q3_K, Q4_K, Q6_K, IQ4_XS, F32, F16 or BF16 rows,
// rows a multiple of 16, cols of 64.
bool can_repack(const Matrix& m);

// Rewrites m's bytes (at `data`, the writable memory m.data points to) into
// panels and sets m.layout. Parallel over panels.
void repack(Matrix& m, uint8_t* data);

// Start of panel p. Not inline: the AVX-512 kernels call it (see kv_row.h).
const uint8_t* panel_start(const Matrix& m, int64_t p);

// Row r of a repacked matrix as floats (bit-identical to dequantizing the row).
void panel_row(const Matrix& m, int64_t r, float* out);
// Block b (dtype_info(m.type).block_size columns) of that row.
void panel_block(const Matrix& m, int64_t r, int64_t b, float* out);
// Column c of panel p's 16 rows of a repacked integer matrix (panel_reads_columns),
// as dequantize_row gives it, read in place: the few columns activation
// outliers meet cost no rebuilt blocks.
bool panel_reads_columns(DType type);
void panel_column(const Matrix& m, int64_t p, int64_t c, float* out);
// panel_column's column of a Q4_K or Q6_K super-block group (element e, 0..255)
// on AVX2 (x86/avx2/column_panels_avx2.cpp); false for the other types.
bool k_quant_panel_column_avx2(DType type, const uint8_t* group, int e, float* out);
// Asks for the cache lines panel_column(m, p, c) reads: a column's elements lie
// a panel apart, too far for the hardware prefetcher to follow.
void prefetch_panel_column(const Matrix& m, int64_t p, int64_t c);

}  // namespace skiff

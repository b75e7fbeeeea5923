// The contract between the matmul dispatcher (matmul.cpp) and the per-ISA,
// per-type kernels. Internal to src/kernels. Must stay includable from the
// *_avx2.cpp / *_avx512.cpp files: plain declarations, no STL.
#pragma once
#include <emmintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/matmul.h"

namespace skiff {

// The form in which a kernel reads the activations.
enum class ActivationFormat {
  kF32,   // the float rows themselves
  kQ8_0,  // per row, blocks of 32 int8 with a scale (for Q8_0 / Q4_0 weights)
  kQ8_K,  // per row, blocks of 256 int8 with a scale and 32-element sums (for Q4_K, Q5_K, Q6_K)
};

// Bytes of one quantized activation row of `cols` elements (0 for kF32).
size_t activation_row_bytes(ActivationFormat format, int64_t cols);
// r = x - the row quantize_activation_row makes of x, dequantized: what the
// integer kernels do not see of x.
void activation_residual(ActivationFormat format, const float* x, float* r, int64_t cols);
// Quantizes one activation row for the integer kernels.
void quantize_activation_row(ActivationFormat format, const float* x, void* out, int64_t cols);

// Σq of 16 int8 values: psadbw's unsigned sum of the bytes + 128, less
// 16·128 (SSE2, so every ISA; the scalar loop of 16 adds was most of a decode
// row's Q8_K quantization). An exact integer, whatever the order.
inline int32_t sum16_int8(const int8_t* q) {
  const __m128i u = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)),
                                  _mm_set1_epi8(static_cast<char>(0x80)));
  const __m128i s = _mm_sad_epu8(u, _mm_setzero_si128());  // two 16-bit sums, at bits 0 and 64
  return _mm_cvtsi128_si32(s) + _mm_extract_epi16(s, 4) - 16 * 128;
}

// Bytes of the quads (QuadUnit, quant_activation_layout.h) of n_tokens rows.
size_t activation_quads_bytes(int64_t cols, int n_tokens);
// Interleaves quad k (tokens 4k..4k+3) of n_tokens rows quantized by
// quantize_activation_row (row_bytes apart) into `quads` (the whole array,
// activation_quads_bytes long, 64-byte aligned).
void pack_activation_quad(ActivationFormat format, const uint8_t* rows, size_t row_bytes, int n_tokens,
                          int64_t cols, int64_t k, void* quads);

// Where a decode kernel's software prefetch puts the weight stream: L1, L2
// only, or nowhere (the hardware prefetchers alone).
enum class PrefetchLevel : uint8_t { kL1, kL2, kNone };
constexpr int kPrefetchLevels = 3;

struct Activations {
  const float* f32 = nullptr;      // [n_tokens, cols]
  const uint8_t* quant = nullptr;  // [n_tokens] rows of activation_row_bytes, or null for kF32
  size_t quant_row_bytes = 0;
  const void* quads = nullptr;     // the rows as quads, when the kernel reads them (quads_from_tokens)
  int n_tokens = 0;
  int64_t cols = 0;
  PrefetchLevel prefetch = PrefetchLevel::kL1;  // where decode kernels that read it fetch weights ahead (prefetch_tuner.h)
};

// Writes y[t * ldy + r] = dot(row r of w, activation row t) for r in [r0, r1)
// and every token t. Called concurrently on disjoint row ranges.
using MatmulKernel = void (*)(const Matrix& w, const Activations& x, float* y, int64_t ldy,
                              int64_t r0, int64_t r1);

struct KernelEntry {
  MatmulKernel fn = nullptr;  // null: no kernel for this type on this ISA
  ActivationFormat activations = ActivationFormat::kF32;
  // Row ranges handed to fn are multiples of this but the last, which ends at
  // the matrix's last row (for panel kernels a whole panel too: repacked
  // matrices have a multiple of 16 rows).
  int64_t row_granularity = 1;
  int quads_from_tokens = 0;    // fn reads Activations::quads from this many tokens on (0: never)
  bool reads_prefetch = false;  // fn's one-token decode reads Activations::prefetch (prefetch_tuner.h)
};

// Kernel tables, one function per ISA and family, each in its own file.
KernelEntry scalar_kernel(DType type);        // matmul_scalar.cpp: every type
KernelEntry float_kernel_avx2(DType type);    // matmul_float_avx2.cpp: F32, F16, BF16
KernelEntry float_kernel_avx512(DType type);  // matmul_float_avx512.cpp
KernelEntry quant_kernel_avx2(DType type);    // matmul_quant_avx2.cpp: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL,
                                              // Q4_K, Q5_K, Q6_K, IQ4_XS
KernelEntry quant_kernel_avx512(DType type);  // matmul_quant_avx512.cpp: the same
KernelEntry quant_panel_kernel_avx512(DType type);  // matmul_quant_avx512.cpp: kPanels of the integer types but IQ4_XS
KernelEntry quant_panel_kernel_avx2(DType type);    // matmul_q4_k_panel_avx2.cpp: kPanels of every integer type
KernelEntry k16_panel_kernel_avx2(DType type);      // matmul_k16_panel_avx2.cpp: Q6_K, Q3_K, Q2_K, for it
KernelEntry block32_panel_kernel_avx2(DType type);  // matmul_quant_avx2.cpp: the blocks of 32 and IQ4_XS, for it
// Q6_K rows × any tokens (matmul_q6_k_{avx2,avx512}.cpp), for quant_kernel_*.
KernelEntry q6_k_kernel_avx2();
KernelEntry q6_k_kernel_avx512();
// Q6_K kPanels × any tokens (matmul_q6_k_panel_avx512.cpp), for quant_panel_kernel_avx512.
KernelEntry q6_k_panel_kernel_avx512();
// Q2_K and Q3_K kPanels × any tokens (matmul_k16_panel_avx512.cpp), for quant_panel_kernel_avx512.
KernelEntry k16_panel_kernel_avx512(DType type);
// Q4_0 rows × 1-3 tokens (matmul_q4_0_decode_avx512.cpp), for quant_kernel_avx512.
void q4_0_decode_avx512(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1);
// Q2_K and Q3_K rows × any tokens (matmul_k16_avx512.cpp), for quant_kernel_avx512.
KernelEntry k16_kernel_avx512(DType type);
// Q4_1, Q5_0, Q5_1, IQ4_NL and IQ4_XS rows × 1-3 tokens (matmul_block32_decode_avx512.cpp), for quant_kernel_avx512.
void block32_decode_avx512(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1);
KernelEntry float_panel_kernel_avx512(DType type);  // matmul_float_avx512.cpp: F16 kPanels

// The kernel matmul() uses for w on `isa`: by layout, then by type.
KernelEntry find_kernel(Isa isa, const Matrix& w);

// The kernel for kRows matrices of `type` on `isa` (falling back to narrower ISAs).
KernelEntry find_kernel(Isa isa, DType type);

}  // namespace skiff

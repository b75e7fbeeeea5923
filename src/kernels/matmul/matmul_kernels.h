// The contract between the matmul dispatcher (matmul.cpp) and the per-ISA,
// per-type kernels. Internal to src/kernels. Must stay includable from the
// *_avx2.cpp / *_avx512.cpp files: plain declarations, no STL.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/matmul/matrix.h"

namespace skiff {

// The form in which a kernel reads the activations.
enum class ActivationFormat {
  kF32,   // the float rows themselves
  kQ8_0,  // per row, blocks of 32 int8 with a scale (for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4 weights)
  kQ8_K,  // per row, blocks of 256 int8 with a scale, 32- and 16-element sums (for K-quant, IQ4_XS weights)
};

// Bytes of one quantized activation row of `cols` elements (0 for kF32).
size_t activation_row_bytes(ActivationFormat format, int64_t cols);
// r = x - the row quantize_activation_row makes of x, dequantized: what the
// integer kernels do not see of x.
void activation_residual(ActivationFormat format, const float* x, float* r, int64_t cols);
// Quantizes one activation row for the integer kernels.
void quantize_activation_row(ActivationFormat format, const float* x, void* out, int64_t cols);

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

// The kernel tables, one per ISA, each a screen in its own file: for every
// type, the kernel for weights as stored (kRows) and for weights repacked into
// panels at load (kPanels); an empty entry where the ISA has none. Kernel
// files are named <op>_<family>_<layout>_<isa>.cpp, the families being type
// sets: float (F32, F16, BF16), block32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, MXFP4,
// IQ4_NL, IQ4_XS: units of 32 weights with one scale each), k16 (Q6_K, Q3_K,
// Q2_K: a scale per 16 weights), quant (every integer type of the table but
// Q6_K), or the types named; no layout in the name: both.
struct TypeKernels {
  DType type;
  KernelEntry (*rows)(DType);    // null: none
  KernelEntry (*panels)(DType);  // null: none, and the loader does not repack the type
};
struct KernelTable {
  const TypeKernels* types;
  int n_types;
};
KernelTable matmul_table_avx512();  // x86/avx512/matmul_table_avx512.cpp
KernelTable matmul_table_avx2();    // x86/avx2/matmul_table_avx2.cpp
// The entry of `table` for type and layout; empty where it has none.
KernelEntry table_kernel(KernelTable table, DType type, MatrixLayout layout);
// Every type, either layout (panels through matrix_row): matmul_scalar.cpp.
KernelEntry matmul_kernel_scalar(DType type);

// The kernel matmul() uses for w on `isa`: by layout, then by type.
KernelEntry find_kernel(Isa isa, const Matrix& w);

// The kernel for kRows matrices of `type` on `isa` (falling back to narrower ISAs).
KernelEntry find_kernel(Isa isa, DType type);

}  // namespace skiff

// The AVX-512 matmul kernel families, each in its own file; the table
// (matmul_table_avx512.cpp) says which serves each type and layout. A family
// of several types returns the entry of the type asked; one of a single type
// ignores it.
#pragma once
#include "kernels/matmul/matmul_kernels.h"

namespace skiff {

KernelEntry matmul_float_rows_avx512(DType type);                // matmul_float_avx512.cpp
KernelEntry matmul_float_panels_avx512(DType type);              // matmul_float_avx512.cpp
KernelEntry matmul_block32_q4_k_q5_k_rows_avx512(DType type);    // matmul_block32_q4_k_q5_k_avx512.cpp
KernelEntry matmul_block32_q4_k_panels_avx512(DType type);       // matmul_block32_q4_k_q5_k_avx512.cpp
KernelEntry matmul_q6_k_rows_avx512(DType type);                 // matmul_q6_k_rows_avx512.cpp
KernelEntry matmul_q6_k_panels_avx512(DType type);               // matmul_q6_k_panels_avx512.cpp
KernelEntry matmul_q3_k_q2_k_rows_avx512(DType type);            // matmul_q3_k_q2_k_rows_avx512.cpp
KernelEntry matmul_q3_k_q2_k_panels_avx512(DType type);          // matmul_q3_k_q2_k_panels_avx512.cpp

// Decode (1-3 tokens) of rows as stored, called by the block32 rows kernel:
// Q4_0 (decode_q4_0_rows_avx512.cpp), and Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4 and IQ4_XS
// (decode_block32_rows_avx512.cpp).
void decode_q4_0_rows_avx512(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1);
void decode_block32_rows_avx512(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1);

}  // namespace skiff

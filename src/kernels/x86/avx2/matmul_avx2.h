// The AVX2 matmul kernel families, each in its own file; the table
// (matmul_table_avx2.cpp) says which serves each type and layout. A family of
// several types returns the entry of the type asked; one of a single type
// ignores it.
#pragma once
#include "kernels/matmul/matmul_kernels.h"

namespace skiff {

KernelEntry matmul_float_rows_avx2(DType type);      // matmul_float_rows_avx2.cpp
KernelEntry matmul_quant_rows_avx2(DType type);      // matmul_quant_rows_avx2.cpp: every integer type but Q6_K
KernelEntry matmul_q6_k_rows_avx2(DType type);       // matmul_q6_k_rows_avx2.cpp
KernelEntry matmul_block32_panels_avx2(DType type);  // matmul_block32_panels_avx2.cpp
KernelEntry matmul_q4_k_panels_avx2(DType type);     // matmul_q4_k_panels_avx2.cpp
KernelEntry matmul_k16_panels_avx2(DType type);      // matmul_k16_panels_avx2.cpp

}  // namespace skiff

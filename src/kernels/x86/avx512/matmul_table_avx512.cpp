// AVX-512's matmul kernels (with VNNI): for each type, the family that serves
// weights as stored and weights repacked into panels at load. A type with no
// row kernel here falls back to AVX2's, then to the scalar kernel (matmul.cpp);
// one with no panel kernel is never repacked for AVX-512 (repack.h).
#include "kernels/x86/avx512/matmul_avx512.h"

namespace skiff {
namespace {

constexpr TypeKernels kTable[] = {
    // type          weights as stored (kRows)               repacked at load (kPanels)
    {DType::F32,     matmul_float_rows_avx512,               matmul_float_panels_avx512},
    {DType::F16,     matmul_float_rows_avx512,               matmul_float_panels_avx512},
    {DType::BF16,    matmul_float_rows_avx512,               matmul_float_panels_avx512},
    {DType::Q8_0,    matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::Q4_0,    matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::Q4_1,    matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::Q5_0,    matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::Q5_1,    matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::IQ4_NL,  matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::IQ4_XS,  matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::MXFP4,   matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::Q4_K,    matmul_block32_q4_k_q5_k_rows_avx512,   matmul_block32_q4_k_panels_avx512},
    {DType::Q5_K,    matmul_block32_q4_k_q5_k_rows_avx512,   nullptr},
    {DType::Q6_K,    matmul_q6_k_rows_avx512,                matmul_q6_k_panels_avx512},
    {DType::Q3_K,    matmul_q3_k_q2_k_rows_avx512,           matmul_q3_k_q2_k_panels_avx512},
    {DType::Q2_K,    matmul_q3_k_q2_k_rows_avx512,           matmul_q3_k_q2_k_panels_avx512},
};

}  // namespace

KernelTable matmul_table_avx512() { return {kTable, static_cast<int>(sizeof kTable / sizeof kTable[0])}; }

}  // namespace skiff

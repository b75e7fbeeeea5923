// AVX2's matmul kernels (FMA, no VNNI): for each type, the family that serves
// weights as stored and weights repacked into panels at load. A type with no
// row kernel here runs the scalar kernel (matmul.cpp); one with no panel
// kernel is never repacked for AVX2 (repack.h): the floats stream as rows.
#include "kernels/x86/avx2/matmul_avx2.h"

namespace skiff {
namespace {

constexpr TypeKernels kTable[] = {
    // type          weights as stored (kRows)   repacked at load (kPanels)
    {DType::F32,     matmul_float_rows_avx2,     nullptr},
    {DType::F16,     matmul_float_rows_avx2,     nullptr},
    {DType::BF16,    matmul_float_rows_avx2,     nullptr},
    {DType::Q8_0,    matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::Q4_0,    matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::Q4_1,    matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::Q5_0,    matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::Q5_1,    matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::IQ4_NL,  matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::IQ4_XS,  matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::MXFP4,   matmul_quant_rows_avx2,     matmul_block32_panels_avx2},
    {DType::Q4_K,    matmul_quant_rows_avx2,     matmul_q4_k_panels_avx2},
    {DType::Q5_K,    matmul_quant_rows_avx2,     nullptr},
    {DType::Q6_K,    matmul_q6_k_rows_avx2,      matmul_k16_panels_avx2},
    {DType::Q3_K,    matmul_quant_rows_avx2,     matmul_k16_panels_avx2},
    {DType::Q2_K,    matmul_quant_rows_avx2,     matmul_k16_panels_avx2},
};

}  // namespace

KernelTable matmul_table_avx2() { return {kTable, static_cast<int>(sizeof kTable / sizeof kTable[0])}; }

}  // namespace skiff

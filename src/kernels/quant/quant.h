// Conversion of rows between float and the stored element types, with the
// block layouts of ggml (ggml-common.h). Plain scalar reference code.
#pragma once
#include <cstdint>

#include "kernels/dtype.h"

namespace skiff {

// Decodes n elements (a multiple of the type's block size) from src into dst.
// Bit-exact with ggml's dequantize_row_* reference.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

// Encodes n floats into row_bytes(type, n) bytes at dst. F16, BF16, Q8_0, Q4_0,
// Q4_1, Q5_0 and Q5_1 round as ggml's quantize_row_*_ref does (bit-exact). Q2_K,
// Q3_K, Q4_K, Q5_K and Q6_K use a simpler max-abs / min-max quantizer than
// ggml's search; its worst-case error per element is half a quantization step
// (a whole one where Q3_K clamps, as Q4_0 does; see quant.cpp, quant_k_low.cpp).
// IQ4_NL takes each element's nearest table level (not ggml's scale search:
// |error| at most 14/127 of the block's max |x|). MXFP4 as ggml's
// quantize_row_mxfp4_ref (bit-exact). The read-only types (see can_quantize):
// quantize_row fails for them.
void quantize_row(DType type, const float* src, void* dst, int64_t n);

// Whether quantize_row writes `type`.
bool can_quantize(DType type);

}  // namespace skiff

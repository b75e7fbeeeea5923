// skiff quantize: a GGUF file or HF directory in, a GGUF file out, with every
// matrix converted to one type, or to the Q4_K_M / Q5_K_M / MXFP4_MOE mixes as
// llama.cpp's llama-quantize makes them (gguf/file_type.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/file_type.h"
#include "kernels/dtype.h"

namespace skiff::convert {

// What a matrix whose rows are not whole blocks of `target` gets instead, as
// llama-quantize chooses (llama_tensor_get_type): Q4_K -> Q5_0, Q5_K -> Q5_1,
// Q6_K -> Q8_0, Q2_K / Q3_K / IQ4_XS -> IQ4_NL; Q8_0 for the 32-blocks.
DType fallback_type(DType target);

// The type the tensor `name` of shape `ne` gets when `target` is asked for:
// 1-D tensors (norms, RoPE factors) and biases stay F32; a matrix whose rows
// are not whole blocks of `target` gets fallback_type(target) when its rows are
// whole blocks of that, else F16.
DType tensor_type(DType target, const std::string& name, const std::vector<int64_t>& ne);

struct QuantizeSummary {
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
  int n_tensors = 0;
  int n_fallbacks = 0;  // matrices written in another type than the file type gives them
  double seconds = 0;
};

// Converts one tensor at a time (rows in parallel), so memory stays at about
// the largest tensor. Progress, one line per tensor, goes to stderr. Throws
// Error on bad input or when `out` is the input itself.
QuantizeSummary quantize_model(const std::string& in, const std::string& out, const gguf::FileType& type);

}  // namespace skiff::convert

// Element types of weight tensors, numbered as ggml numbers them (so GGUF type
// ids map directly). Quantized types store blocks of `block_size` elements in
// `type_size` bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace skiff {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
};

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t block_size;  // elements per block
  size_t type_size;   // bytes per block
};

// Info for a ggml type id, or nullopt when skiff cannot read that type.
std::optional<DTypeInfo> dtype_info(uint32_t ggml_type);
const DTypeInfo& dtype_info(DType type);
// Parses "f32", "F16", "q8_0", ... (case-insensitive).
std::optional<DType> dtype_from_name(std::string_view name);

// Bytes of a row of n elements; n must be a multiple of the block size.
size_t row_bytes(DType type, int64_t n);

}  // namespace skiff

#include "kernels/dtype.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "base/error.h"

namespace skiff {
namespace {

// Block layouts as ggml defines them (ggml-common.h).
constexpr DTypeInfo kTypes[] = {
    {DType::F32, "F32", 1, 4},
    {DType::F16, "F16", 1, 2},
    {DType::BF16, "BF16", 1, 2},
    {DType::Q8_0, "Q8_0", 32, 2 + 32},                    // fp16 d, int8 qs[32]
    {DType::Q4_0, "Q4_0", 32, 2 + 16},                    // fp16 d, nibbles[16]
    {DType::Q4_K, "Q4_K", 256, 2 + 2 + 12 + 128},         // d, dmin, scales[12], qs[128]
    {DType::Q5_K, "Q5_K", 256, 2 + 2 + 12 + 32 + 128},    // d, dmin, scales[12], qh[32], qs[128]
    {DType::Q6_K, "Q6_K", 256, 128 + 64 + 16 + 2},        // ql, qh, scales, d
};

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t ggml_type) {
  for (const auto& t : kTypes)
    if (static_cast<uint32_t>(t.type) == ggml_type) return t;
  return std::nullopt;
}

const DTypeInfo& dtype_info(DType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t;
  fail("unknown dtype {}", static_cast<uint32_t>(type));
}

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const auto& t : kTypes)
    if (t.name == upper) return t.type;
  return std::nullopt;
}

size_t row_bytes(DType type, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  return static_cast<size_t>(n) / info.block_size * info.type_size;
}

}  // namespace skiff

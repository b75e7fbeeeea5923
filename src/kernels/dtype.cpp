#include "kernels/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
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
    {DType::Q4_1, "Q4_1", 32, 2 + 2 + 16},                // fp16 d, m, nibbles[16]
    {DType::Q5_0, "Q5_0", 32, 2 + 4 + 16},                // fp16 d, u32 qh (fifth bits), nibbles[16]
    {DType::Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16},            // fp16 d, m, u32 qh, nibbles[16]
    {DType::IQ4_NL, "IQ4_NL", 32, 2 + 16},                // fp16 d, nibbles[16] indexing a 16-value table
    {DType::Q2_K, "Q2_K", 256, 16 + 64 + 2 + 2},          // scales[16] (4-bit scale | min), qs[64], d, dmin
    {DType::Q3_K, "Q3_K", 256, 32 + 64 + 12 + 2},         // hmask[32], qs[64], scales[12], d
    {DType::IQ4_XS, "IQ4_XS", 256, 2 + 2 + 4 + 128},      // d, scales_h, scales_l[4], qs[128]
    {DType::IQ2_XXS, "IQ2_XXS", 256, 2 + 64},             // d, 8 × (grid rows, signs and scale)
    {DType::IQ2_XS, "IQ2_XS", 256, 2 + 64 + 8},           // d, u16 qs[32], scales[8]
    {DType::IQ2_S, "IQ2_S", 256, 2 + 32 + 32 + 8 + 8},    // d, qs, signs, qh, scales
    {DType::IQ3_XXS, "IQ3_XXS", 256, 2 + 64 + 32},        // d, qs[64], 8 × (signs and scale)
    {DType::IQ3_S, "IQ3_S", 256, 2 + 64 + 8 + 32 + 4},    // d, qs, qh, signs, scales
    {DType::IQ1_S, "IQ1_S", 256, 2 + 32 + 16},            // d, qs[32], u16 qh[8]
    {DType::IQ1_M, "IQ1_M", 256, 32 + 16 + 8},            // qs[32], qh[16], u16 scales[4] (d in their top nibbles)
    {DType::TQ1_0, "TQ1_0", 256, 48 + 4 + 2},             // base-3 qs[48], qh[4], d
    {DType::TQ2_0, "TQ2_0", 256, 64 + 2},                 // 2-bit qs[64], d
    {DType::MXFP4, "MXFP4", 32, 1 + 16},                  // E8M0 scale, E2M1 nibbles[16]
    {DType::NVFP4, "NVFP4", 64, 4 + 32},                  // 4 UE4M3 scales (one per 16), E2M1 nibbles[32]
    {DType::Q4_K, "Q4_K", 256, 2 + 2 + 12 + 128},         // d, dmin, scales[12], qs[128]
    {DType::Q5_K, "Q5_K", 256, 2 + 2 + 12 + 32 + 128},    // d, dmin, scales[12], qh[32], qs[128]
    {DType::Q6_K, "Q6_K", 256, 128 + 64 + 16 + 2},        // ql, qh, scales, d
};

// kTypes' index of each ggml type id (-1: none). The kernels look a matrix's
// type up per panel (row_bytes): a search of the table there was a measurable
// part of a decode step (figures: docs/notes/kernel-design-figures.md).
constexpr uint32_t kMaxTypeId = 64;
constexpr auto kIndexOfType = [] {
  std::array<int8_t, kMaxTypeId> index{};
  index.fill(-1);
  for (size_t i = 0; i < std::size(kTypes); ++i) index[static_cast<uint32_t>(kTypes[i].type)] = static_cast<int8_t>(i);
  return index;
}();

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t ggml_type) {
  if (ggml_type >= kMaxTypeId || kIndexOfType[ggml_type] < 0) return std::nullopt;
  return kTypes[kIndexOfType[ggml_type]];
}

const DTypeInfo& dtype_info(DType type) {
  const auto id = static_cast<uint32_t>(type);
  if (id >= kMaxTypeId || kIndexOfType[id] < 0) fail("unknown dtype {}", id);
  return kTypes[kIndexOfType[id]];
}

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const auto& t : kTypes)
    if (t.name == upper) return t.type;
  return std::nullopt;
}

// row_bytes (per panel in the kernels) shifts rather than divides.
static_assert(std::all_of(std::begin(kTypes), std::end(kTypes),
                          [](const DTypeInfo& t) { return std::has_single_bit(t.block_size); }),
              "every block size is a power of two");

size_t row_bytes(DType type, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  return (static_cast<size_t>(n) >> std::countr_zero(info.block_size)) * info.type_size;
}

}  // namespace skiff

// The plain read `skiff bench` measures decode's bandwidth against: n_lines
// 64-byte lines of b and of c (16-byte aligned), folded by xor so that the
// loads cannot be dropped; returns the fold. The family's baseline vector
// code where there is one (x86: SSE2), else a plain loop.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include "kernels/x86/read_fold_sse2.h"
#else
namespace skiff {

inline uint64_t xor_fold_read(const void* b, const void* c, size_t n_lines) {
  const auto* pb = static_cast<const uint64_t*>(b);
  const auto* pc = static_cast<const uint64_t*>(c);
  uint64_t fold = 0;
  for (size_t i = 0; i < 8 * n_lines; ++i) fold ^= pb[i] ^ pc[i];
  return fold;
}

}  // namespace skiff
#endif

#include "kv/prefix_hash.h"

namespace skiff {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // 2^64 / golden ratio, odd

// splitmix64's finalizer: a bijection in which every input bit flips each
// output bit with probability about 1/2.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t prefix_block_hash(uint64_t parent, std::span<const int32_t> tokens) {
  // One mixing round per token: for a fixed state, distinct tokens give
  // distinct states, and their order matters. The length goes in last so a
  // span is never confused with its own extension.
  uint64_t h = mix(parent + kGolden);
  for (int32_t token : tokens) h = mix(h + kGolden + static_cast<uint32_t>(token));
  return mix(h ^ tokens.size());
}

}  // namespace skiff

// The identity of a full KV block for prefix caching (as vLLM's automatic
// prefix caching): a 64-bit hash of the previous block's hash and this block's
// token ids. Chained this way, a block's hash stands for every token from the
// start of the sequence to the block's end, which is what its keys and values
// depend on.
#pragma once
#include <cstdint>
#include <span>

namespace skiff {

// The parent hash of a sequence's first block.
inline constexpr uint64_t kPrefixHashSeed = 0x736b69666650484bULL;

uint64_t prefix_block_hash(uint64_t parent, std::span<const int32_t> tokens);

}  // namespace skiff

// The int8 form of cached K/V rows, shared by the cache that writes them and
// the attention kernel that reads them: a row of head_dim values is split into
// groups of kv_q8_group(head_dim) values, each stored as {fp16 scale d, int8
// q[group]} with value = d·q — ggml's Q8_0 block when the group is 32. Heads
// whose size is not a multiple of 32 use one group per row.
//
// Keys are stored transposed within their block, dimension-major ("keys in
// lanes"), so that the attention kernel scores a vector of keys with one
// multiply-add per query row and dimension and no horizontal sums; values stay
// rows. In a block of B keys, key j's element d is:
// - F32, F16: element d·B + j of the block;
// - Q8_0: group g = d / G (G = kv_q8_group(head_dim)) takes B·(2 + G) bytes
//   from byte g·B·(2 + G): first the B keys' fp16 scales, then the group's G
//   dimensions as rows of B int8 values, so key j's value of dimension
//   g·G + i is at byte g·B·(2 + G) + 2·B + i·B + j (its scale at 2·j).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.h"

namespace skiff {

// Not inline: the per-ISA attention kernels call these, and an inline copy
// compiled for AVX-512 could be the one the linker keeps for every caller.
int kv_q8_group(int head_dim);
size_t kv_q8_row_bytes(int head_dim);

// d = max|x| / 127 per group and q = x / d rounded to nearest, ties to even
// (ggml's Q8_0 reference rounds ties away from zero: equally close).
void quantize_kv_q8_row(const float* x, int head_dim, uint8_t* dst);

// Bytes of one row of head_dim values of the element type.
size_t kv_row_bytes(KvElement element, int head_dim);
// A row of head_dim values in the element type (a value row as stored; keys
// are scattered from it by store_key).
void encode_kv_row(KvElement element, const float* x, int head_dim, uint8_t* dst);

// Stores key `slot` of a block of block_size keys in the layout above, rounded
// as its row would be (encode_kv_row).
void store_key(KvElement element, const float* key, int head_dim, int block_size, int slot, uint8_t* block);

}  // namespace skiff

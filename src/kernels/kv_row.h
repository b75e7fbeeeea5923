// The int8 form of cached K/V rows, shared by the cache that writes them and
// the attention kernel that reads them: a row of head_dim values is split into
// groups of kv_q8_group(head_dim) values, each stored as {fp16 scale d, int8
// q[group]} with value = d·q — ggml's Q8_0 block when the group is 32. Heads
// whose size is not a multiple of 32 use one group per row.
#pragma once
#include <cstddef>
#include <cstdint>

namespace skiff {

// Not inline: the per-ISA attention kernels call these, and an inline copy
// compiled for AVX-512 could be the one the linker keeps for every caller.
int kv_q8_group(int head_dim);
size_t kv_q8_row_bytes(int head_dim);

// d = max|x| / 127 per group and q = x / d rounded to nearest, ties to even
// (ggml's Q8_0 reference rounds ties away from zero: equally close).
void quantize_kv_q8_row(const float* x, int head_dim, uint8_t* dst);

}  // namespace skiff

// Flash attention: queries attend to cached keys/values tile by tile with an
// online softmax (running max and sum per query row), so no score matrix
// larger than one tile is ever held. Causal: a query at position p sees keys
// at positions [0, p].
#pragma once
#include <cstdint>

namespace skiff {

// The queries of one sequence that share one KV head: n_q consecutive tokens
// at positions first_pos, first_pos+1, ..., each with `group` query heads.
struct AttentionQueries {
  const float* q;      // q[t * q_stride + h * head_dim + d], t < n_q, h < group
  int64_t q_stride;
  float* out;          // written in the same layout as q
  int64_t out_stride;
  int n_q;
  int group;
  int first_pos;
};

// Keys and values of one KV head at positions [0, n_ctx): k + pos * stride.
struct KvRun {
  const float* k;
  const float* v;
  int64_t stride;
  int n_ctx;
};

// out = softmax(q·kᵀ · scale, causal) · v for every query row.
void flash_attention(const AttentionQueries& queries, const KvRun& kv, int head_dim, float scale);

// The most query rows (tokens × group heads) one call should take: the tile
// the kernel keeps in registers and L1.
constexpr int kAttentionMaxRows = 32;

}  // namespace skiff

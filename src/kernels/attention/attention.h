// Flash attention over a paged KV cache: queries attend to keys/values read
// block by block through a block table, with an online softmax (running max
// and sum per query row), so no score matrix larger than one tile is held and
// memory does not grow with the square of the context. Causal: a query at
// position p sees keys at positions [0, p]. Grouped-query attention: the query
// heads that share a KV head are processed together, reading K/V once.
#pragma once
#include <cstddef>
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
  int window = 0;      // > 0: a query at position p sees keys (p - window, p] only (sliding window)
  float softcap = 0;   // > 0: scaled scores s become softcap · tanh(s / softcap) (Gemma 2)
  // Attention sinks (gpt-oss): a logit per query head [group], null for none,
  // that joins each softmax's denominator as exp(sink) and has no value: it
  // only takes probability away from the keys. Partials leave it out; the
  // merge counts it once.
  const float* sinks = nullptr;
};

// Element type of cached K/V rows.
enum class KvElement {
  kF32,
  kF16,
  kQ8_0,  // int8 groups with fp16 scales, see kv_row.h
};

// One KV head's keys and values, block by block: position p lives in block
// blocks[p / block_size], row p % block_size, where block b's keys start at
// k_base + b * block_stride (block_size rows of head_dim elements) and its
// values at v_base + b * block_stride.
struct KvBlocks {
  const int* blocks;
  const uint8_t* k_base;
  const uint8_t* v_base;
  size_t block_stride;
  int block_size;
  int n_ctx;  // positions [0, n_ctx) are valid
  KvElement element;
};

// out = softmax(q·kᵀ · scale, causal) · v for every query row.
void flash_attention(const AttentionQueries& queries, const KvBlocks& kv, int head_dim, float scale);

// Split-KV (flash decoding): the unnormalized result of attending to positions
// [pos_begin, pos_end) only, to be merged with the other ranges' results.
struct AttentionPartial {
  float* acc;  // [rows][head_dim]: Σ exp(s - max) · v
  float* max;  // [rows]: running max of the scores (-inf when no key was visible)
  float* sum;  // [rows]: Σ exp(s - max)
};
void flash_attention_partial(const AttentionQueries& queries, const KvBlocks& kv, int pos_begin,
                             int pos_end, int head_dim, float scale, const AttentionPartial& out);
// Merges n partials of the same rows exactly, with the sinks when the queries
// have them, and writes the normalized output.
void merge_attention_partials(const AttentionQueries& queries, const AttentionPartial* parts,
                              int n, int head_dim);

// The most query rows (tokens × group heads) one call may take, and the
// largest head dimension: the tile the kernel keeps in registers and L1.
constexpr int kAttentionMaxRows = 32;
constexpr int kAttentionMaxHeadDim = 256;

}  // namespace skiff

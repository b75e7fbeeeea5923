// The flash-attention kernel body, written as plain loops that the compiler
// vectorizes. Included by flash_attention_{scalar,avx2,avx512}.cpp inside a
// per-ISA namespace, so each copy is compiled with its own flags and the
// copies cannot be merged by the linker. No STL here (see CMakeLists.txt).
// Expects `skiff::AttentionQueries`, `KvRun` and `kernel_scratch` declared.

#include "kernels/vec_math.h"

namespace flash {

constexpr int kTile = 32;       // keys per tile: K and V tiles of 128-dim heads fit L1
constexpr int kMaxHeadDim = 256;

struct RowState {
  float max;
  float sum;
};

// Scores of `rows` query rows against one tile of n keys (kt is the tile's
// keys transposed, [head_dim][kTile]); masks keys past each row's position.
inline void tile_scores(const skiff::AttentionQueries& qs, int rows, const float* kt, int n,
                        int tile_start, int head_dim, float scale, float* s) {
  for (int r = 0; r < rows; ++r) {
    const int t = r / qs.group, h = r % qs.group;
    const float* q = qs.q + t * qs.q_stride + h * head_dim;
    float* sr = s + r * kTile;
#pragma omp simd
    for (int j = 0; j < kTile; ++j) sr[j] = 0.0f;
    for (int d = 0; d < head_dim; ++d) {
      const float qd = q[d] * scale;
      const float* ktd = kt + d * kTile;
#pragma omp simd
      for (int j = 0; j < kTile; ++j) sr[j] += qd * ktd[j];
    }
    const int visible = qs.first_pos + t - tile_start + 1;  // keys this row may see
    for (int j = visible < 0 ? 0 : visible; j < kTile; ++j) sr[j] = -__builtin_inff();
    for (int j = n; j < kTile; ++j) sr[j] = -__builtin_inff();
  }
}

// Online-softmax update of one row with its tile of scores (turned into
// probabilities in place), then acc = acc·correction + p·V.
inline void tile_update(float* sr, const float* v, int64_t v_stride, int n, int head_dim,
                        RowState& st, float* acc) {
  float tile_max = -__builtin_inff();
  for (int j = 0; j < n; ++j) tile_max = sr[j] > tile_max ? sr[j] : tile_max;
  if (tile_max == -__builtin_inff()) return;  // every key of the tile is masked
  const float new_max = tile_max > st.max ? tile_max : st.max;
  const float correction = fast_exp(st.max - new_max);
  float tile_sum = 0.0f;
#pragma omp simd reduction(+ : tile_sum)
  for (int j = 0; j < kTile; ++j) {
    sr[j] = fast_exp(sr[j] - new_max);
    tile_sum += sr[j];
  }
  st.sum = st.sum * correction + tile_sum;
  st.max = new_max;
#pragma omp simd
  for (int d = 0; d < head_dim; ++d) acc[d] *= correction;
  for (int j = 0; j < n; ++j) {
    const float p = sr[j];
    const float* vj = v + j * v_stride;
#pragma omp simd
    for (int d = 0; d < head_dim; ++d) acc[d] += p * vj[d];
  }
}

inline void attention(const skiff::AttentionQueries& qs, const skiff::KvRun& kv, int head_dim,
                      float scale) {
  const int rows = qs.n_q * qs.group;
  // Scratch: transposed key tile, scores, accumulators.
  float* kt = static_cast<float*>(skiff::kernel_scratch(
      sizeof(float) * (kMaxHeadDim * kTile + rows * kTile + rows * head_dim)));
  float* s = kt + kMaxHeadDim * kTile;
  float* acc = s + rows * kTile;
  for (int i = 0; i < rows * head_dim; ++i) acc[i] = 0.0f;
  RowState state[skiff::kAttentionMaxRows];
  for (int r = 0; r < rows; ++r) state[r] = {-__builtin_inff(), 0.0f};

  const int last_pos = qs.first_pos + qs.n_q - 1;
  const int n_ctx = kv.n_ctx < last_pos + 1 ? kv.n_ctx : last_pos + 1;
  for (int start = 0; start < n_ctx; start += kTile) {
    const int n = n_ctx - start < kTile ? n_ctx - start : kTile;
    for (int j = 0; j < n; ++j) {
      const float* kj = kv.k + (start + j) * kv.stride;
      for (int d = 0; d < head_dim; ++d) kt[d * kTile + j] = kj[d];
    }
    for (int j = n; j < kTile; ++j)
      for (int d = 0; d < head_dim; ++d) kt[d * kTile + j] = 0.0f;
    tile_scores(qs, rows, kt, n, start, head_dim, scale, s);
    for (int r = 0; r < rows; ++r)
      tile_update(s + r * kTile, kv.v + start * kv.stride, kv.stride, n, head_dim, state[r],
                  acc + r * head_dim);
  }
  for (int r = 0; r < rows; ++r) {
    const int t = r / qs.group, h = r % qs.group;
    float* out = qs.out + t * qs.out_stride + h * head_dim;
    const float inv = state[r].sum > 0.0f ? 1.0f / state[r].sum : 0.0f;
#pragma omp simd
    for (int d = 0; d < head_dim; ++d) out[d] = acc[r * head_dim + d] * inv;
  }
}

}  // namespace flash

// The loops of the AVX2 panel kernels over rows and tokens, shared by
// matmul_q4_k_panels_avx2.cpp and matmul_k16_panels_avx2.cpp. Included inside
// their anonymous namespace after quant_activation_layout.h and repack.h, so
// each copy stays local to its file.
//
// A Kernel is a class with
//   Tokens                               what it reads of all the call's tokens
//                                        (RowTokens for panel_matmul)
//   template <int T, bool kPrefetch>
//   static void run(const uint8_t* panel, int64_t blocks, const Tokens&, int t0, __m256 facc[kHalves][T]);
// adding the panel's 16 rows (two vectors of 8) times tokens t0..t0+T-1 over
// all super-blocks to facc. Each token goes through the same operations in the
// same order whatever T, so its outputs do not depend on its batch.

// The call's tokens as quantized rows, each read through act_row.
struct RowTokens {
  const Activations* x;
  ActLayout l;
};

constexpr int kHalves = 2;      // a 16-row panel is two vectors of 8 rows (a dword lane each)
constexpr int kTileTokens = 3;  // tokens sharing each unpacked unit (registers: T int16 and int32 sums per half)

template <int T>
[[gnu::always_inline]] inline void zero_sums(__m256i sums[kHalves][T]) {
#pragma GCC unroll 8
  for (int h = 0; h < kHalves; ++h)
    for (int t = 0; t < T; ++t) sums[h][t] = _mm256_setzero_si256();
}

// Adds each token's products with one group of unpacked levels (both halves):
// lo against the token's 4 bytes at x[t], hi against those at x[t] + 16, into
// acc_lo and acc_hi (which may be the same sums). The int16 sums chain with
// saturating adds, which never saturate in the callers, because GCC cannot
// reassociate them: with plain adds it hoisted every multiply of a unit ahead
// of the sums and spilled them, at a fraction of the speed (figures:
// docs/notes/kernel-design-figures.md).
template <int T>
[[gnu::always_inline]] inline void add_group_products(const __m256i lo[kHalves], const __m256i hi[kHalves],
                                                      const int8_t* const x[T], __m256i acc_lo[kHalves][T],
                                                      __m256i acc_hi[kHalves][T]) {
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) {
    const __m256i x_lo = _mm256_set1_epi32(load_i32(x[t])), x_hi = _mm256_set1_epi32(load_i32(x[t] + 16));
    for (int h = 0; h < kHalves; ++h) {
      acc_lo[h][t] = _mm256_adds_epi16(acc_lo[h][t], _mm256_maddubs_epi16(lo[h], x_lo));
      acc_hi[h][t] = _mm256_adds_epi16(acc_hi[h][t], _mm256_maddubs_epi16(hi[h], x_hi));
    }
  }
}

// facc += super-block k's exact int32 sums times the rows' d and each token's dx.
template <int T>
[[gnu::always_inline]] inline void add_super_block(const __m256i isum[kHalves][T], const __m256 d[kHalves],
                                                   const ActRow act[T], int64_t k, __m256 facc[kHalves][T]) {
#pragma GCC unroll 8
  for (int h = 0; h < kHalves; ++h)
    for (int t = 0; t < T; ++t)
      facc[h][t] =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[h][t]), _mm256_mul_ps(d[h], _mm256_set1_ps(act[t].d[k])), facc[h][t]);
}

// Tokens [t0, t0 + T) times the panel at rows [r, r + 16).
template <class Kernel, int T, bool kPrefetch>
void panel_tile(const uint8_t* panel, int64_t blocks, const typename Kernel::Tokens& tokens, int t0, float* y,
                int64_t ldy, int64_t r) {
  __m256 facc[kHalves][T];
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < kHalves; ++h) facc[h][t] = _mm256_setzero_ps();
  Kernel::template run<T, kPrefetch>(panel, blocks, tokens, t0, facc);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < kHalves; ++h) _mm256_storeu_ps(y + (t0 + t) * ldy + r + 8 * h, facc[h][t]);
}

template <class Kernel, bool kPrefetch>
void panel_tile_any(const uint8_t* panel, int64_t blocks, const typename Kernel::Tokens& tokens, int t0, int n,
                    float* y, int64_t ldy, int64_t r) {
  switch (n) {
    case 1: return panel_tile<Kernel, 1, kPrefetch>(panel, blocks, tokens, t0, y, ldy, r);
    case 2: return panel_tile<Kernel, 2, kPrefetch>(panel, blocks, tokens, t0, y, ldy, r);
    default: return panel_tile<Kernel, 3, kPrefetch>(panel, blocks, tokens, t0, y, ldy, r);
  }
  static_assert(kTileTokens == 3, "the switch covers 1..kTileTokens");
}

// A MatmulKernel over panels: each panel against every token, kTileTokens at a
// time; the first pass streams the panel from memory (prefetching), later
// ones find it in cache.
template <class Kernel>
void panel_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const ActLayout l = act_layout(ActivationFormat::kQ8_K, w.cols);
  const RowTokens tokens{&x, l};
  const int64_t blocks = w.cols / 256;
  for (int64_t r = r0; r < r1; r += kPanelRowCount) {
    const uint8_t* panel = panel_start(w, r / kPanelRowCount);
    const int first = x.n_tokens < kTileTokens ? x.n_tokens : kTileTokens;
    panel_tile_any<Kernel, true>(panel, blocks, tokens, 0, first, y, ldy, r);
    for (int t0 = first; t0 < x.n_tokens; t0 += kTileTokens) {
      const int n = x.n_tokens - t0 < kTileTokens ? x.n_tokens - t0 : kTileTokens;
      panel_tile_any<Kernel, false>(panel, blocks, tokens, t0, n, y, ldy, r);
    }
  }
}

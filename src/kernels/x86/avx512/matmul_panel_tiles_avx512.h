// The loops of the AVX-512 panel kernels over rows and tokens, shared by
// matmul_block32_q4_k_q5_k_avx512.cpp (units of 32 with one scale),
// matmul_q6_k_panels_avx512.cpp and matmul_q3_k_q2_k_panels_avx512.cpp (a
// scale per 16). Included inside their
// anonymous namespace after quant_activation_layout.h and repack.h, so each
// copy stays local to its file.
//
// A Tile is a class with
//   template <int R, int T, class Panel, class Act>
//   static void run(const Panel panels[R], int64_t units, const Act& a, __m512 facc[R][T]);
// adding panel p · token t over all units (32 columns each) to facc[p][t]
// (16 rows in the lanes): R panels of 16 rows against T tokens in registers.

constexpr int kPanelRows = kPanelRowCount;  // the load-time panels are the kernels' panels
constexpr int kTileTokens = kQuadTokens;

// Up to this many tokens, rows go one panel at a time against all the tokens
// in one pass, so each weight is read and unpacked once: a speculative
// verification of k + 1 tokens costs about a decode step, where passes of 4 tokens over panel
// pairs cost several times one (figures: docs/notes/kernel-design-figures.md).
// More tokens go in quads over panel pairs.
constexpr int kPassTokens = 4 * kTileTokens;

// Where a tile reads its tokens' activations when they are interleaved
// (QuadUnit): one pointer reaches all of a tile's, token t in quad t / 4.
struct QuadAct {
  const QuadUnit* units;
  int64_t quad_units;  // units per quad (the matrix's columns / 32)
  [[gnu::always_inline]] const QuadUnit& at(int64_t u, int t) const { return units[t / kTileTokens * quad_units + u]; }
  [[gnu::always_inline]] int32_t q(int64_t u, int g, int t) const { return at(u, t).q[g][t % kTileTokens]; }
  [[gnu::always_inline]] float d(int64_t u, int t) const { return at(u, t).d[t % kTileTokens]; }
  [[gnu::always_inline]] int32_t sum(int64_t u, int t) const { return at(u, t).sum[0][t % kTileTokens]; }
  [[gnu::always_inline]] int32_t sum16(int64_t u, int h, int t) const { return at(u, t).sum[h][t % kTileTokens]; }
  [[gnu::always_inline]] float dsum(int64_t u, int t) const { return at(u, t).dsum[t % kTileTokens]; }
};

// iacc[p][t] += columns 4g..4g+3 of unit u of panel p times token t0 + t's,
// for the kGroups groups from g0: one vpdpbusd per panel and token, against
// the token's 4 bytes broadcast.
template <int kGroups, int R, int T, class Panel, class Act>
[[gnu::always_inline]] inline void group_dots(const Panel panels[R], int64_t u, int g0, const Act& a, int t0,
                                              __m512i iacc[R][T]) {
#pragma GCC unroll 8
  for (int g = g0; g < g0 + kGroups; ++g) {
    __m512i wv[R];
#pragma GCC unroll 4
    for (int p = 0; p < R; ++p) wv[p] = panels[p].w(u, g);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const __m512i xb = _mm512_set1_epi32(a.q(u, g, t0 + t));
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) iacc[p][t] = _mm512_dpbusd_epi32(iacc[p][t], wv[p], xb);
    }
  }
}

// One token's sums over groups 0..3 (half 0) and 4..7 (half 1) of unit u of a
// panel, from init[h], in four chains of two vpdpbusd, the halves' first
// products issued side by side: with one panel and one token nothing else
// overlaps a chain, and one of eight made decode latency-bound (on Zen 4 Q3_K
// ran slower than AVX2's kernel on the same panels; figures:
// docs/notes/kernel-design-figures.md). The same exact int32 sums as
// group_dots gives.
//
// A panel of plain nibbles (Panel::kHighNibblesInPlace) gives half 1's
// weights as the byte's high nibble in place, 16 times the level, which spares
// a shift per group; half 1's products are divided by 16 at the end, exactly
// (each is a multiple of 16), before init[1] is added.
template <class Panel>
concept HighNibblesInPlace = Panel::kHighNibblesInPlace;

template <class Panel, class Act>
[[gnu::always_inline]] inline void one_token_halves(const Panel& panel, int64_t u, const Act& a,
                                                    const __m512i init[2], __m512i half[2]) {
  constexpr bool kInPlace = HighNibblesInPlace<Panel>;
  __m512i chain[4] = {init[0], _mm512_setzero_si512(), kInPlace ? _mm512_setzero_si512() : init[1],
                      _mm512_setzero_si512()};
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int g = 4 * h + k;
      __m512i w;
      if constexpr (kInPlace) w = h ? panel.high_nibbles_in_place(u, k) : panel.w(u, g);
      else w = panel.w(u, g);
      chain[2 * h + k % 2] = _mm512_dpbusd_epi32(chain[2 * h + k % 2], w, _mm512_set1_epi32(a.q(u, g, 0)));
    }
  half[0] = _mm512_add_epi32(chain[0], chain[1]);
  half[1] = _mm512_add_epi32(chain[2], chain[3]);
  if constexpr (kInPlace) half[1] = _mm512_add_epi32(init[1], _mm512_srai_epi32(half[1], 4));
}

// Tiles take their tokens in blocks of at most this many: a block's int32 sums
// and every token's float sums fit the 32 registers up to 16 tokens, and past 8
// a second block unpacks the unit's weights again (cheaper than another pass).
constexpr int kBlockTokens = 8;
template <int T, int T0>
constexpr int kBlockSize = T - T0 < kBlockTokens ? T - T0 : kBlockTokens;

// Runs Tile for T tokens from t0 and stores rows [r, r + rows).
template <class Tile, int R, int T, class Panel, class Act>
void tile_store(const Panel panels[R], int64_t units, const Act& act, int t0, float* y, int64_t ldy, int64_t r,
                int64_t rows) {
  __m512 facc[R][T];
  for (int p = 0; p < R; ++p)
    for (int t = 0; t < T; ++t) facc[p][t] = _mm512_setzero_ps();
  Tile::template run<R, T, Panel, Act>(panels, units, act, facc);
  for (int p = 0; p < R; ++p) {
    const int64_t left = rows - kPanelRows * p;
    const auto mask = static_cast<__mmask16>(left >= kPanelRows ? 0xffff : (1u << left) - 1);
    for (int t = 0; t < T; ++t)
      _mm512_mask_storeu_ps(y + (t0 + t) * ldy + r + kPanelRows * p, mask, facc[p][t]);
  }
}

// quads: the activations as QuadUnit (quant_activation_layout.h), kTileTokens tokens per quad.
template <class Tile, int R, class Panel>
void tokens_tiles(const Panel panels[R], int64_t units, const QuadUnit* quads, int n_tokens, float* y,
                  int64_t ldy, int64_t r, int64_t rows) {
  for (int t0 = 0; t0 < n_tokens; t0 += kTileTokens) {
    const QuadAct act{quads + t0 / kTileTokens * units, units};
    switch (n_tokens - t0 < kTileTokens ? n_tokens - t0 : kTileTokens) {
      case 1: tile_store<Tile, R, 1, Panel, QuadAct>(panels, units, act, t0, y, ldy, r, rows); break;
      case 2: tile_store<Tile, R, 2, Panel, QuadAct>(panels, units, act, t0, y, ldy, r, rows); break;
      case 3: tile_store<Tile, R, 3, Panel, QuadAct>(panels, units, act, t0, y, ldy, r, rows); break;
      default: tile_store<Tile, R, kTileTokens, Panel, QuadAct>(panels, units, act, t0, y, ldy, r, rows); break;
    }
  }
  static_assert(kTileTokens == 4, "the switch covers 1..kTileTokens");
}

// One panel against all of 2..kMaxPass tokens.
template <class Tile, int T, class Panel>
void one_pass_of(const Panel& panel, int64_t units, const QuadUnit* quads, float* y, int64_t ldy, int64_t r,
                 int64_t rows) {
  const Panel panels[1] = {panel};
  tile_store<Tile, 1, T, Panel, QuadAct>(panels, units, QuadAct{quads, units}, 0, y, ldy, r, rows);
}
template <class Tile, int kMaxPass, class Panel, int T = 2>
void one_pass(const Panel& panel, int64_t units, const QuadUnit* quads, int n_tokens, float* y, int64_t ldy,
              int64_t r, int64_t rows) {
  if constexpr (T < kMaxPass) {
    if (n_tokens > T) return one_pass<Tile, kMaxPass, Panel, T + 1>(panel, units, quads, n_tokens, y, ldy, r, rows);
  }
  one_pass_of<Tile, T>(panel, units, quads, y, ldy, r, rows);
}

// Rows [r0, r1) for 2+ tokens: up to kMaxPass one panel at a time, more
// panel pairs at a time; make_panel(r, k) gives the panel of rows r.. as the
// k-th (0, 1) of its pair.
template <class Tile, int kMaxPass = kPassTokens, class MakePanel>
void panel_rows(const MakePanel& make_panel, const Activations& x, int64_t units, float* y, int64_t ldy,
                int64_t r0, int64_t r1) {
  using Panel = decltype(make_panel(r0, 0));
  const auto* quads = static_cast<const QuadUnit*>(x.quads);
  const int64_t step = x.n_tokens <= kMaxPass ? kPanelRows : 2 * kPanelRows;
  for (int64_t r = r0; r < r1; r += step) {
    const int64_t rows = r1 - r < step ? r1 - r : step;
    if (x.n_tokens <= kMaxPass) {
      one_pass<Tile, kMaxPass>(make_panel(r, 0), units, quads, x.n_tokens, y, ldy, r, rows);
    } else if (rows > kPanelRows) {
      const Panel panels[2] = {make_panel(r, 0), make_panel(r + kPanelRows, 1)};
      tokens_tiles<Tile, 2>(panels, units, quads, x.n_tokens, y, ldy, r, rows);
    } else {
      const Panel panels[1] = {make_panel(r, 0)};
      tokens_tiles<Tile, 1>(panels, units, quads, x.n_tokens, y, ldy, r, rows);
    }
  }
}

// Rows [r0, r1) (whole panels) for one token read as act: one panel at a
// time, so decode reads one memory stream (two measured slower).
template <class Tile, class MakePanel, class Act>
void panel_decode(const MakePanel& make_panel, const Act& act, int64_t units, float* y, int64_t ldy, int64_t r0,
                  int64_t r1) {
  using Panel = decltype(make_panel(r0, 0));
  for (int64_t r = r0; r < r1; r += kPanelRows) {
    const Panel panels[1] = {make_panel(r, 0)};
    const int64_t rows = r1 - r < kPanelRows ? r1 - r : kPanelRows;  // no std::min: see CMakeLists.txt
    tile_store<Tile, 1, 1, Panel, Act>(panels, units, act, 0, y, ldy, r, rows);
  }
}

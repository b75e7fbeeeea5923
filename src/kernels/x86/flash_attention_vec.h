// The vector operations of the keys-in-lanes attention kernel
// (flash_attention_lanes.h), one struct per ISA: AVX-512 (16 lanes, masks in
// k registers) and AVX2 with FMA and F16C (8 lanes, masks as vectors). Included
// by flash_attention_impl.h inside its per-ISA namespace; defines
// SKIFF_LANES_KERNEL where one applies. No STL here (see CMakeLists.txt).
// The emulated AVX-512 test build (tests/avx512_emulation) compiles the
// AVX-512 file without __AVX512F__, so there it runs the AVX2 struct.
#ifndef SKIFF_LANES_INLINE
#define SKIFF_LANES_INLINE __attribute__((always_inline)) inline
#endif

#if defined(__AVX512F__)
#define SKIFF_LANES_KERNEL 1

struct Vec {
  using T = __m512;
  using Mask = __mmask16;  // one bit per lane
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  // Accumulators a tile keeps in registers (Q·K: rows × chains; P·V: rows ×
  // chunks of a block × sets), leaving the rest for loaded keys, values and
  // broadcasts.
  static constexpr int kAccumulators = 16;
  static constexpr bool kMaskedLoads = true;  // the `n` loads below exist

  static SKIFF_LANES_INLINE T zero() { return _mm512_setzero_ps(); }
  static SKIFF_LANES_INLINE T set1(float x) { return _mm512_set1_ps(x); }
  static SKIFF_LANES_INLINE T first_lane(float x) { return _mm512_zextps128_ps512(_mm_set_ss(x)); }
  static SKIFF_LANES_INLINE T add(T a, T b) { return _mm512_add_ps(a, b); }
  static SKIFF_LANES_INLINE T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static SKIFF_LANES_INLINE T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static SKIFF_LANES_INLINE T div(T a, T b) { return _mm512_div_ps(a, b); }
  static SKIFF_LANES_INLINE T max(T a, T b) { return _mm512_max_ps(a, b); }
  static SKIFF_LANES_INLINE T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static SKIFF_LANES_INLINE T fnmadd(T a, T b, T c) { return _mm512_fnmadd_ps(a, b, c); }
  static SKIFF_LANES_INLINE T abs(T x) { return _mm512_abs_ps(x); }
  static SKIFF_LANES_INLINE T sign_bits(T x) {
    return _mm512_and_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(0x80000000u))));
  }
  static SKIFF_LANES_INLINE T or_bits(T a, T b) { return _mm512_or_ps(a, b); }
  static SKIFF_LANES_INLINE T round(T x) {
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // p · 2^n for integral n in [-126, 127].
  static SKIFF_LANES_INLINE T scale_pow2(T p, T n) { return _mm512_scalef_ps(p, n); }
  static SKIFF_LANES_INLINE T loadu(const float* p) { return _mm512_loadu_ps(p); }
  static SKIFF_LANES_INLINE void storeu(float* p, T x) { _mm512_storeu_ps(p, x); }
  static SKIFF_LANES_INLINE void store(float* p, T x) { _mm512_store_ps(p, x); }
  static SKIFF_LANES_INLINE float lane0(T x) { return _mm512_cvtss_f32(x); }
  static SKIFF_LANES_INLINE float sum_lanes(T x) { return _mm512_reduce_add_ps(x); }

  // The max of the lanes, in every lane.
  static SKIFF_LANES_INLINE T max_lanes(T x) {
    x = _mm512_max_ps(x, _mm512_shuffle_f32x4(x, x, 0x4E));  // swap 256-bit halves
    x = _mm512_max_ps(x, _mm512_shuffle_f32x4(x, x, 0xB1));  // swap 128-bit lanes in pairs
    x = _mm512_max_ps(x, _mm512_permute_ps(x, 0x4E));        // swap float pairs in each lane
    return _mm512_max_ps(x, _mm512_permute_ps(x, 0xB1));     // swap neighbours
  }

  // Lanes [hidden, visible) set.
  static SKIFF_LANES_INLINE Mask lanes(int hidden, int visible) {
    return static_cast<Mask>(((1u << visible) - 1) & ~((1u << hidden) - 1));
  }
  static SKIFF_LANES_INLINE T select(Mask m, T if_set, T otherwise) { return _mm512_mask_mov_ps(otherwise, m, if_set); }
  static SKIFF_LANES_INLINE T zero_unless(Mask m, T x) { return _mm512_maskz_mov_ps(m, x); }
  static SKIFF_LANES_INLINE bool any_greater(T a, T b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) != 0; }

  // A vector from kLanes consecutive values; the `n` forms read only the
  // first n (1 <= n <= kLanes) and zero the other lanes.
  static SKIFF_LANES_INLINE T halves(const unsigned short* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static SKIFF_LANES_INLINE T halves(const unsigned short* p, int n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lanes(0, n), p));
  }
  static SKIFF_LANES_INLINE T int8s(const signed char* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static SKIFF_LANES_INLINE T int8s(const signed char* p, int n) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lanes(0, n), p)));
  }
  static SKIFF_LANES_INLINE T floats(const float* p, int n) { return _mm512_maskz_loadu_ps(lanes(0, n), p); }
};

#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SKIFF_LANES_KERNEL 1

struct Vec {
  using T = __m256;
  using Mask = __m256;  // all ones in a set lane
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  static constexpr int kAccumulators = 12;
  // No masked 16- or 8-bit loads: the kernel copies a partial tile's keys to
  // zero-padded floats and loads whole vectors only.
  static constexpr bool kMaskedLoads = false;

  static SKIFF_LANES_INLINE T zero() { return _mm256_setzero_ps(); }
  static SKIFF_LANES_INLINE T set1(float x) { return _mm256_set1_ps(x); }
  static SKIFF_LANES_INLINE T first_lane(float x) { return _mm256_setr_ps(x, 0, 0, 0, 0, 0, 0, 0); }
  static SKIFF_LANES_INLINE T add(T a, T b) { return _mm256_add_ps(a, b); }
  static SKIFF_LANES_INLINE T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static SKIFF_LANES_INLINE T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static SKIFF_LANES_INLINE T div(T a, T b) { return _mm256_div_ps(a, b); }
  static SKIFF_LANES_INLINE T max(T a, T b) { return _mm256_max_ps(a, b); }
  static SKIFF_LANES_INLINE T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static SKIFF_LANES_INLINE T fnmadd(T a, T b, T c) { return _mm256_fnmadd_ps(a, b, c); }
  static SKIFF_LANES_INLINE T abs(T x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
  static SKIFF_LANES_INLINE T sign_bits(T x) { return _mm256_and_ps(x, _mm256_set1_ps(-0.0f)); }
  static SKIFF_LANES_INLINE T or_bits(T a, T b) { return _mm256_or_ps(a, b); }
  static SKIFF_LANES_INLINE T round(T x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // p · 2^n for integral n in [-126, 127]: 2^n built in the exponent bits.
  static SKIFF_LANES_INLINE T scale_pow2(T p, T n) {
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  }
  static SKIFF_LANES_INLINE T loadu(const float* p) { return _mm256_loadu_ps(p); }
  static SKIFF_LANES_INLINE void storeu(float* p, T x) { _mm256_storeu_ps(p, x); }
  static SKIFF_LANES_INLINE void store(float* p, T x) { _mm256_store_ps(p, x); }
  static SKIFF_LANES_INLINE float lane0(T x) { return _mm256_cvtss_f32(x); }
  static SKIFF_LANES_INLINE float sum_lanes(T x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }

  static SKIFF_LANES_INLINE T max_lanes(T x) {
    x = _mm256_max_ps(x, _mm256_permute2f128_ps(x, x, 0x01));  // swap 128-bit halves
    x = _mm256_max_ps(x, _mm256_permute_ps(x, 0x4E));           // swap float pairs in each half
    return _mm256_max_ps(x, _mm256_permute_ps(x, 0xB1));        // swap neighbours
  }

  static SKIFF_LANES_INLINE Mask lanes(int hidden, int visible) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i below_visible = _mm256_cmpgt_epi32(_mm256_set1_epi32(visible), lane);
    const __m256i below_hidden = _mm256_cmpgt_epi32(_mm256_set1_epi32(hidden), lane);
    return _mm256_castsi256_ps(_mm256_andnot_si256(below_hidden, below_visible));
  }
  static SKIFF_LANES_INLINE T select(Mask m, T if_set, T otherwise) { return _mm256_blendv_ps(otherwise, if_set, m); }
  static SKIFF_LANES_INLINE T zero_unless(Mask m, T x) { return _mm256_and_ps(m, x); }
  static SKIFF_LANES_INLINE bool any_greater(T a, T b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ)) != 0; }

  static SKIFF_LANES_INLINE T halves(const unsigned short* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static SKIFF_LANES_INLINE T int8s(const signed char* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
};
#endif

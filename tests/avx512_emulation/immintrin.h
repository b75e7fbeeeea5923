// The AVX-512 kernels (src/kernels/x86/avx512/*_avx512.cpp) compiled for a CPU without
// AVX-512: this header stands in for <immintrin.h> in the emulated kernel
// test (CMakeLists.txt: test_kernels_avx512_emulated), so CI machines without
// AVX-512 still run those kernels against the scalar references. SIMDe
// (Debian libsimde-dev) supplies the _mm512 intrinsics on top of AVX2; the few
// it lacks (0.7.4) are written below from two 256-bit halves.
#pragma once
#include_next <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <cstring>

namespace skiff_avx512_emulation {

inline simde__m512 join_ps(__m256 lo, __m256 hi) {
  return simde_mm512_insertf32x8(simde_mm512_castps256_ps512(lo), hi, 1);
}
inline simde__m512i join_si(__m256i lo, __m256i hi) {
  return simde_mm512_inserti64x4(simde_mm512_castsi256_si512(lo), hi, 1);
}
inline __m256i low_si(simde__m512i a) { return simde_mm512_castsi512_si256(a); }
inline __m256i high_si(simde__m512i a) { return simde_mm512_extracti64x4_epi64(a, 1); }

inline simde__m512 cvtepi32_ps(simde__m512i a) {
  return join_ps(_mm256_cvtepi32_ps(low_si(a)), _mm256_cvtepi32_ps(high_si(a)));
}
inline simde__m512 cvtph_ps(__m256i h) {
  return join_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(h)), _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)));
}
inline simde__m512i cvtepi8_epi32(__m128i a) {
  return join_si(_mm256_cvtepi8_epi32(a), _mm256_cvtepi8_epi32(_mm_srli_si128(a, 8)));
}
inline simde__m512i cvtepu8_epi32(__m128i a) {
  return join_si(_mm256_cvtepu8_epi32(a), _mm256_cvtepu8_epi32(_mm_srli_si128(a, 8)));
}
inline simde__m512i cvtepu16_epi32(__m256i a) {
  return join_si(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(a)), _mm256_cvtepu16_epi32(_mm256_extracti128_si256(a, 1)));
}
inline simde__m512i zextsi128_si512(__m128i a) { return join_si(_mm256_zextsi128_si256(a), _mm256_setzero_si256()); }
inline simde__m512 shuffle_f32x4(simde__m512 a, simde__m512 b, int imm) {
  float va[16], vb[16], out[16];
  simde_mm512_storeu_ps(va, a);
  simde_mm512_storeu_ps(vb, b);
  for (int lane = 0; lane < 4; ++lane)
    std::memcpy(out + 4 * lane, (lane < 2 ? va : vb) + 4 * (imm >> 2 * lane & 3), 16);
  return simde_mm512_loadu_ps(out);
}
// Masked loads and stores touch only the selected elements, as the
// instructions do (a kernel may mask off elements past the end of its buffer).
template <class T>
void copy_selected(uint32_t k, const void* from, void* to) {
  for (int i = 0; i < 16; ++i)
    if (k >> i & 1) std::memcpy(static_cast<char*>(to) + sizeof(T) * i, static_cast<const char*>(from) + sizeof(T) * i, sizeof(T));
}
inline simde__m512 maskz_loadu_ps(simde__mmask16 k, const void* p) {
  float v[16] = {};
  copy_selected<float>(k, p, v);
  return simde_mm512_loadu_ps(v);
}
inline simde__m512i maskz_loadu_epi32(simde__mmask16 k, const void* p) {
  int32_t v[16] = {};
  copy_selected<int32_t>(k, p, v);
  return simde_mm512_loadu_si512(v);
}
inline __m256i maskz_loadu_epi16_256(simde__mmask16 k, const void* p) {
  int16_t v[16] = {};
  copy_selected<int16_t>(k, p, v);
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
}
inline void mask_storeu_ps(void* p, simde__mmask16 k, simde__m512 a) {
  float v[16];
  simde_mm512_storeu_ps(v, a);
  copy_selected<float>(k, v, p);
}
inline __m256 extractf32x8_ps(simde__m512 a, int imm) {
  const simde__m512i bits = simde_mm512_castps_si512(a);
  return _mm256_castsi256_ps(imm ? high_si(bits) : low_si(bits));
}
inline simde__m512i srai_epi32(simde__m512i a, int count) {
  const __m128i n = _mm_cvtsi32_si128(count);
  return join_si(_mm256_sra_epi32(low_si(a), n), _mm256_sra_epi32(high_si(a), n));
}
inline float reduce_add_ps(simde__m512 a) {
  const __m256 s8 = _mm256_add_ps(extractf32x8_ps(a, 0), extractf32x8_ps(a, 1));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

}  // namespace skiff_avx512_emulation

#undef _mm512_cvtepi32_ps
#define _mm512_cvtepi32_ps(a) skiff_avx512_emulation::cvtepi32_ps(a)
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps(a) skiff_avx512_emulation::cvtph_ps(a)
#undef _mm512_cvtepi8_epi32
#define _mm512_cvtepi8_epi32(a) skiff_avx512_emulation::cvtepi8_epi32(a)
#undef _mm512_cvtepu8_epi32
#define _mm512_cvtepu8_epi32(a) skiff_avx512_emulation::cvtepu8_epi32(a)
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps(k, p) skiff_avx512_emulation::maskz_loadu_ps(k, p)
#undef _mm512_maskz_loadu_epi32
#define _mm512_maskz_loadu_epi32(k, p) skiff_avx512_emulation::maskz_loadu_epi32(k, p)
#undef _mm512_cvtepu16_epi32
#define _mm512_cvtepu16_epi32(a) skiff_avx512_emulation::cvtepu16_epi32(a)
#undef _mm512_zextsi128_si512
#define _mm512_zextsi128_si512(a) skiff_avx512_emulation::zextsi128_si512(a)
#undef _mm256_maskz_loadu_epi16
#define _mm256_maskz_loadu_epi16(k, p) skiff_avx512_emulation::maskz_loadu_epi16_256(k, p)
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps(p, k, a) skiff_avx512_emulation::mask_storeu_ps(p, k, a)
#undef _cvtu64_mask64
#define _cvtu64_mask64(a) static_cast<simde__mmask64>(a)
#undef _mm512_shuffle_f32x4
#define _mm512_shuffle_f32x4(a, b, imm) skiff_avx512_emulation::shuffle_f32x4(a, b, imm)
#undef _mm512_extractf32x8_ps
#define _mm512_extractf32x8_ps(a, imm) skiff_avx512_emulation::extractf32x8_ps(a, imm)
#undef _mm512_reduce_add_ps
#define _mm512_reduce_add_ps(a) skiff_avx512_emulation::reduce_add_ps(a)
#undef _mm512_srai_epi32
#define _mm512_srai_epi32(a, imm) skiff_avx512_emulation::srai_epi32(a, imm)
#undef _mm512_mask_srli_epi16
#define _mm512_mask_srli_epi16(src, k, a, imm) simde_mm512_mask_mov_epi16(src, k, simde_mm512_srli_epi16(a, imm))

// Vectorizable math for kernel bodies compiled once per ISA: included inside a
// per-ISA namespace (so no include guard and no STL here).

// exp(x) to about an ulp for x in [-87, 88] (clamped outside): x = n·ln2 + r
// with |r| <= ln2/2 (Cody-Waite split of ln2 keeps r exact), exp(r) by a
// polynomial, 2^n built in the exponent bits. Loops calling it vectorize.
inline float fast_exp(float x) {
  // Two plain selects (NaN passes both): as one nested select, GCC split
  // callers' loops by range and repeated their work (silu_mul's division) per range.
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // Round to nearest by adding and removing 1.5·2^23 (plain float adds, which
  // vectorize where a call to floor does not).
  constexpr float kRound = 12582912.0f;
  const float n = (x * 1.44269504088896341f + kRound) - kRound;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  // Fitted for relative error on [-ln2/2, ln2/2] (4e-9 in exact arithmetic).
  float p = 1.3751408180410973e-3f;
  p = p * r + 8.368919081647757e-3f;
  p = p * r + 4.1669533395562855e-2f;
  p = p * r + 1.6666518437203998e-1f;
  p = p * r + 4.9999988592958267e-1f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // NaN passes both clamps, and converting its n to int is undefined: 0
  // instead (p is NaN already, so the result stays NaN).
  const int bits = ((n == n ? static_cast<int>(n) : 0) + 127) << 23;
  return p * __builtin_bit_cast(float, bits);
}

// cap · tanh(x / cap), as cap · (2 / (1 + exp(-2x/cap)) - 1): absolute error
// ~1e-7 · cap (relative error grows near 0, where the soft-cap is the identity).
inline float fast_softcap(float x, float cap) { return cap * (2.0f / (1.0f + fast_exp(-2.0f * x / cap)) - 1.0f); }

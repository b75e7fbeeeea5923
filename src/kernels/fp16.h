// IEEE half and bfloat16 <-> float conversions, portable (no F16C needed).
#pragma once
#include <cstdint>
#include <cstring>

namespace skiff {

inline float bits_to_f32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint32_t f32_to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return bits_to_f32(sign | 0x7f800000 | (mant << 13));  // inf / nan
  if (exp == 0) {
    // zero or subnormal: value = mant * 2^-24
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_to_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

// Round to nearest even, overflow to inf, as hardware conversion does.
inline uint16_t f32_to_fp16(float f) {
  const uint32_t x = f32_to_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) return static_cast<uint16_t>(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds past max half
  if (abs < 0x38800000) {
    // subnormal half (or zero): scale into integer units of 2^-24 with rounding
    const float v = bits_to_f32(abs) * 16777216.0f;
    uint32_t m = static_cast<uint32_t>(v);
    const float rem = v - static_cast<float>(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t r = abs - 0x38000000;  // rebias exponent 127 -> 15
  r += 0xfff + ((r >> 13) & 1);   // round to nearest even on the 13 dropped bits
  return static_cast<uint16_t>(sign | (r >> 13));
}

inline float bf16_to_f32(uint16_t b) { return bits_to_f32(static_cast<uint32_t>(b) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t x = f32_to_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace skiff

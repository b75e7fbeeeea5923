// The lattice i-quants, read through dequantize_row only (the scalar kernel),
// as ggml defines them (ggml-common.h; grids in iq_grids.h). Super-blocks of
// 256; the float products are the gguf package's numpy reference's, in its order.
//   IQ2_XXS (66):  fp16 d; 8 × (u32 grid bytes, u32 signs/scale) per 32: four
//                  8-wide grid rows, 4 × 7 sign bits, a 4-bit scale s at bit 28;
//                  x = d·(0.5 + s)·0.25 · grid · sign
//   IQ2_XS  (74):  fp16 d; u16 qs[32] (9-bit row, 7-bit signs); u8 scales[8], a
//                  nibble per 16
//   IQ2_S   (82):  fp16 d; u8 qs[32], u8 signs[32], u8 qh[8] (2 more row bits
//                  each), u8 scales[8]
//   IQ3_XXS (98):  fp16 d; u8 qs[64] (4-wide rows); 8 × u32 signs/scale;
//                  x = d·(0.5 + s)·0.5 · grid · sign
//   IQ3_S  (110):  fp16 d; u8 qs[64], u8 qh[8] (a ninth row bit), u8 signs[32],
//                  u8 scales[4]; x = d·(1 + 2s) · grid · sign
//   IQ1_S   (50):  fp16 d; u8 qs[32]; u16 qh[8] per 32: 3 more row bits per 8,
//                  a 3-bit scale at bit 12, the sign of delta = ±1/8 at bit 15;
//                  x = d·(2s + 1) · (grid + delta)
//   IQ1_M   (56):  u8 qs[32]; u8 qh[16] (per 8: 3 row bits and delta's sign);
//                  u16 scales[4] (3-bit scales per 16; the fp16 d in their top nibbles)
// A 7-bit sign field's 8th sign makes the count of minus signs even.
#include <bit>
#include <cstring>

#include "kernels/quant/iq_grids.h"
#include "kernels/quant/quant_formats.h"

namespace skiff {
namespace {

using namespace iq_grids;

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Element k of grid row r.
template <int kBits, size_t N>
float grid_at(const uint16_t (&grid)[N], const int8_t* values, int r, int k) {
  return static_cast<float>(values[(grid[r] >> (kBits * k)) & ((1 << kBits) - 1)]);
}

// The 8 signs of a 7-bit field (ggml's ksigns): bit 7 set when the 7 have odd parity.
int eight_signs(uint32_t seven) { return static_cast<int>(seven | (std::popcount(seven) % 2 ? 0x80u : 0u)); }

float signed_by(float v, int signs, int k) { return (signs >> k) & 1 ? -v : v; }

}  // namespace

void dequantize_iq2_xxs(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += 66) {
    const float d = fp16_to_f32(load_u16(src));
    for (int ib = 0; ib < 8; ++ib) {
      const uint32_t rows = load_u32(src + 2 + 8 * ib), aux = load_u32(src + 6 + 8 * ib);
      const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l, y += 8) {
        const int signs = eight_signs((aux >> (7 * l)) & 0x7F);
        for (int k = 0; k < 8; ++k)
          y[k] = signed_by(db * grid_at<kIq2XxsGridBits>(kIq2XxsGrid, kIq2XxsGridValues, (rows >> (8 * l)) & 0xFF, k),
                           signs, k);
      }
    }
  }
}

void dequantize_iq2_xs(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += 74) {
    const float d = fp16_to_f32(load_u16(src));
    for (int m = 0; m < 32; ++m, y += 8) {
      const uint16_t q = load_u16(src + 2 + 2 * m);
      const int s = (src[66 + m / 4] >> (4 * ((m / 2) % 2))) & 0xF;
      const float db = d * (0.5f + static_cast<float>(s)) * 0.25f;
      const int signs = eight_signs(q >> 9);
      for (int k = 0; k < 8; ++k)
        y[k] = signed_by(db * grid_at<kIq2XsGridBits>(kIq2XsGrid, kIq2XsGridValues, q & 511, k), signs, k);
    }
  }
}

void dequantize_iq2_s(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += 82) {
    const float d = fp16_to_f32(load_u16(src));
    const uint8_t *qs = src + 2, *sign_bytes = src + 34, *qh = src + 66, *scales = src + 74;
    for (int m = 0; m < 32; ++m, y += 8) {
      const int row = qs[m] | ((qh[m / 4] >> (2 * (m % 4))) & 3) << 8;
      const int s = (scales[m / 4] >> (4 * ((m / 2) % 2))) & 0xF;
      const float db = d * (0.5f + static_cast<float>(s)) * 0.25f;
      for (int k = 0; k < 8; ++k)
        y[k] = signed_by(db * grid_at<kIq2SGridBits>(kIq2SGrid, kIq2SGridValues, row, k), sign_bytes[m], k);
    }
  }
}

void dequantize_iq3_xxs(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += 98) {
    const float d = fp16_to_f32(load_u16(src));
    const uint8_t* qs = src + 2;
    for (int ib = 0; ib < 8; ++ib) {
      const uint32_t aux = load_u32(src + 66 + 4 * ib);
      const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l, y += 8) {
        const int signs = eight_signs((aux >> (7 * l)) & 0x7F);
        for (int k = 0; k < 8; ++k)
          y[k] = signed_by(
              db * grid_at<kIq3XxsGridBits>(kIq3XxsGrid, kIq3XxsGridValues, qs[8 * ib + 2 * l + k / 4], k % 4), signs,
              k);
      }
    }
  }
}

void dequantize_iq3_s(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += 110) {
    const float d = fp16_to_f32(load_u16(src));
    const uint8_t *qs = src + 2, *qh = src + 66, *sign_bytes = src + 74, *scales = src + 106;
    for (int e = 0; e < 256; ++e) {
      const int m = e / 4, sub = e / 32;
      const int row = qs[m] | ((qh[m / 8] >> (m % 8)) & 1) << 8;
      const int s = (scales[sub / 2] >> (4 * (sub % 2))) & 0xF;
      const float db = d * static_cast<float>(1 + 2 * s);
      y[e] = signed_by(db * grid_at<kIq3SGridBits>(kIq3SGrid, kIq3SGridValues, row, e % 4), sign_bytes[e / 8], e % 8);
    }
    y += 256;
  }
}

void dequantize_iq1_s(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += 50) {
    const float d = fp16_to_f32(load_u16(src));
    const uint8_t* qs = src + 2;
    for (int ib = 0; ib < 8; ++ib) {
      const uint16_t qh = load_u16(src + 34 + 2 * ib);
      const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
      const float delta = qh & 0x8000 ? -0.125f : 0.125f;
      for (int l = 0; l < 4; ++l, y += 8) {
        const int row = qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8;
        for (int k = 0; k < 8; ++k) y[k] = dl * (grid_at<kIq1SGridBits>(kIq1SGrid, kIq1SGridValues, row, k) + delta);
      }
    }
  }
}

void dequantize_iq1_m(const uint8_t* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += 56) {
    const uint8_t *qs = src, *qh = src + 32;
    uint16_t sc[4];
    std::memcpy(sc, src + 48, 8);
    const uint16_t d_bits = static_cast<uint16_t>((sc[0] >> 12) | (sc[1] >> 8 & 0x00F0) | (sc[2] >> 4 & 0x0F00) |
                                                  (sc[3] & 0xF000));
    const float d = fp16_to_f32(d_bits);
    for (int m = 0; m < 32; ++m, y += 8) {  // 8 elements: sub-block of 16 m / 2
      const int s = (sc[m / 8] >> (3 * ((m / 2) % 4))) & 7;
      const float dl = d * static_cast<float>(2 * s + 1);
      const int h = (qh[m / 2] >> (4 * (m % 2))) & 0xF;
      const int row = qs[m] | (h & 7) << 8;
      const float delta = h & 8 ? -0.125f : 0.125f;
      for (int k = 0; k < 8; ++k) y[k] = dl * (grid_at<kIq1SGridBits>(kIq1SGrid, kIq1SGridValues, row, k) + delta);
    }
  }
}

}  // namespace skiff

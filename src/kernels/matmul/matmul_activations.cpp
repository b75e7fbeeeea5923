// Activation quantization for the integer kernels (layout: quant_activation_layout.h).
//
// kQ8_0 (the blocks of 32: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4): per block of
// 32, d = max|x| / 127 and q = round(x / d) in [-127, 127]. d stays f32 (ggml
// stores fp16), which keeps the error at half a step. The block sums Σq let the
// kernels make one operand unsigned for the u8 × s8 dot instructions and
// correct afterwards (Σ (w + c)·q - c·Σq = Σ w·q).
//
// kQ8_K (K-quant and IQ4_XS weights): one d per 256 elements, as ggml's Q8_K,
// and per 32 elements (a Q4_K / Q5_K sub-block) dsum = d·Σq for the sub-block's
// min term (dmin·m·Σx), and per 16 elements the same for Q2_K's mins and Σq
// itself (qsum16, exact) for the sub-block sums of the Q6_K / Q3_K / Q2_K
// panels, which read it from the row (decode) or the quads. The Q6_K row
// kernels make their own offsets (-32·Σx) once per call.
//
// q never reaches -128, so |q| ≤ 127 holds for the AVX2 sign trick.
// The spans are quantized by the copy of quantize_q8_span for the active ISA.
#include <cstring>

#include "base/error.h"
#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/row_sums.h"
#include "kernels/ops/ops.h"

namespace skiff {
namespace {

void check_cols(ActivationFormat format, int64_t cols) {
  const int64_t block = format == ActivationFormat::kQ8_K ? 256 : 32;
  if (format == ActivationFormat::kF32) fail("kF32 activations are not quantized");
  if (cols <= 0 || cols % block != 0)
    fail("activation row of {} elements is not a whole number of {}-element blocks", cols, block);
}

}  // namespace

size_t activation_quads_bytes(int64_t cols, int n_tokens) {
  return static_cast<size_t>((n_tokens + kQuadTokens - 1) / kQuadTokens) * (cols / 32) * sizeof(QuadUnit);
}

void pack_activation_quad(ActivationFormat format, const uint8_t* rows, size_t row_bytes, int n_tokens,
                          int64_t cols, int64_t k, void* quads) {
  const ActLayout l = act_layout(format, cols);
  const int64_t units = cols / 32;
  QuadUnit* out = static_cast<QuadUnit*>(quads) + k * units;
  std::memset(static_cast<void*>(out), 0, units * sizeof(QuadUnit));
  for (int t = 0; t < kQuadTokens && k * kQuadTokens + t < n_tokens; ++t) {
    const ActRow a = act_row_at(rows + row_bytes * (k * kQuadTokens + t), l);
    for (int64_t u = 0; u < units; ++u) {
      for (int g = 0; g < 8; ++g) std::memcpy(&out[u].q[g][t], a.q + 32 * u + 4 * g, 4);
      if (format == ActivationFormat::kQ8_0) {  // dsum for the _1 types' min
        out[u].d[t] = a.d[u];
        out[u].sum[0][t] = static_cast<const int32_t*>(a.sums)[u];
        out[u].dsum[t] = a.d[u] * static_cast<float>(out[u].sum[0][t]);
      } else {
        out[u].d[t] = a.d[u / 8];
        out[u].dsum[t] = static_cast<const float*>(a.sums)[u];
        for (int h = 0; h < 2; ++h) out[u].sum[h][t] = -32 * a.qsums16[2 * u + h];  // Q6_K's offset
      }
    }
  }
}

size_t activation_row_bytes(ActivationFormat format, int64_t cols) {
  if (format == ActivationFormat::kF32) return 0;
  check_cols(format, cols);
  return static_cast<size_t>(act_layout(format, cols).bytes);
}

void activation_residual(ActivationFormat format, const float* x, float* r, int64_t cols) {
  check_cols(format, cols);
  const int64_t block = format == ActivationFormat::kQ8_0 ? 32 : 256;
  int8_t q[256];
  int32_t sums[8];
  for (int64_t b = 0; b < cols; b += block) {
    const float d = quantize_q8_span(x + b, q, block, sums);
    for (int64_t i = 0; i < block; ++i) r[b + i] = x[b + i] - d * static_cast<float>(q[i]);
  }
}

void quantize_activation_row(ActivationFormat format, const float* x, void* out, int64_t cols) {
  check_cols(format, cols);
  const ActLayout l = act_layout(format, cols);
  auto* base = static_cast<uint8_t*>(out);
  std::memset(base, 0, static_cast<size_t>(l.bytes));  // zero padding (see the layout)
  auto* q = reinterpret_cast<int8_t*>(base);
  auto* d = reinterpret_cast<float*>(base + l.scales);
  if (format == ActivationFormat::kQ8_0) {
    auto* sums = reinterpret_cast<int32_t*>(base + l.sums);
    for (int64_t b = 0; b < cols / 32; ++b) d[b] = quantize_q8_span(x + 32 * b, q + 32 * b, 32, sums + b);
    return;
  }
  auto* dsum = reinterpret_cast<float*>(base + l.sums);
  auto* dsum16 = reinterpret_cast<float*>(base + l.sums16);
  auto* qsum16 = reinterpret_cast<int16_t*>(base + l.qsums16);
  for (int64_t b = 0; b < cols / 256; ++b) {
    int32_t s[8];
    d[b] = quantize_q8_span(x + 256 * b, q + 256 * b, 256, s);
    for (int j = 0; j < 8; ++j) dsum[8 * b + j] = d[b] * static_cast<float>(s[j]);
    for (int i = 0; i < 16; ++i) {  // integer sums: the same bits on every ISA
      const int32_t s16 = sum16_int8(q + 256 * b + 16 * i);  // |s16| <= 16 * 127
      qsum16[16 * b + i] = static_cast<int16_t>(s16);
      dsum16[16 * b + i] = d[b] * static_cast<float>(s16);
    }
  }
}

}  // namespace skiff

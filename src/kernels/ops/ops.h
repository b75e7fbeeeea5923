// Elementwise and row kernels of a transformer layer. rmsnorm, silu_mul, dot,
// gelu_tanh_mul, softcap, add, quantize_q8_span and to_fp16 run the copy compiled for the active ISA
// (ops_impl.h).
// Kernels know nothing of models: they take pointers and sizes.
#pragma once
#include <cstdint>

namespace skiff {

// out[i] = x[i] / rms(x) * weight[i]; out may alias x.
void rmsnorm(const float* x, const float* weight, int n, float eps, float* out);

// gate[i] = silu(gate[i]) * up[i]: the SwiGLU activation.
void silu_mul(float* gate, const float* up, int64_t n);

// gate[i] = gelu_tanh(gate[i]) * up[i]: GeGLU with the tanh approximation of GELU (Gemma).
void gelu_tanh_mul(float* gate, const float* up, int64_t n);

// x[i] = cap * tanh(x[i] / cap): Gemma 2's soft-capping of logits.
void softcap(float* x, int64_t n, float cap);

float dot(const float* a, const float* b, int n);

// x[i] += y[i] (the residual connection).
void add(float* x, const float* y, int64_t n);

// Quantizes x[0, n) (n a multiple of 32) with one scale d = max|x| / 127:
// q[i] = x[i] / d rounded half to even, in [-127, 127]; sums32[b] = Σ q of
// the b-th 32 elements. Returns d.
float quantize_q8_span(const float* x, int8_t* q, int64_t n, int32_t* sums32);

// out[i] = x[i] as fp16, rounded to nearest even (overflow to infinity).
void to_fp16(const float* x, uint16_t* out, int64_t n);

// Per-dimension-pair rotation frequencies for RoPE: freq[i] = 1 / (theta^(2i/rope_dim) *
// factor[i]) for i < rope_dim/2; `factors` may be null (all 1). Llama-3 scaling
// supplies factors; linear scaling is folded in by the caller as a factor.
void rope_frequencies(int rope_dim, float theta, const float* factors, float* freq);

// cos and sin of pos·freq[i] for each rotated pair i < rope_dim/2: computed
// once per token and shared by every layer's queries and keys.
void rope_angles(const float* freq, int rope_dim, int64_t pos, float* cos, float* sin);

// Rotates the first rope_dim dims of each of n_heads vectors of head_dim by
// the angles rope_angles gave. Interleaved pairs (2i, 2i+1) as in Meta/GGUF
// llama; rotate-half pairs (i, i + rope_dim/2) as in Hugging Face (NeoX) checkpoints.
enum class RopeStyle { kInterleaved, kRotateHalf };
void rope(float* x, int n_heads, int head_dim, int rope_dim, const float* cos, const float* sin,
          RopeStyle style);

}  // namespace skiff

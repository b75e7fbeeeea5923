// Matrix products of typed (possibly quantized) weights with float activations.
#pragma once
#include <cstdint>
#include <span>

#include "kernels/matmul/matrix.h"

namespace skiff {

// y[t, :] = W · x[t, :] for t < n_tokens; x is [n_tokens, cols], y [n_tokens, rows].
// Each weight row is read (and dequantized) once for all tokens, so a batch of
// tokens costs one pass over the weights. Parallel over rows with OpenMP.
void matmul(const Matrix& w, const float* x, int n_tokens, float* y);

// One product of matmul_many: y = W · x, y [n_tokens, w->rows].
// batch_invariant: a token's outputs never depend on its batch, in any mode
// (batch_invariant() below: its kernels on rows see a few tokens at a time);
// a router's, whose token's experts must not.
struct MatmulProduct {
  const Matrix* w;
  float* y;
  bool batch_invariant = false;
};

// matmul() of several matrices with the same input (q/k/v, gate/up): the
// activations are quantized once per format the kernels read, and the rows of
// all the matrices are split across the threads of one parallel region. Each
// output is bit-identical to a separate matmul() call (same kernel, same rows).
// Every matrix must have the same number of columns.
void matmul_many(std::span<const MatmulProduct> products, const float* x, int n_tokens);

// How precisely the integer kernels see the activations. kPlainInt8 quantizes
// each token's row once to int8 blocks, as llama.cpp does: the noise per
// product is enough to flip some of a real model's top-1 tokens against an
// exact forward pass (figures: docs/notes/kernel-design-figures.md). kInt8 (the
// default) first takes values over 16x their row's RMS (attention-sink tokens'
// massive activations, the heavy tails of FFN inputs) out of the integer
// products and adds their products exactly, from dequantized weight columns
// (activation_outliers.h). kRefined also runs the quantization's residual x -
// Q(x) through the same kernel as a second row in the same pass over the
// weights: ~15-bit activations (the top-1 tokens and perplexity of an exact
// pass) at twice the integer work: decode runs as fast while memory bound
// (slower where the cores bound it: docs/notes/decode-bandwidth.md); prefill
// slower (figures: docs/notes/kernel-design-figures.md).
enum class ActivationPrecision { kPlainInt8, kInt8, kRefined };
// SKIFF_ACTIVATIONS=plain|int8|refined, else kInt8. Process-wide, like the ISA.
ActivationPrecision activation_precision();
void set_activation_precision(ActivationPrecision precision);

// Batch-invariant mode (--batch-invariant; off by default): products on
// weights as stored (rows) run kInvariantTokens tokens at a time (outside the
// mode, those asking for it: MatmulProduct::batch_invariant), through the
// decode kernels, whose sums for a token do not depend on how many share the
// pass (the prefill kernels on rows sum in another order). Panels and the
// scalar kernels are invariant in any mode. Process-wide, like the ISA.
constexpr int kInvariantTokens = 3;
bool batch_invariant();
void set_batch_invariant(bool on);

}  // namespace skiff

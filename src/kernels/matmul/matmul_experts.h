// The grouped product of a mixture of experts (ggml's mul_mat_id), on the
// matmul() kernels.
#pragma once
#include <cstdint>
#include <span>

#include "kernels/matmul/matrix.h"

namespace skiff {

// `experts` are matrices of one shape [rows, cols], in any layout (views into a
// 3-D GGUF tensor, or a checkpoint's tensor per expert). Token t's slot j
// (t < n_tokens, j < k) goes to expert e = ids[t * k + j], and
// y[t * k + j, :] = W_e · x[t * x_slots + (x_slots == 1 ? 0 : j), :]:
// one input row a token for all its experts (x_slots 1: the gate and up
// projections) or one a slot (x_slots k: the down projection). The rows routed
// to each expert are gathered into one matmul(), so an active expert's weights
// are read once for all its tokens, and an expert no token chose not at all.
// Error on an expert id out of range.
void matmul_experts(std::span<const Matrix> experts, const int32_t* ids, int k, const float* x, int x_slots,
                    int n_tokens, float* y);

}  // namespace skiff

// The grouped product of a mixture of experts (ggml's mul_mat_id), on the
// matmul() kernels.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matrix.h"

namespace skiff {

// Which experts a step's tokens go to, as the grouped product reads and writes
// rows: token t's slot j (t < n_tokens, j < k) goes to expert ids[t * k + j],
// and its routed row row_of(t, j) holds that slot's input (for the down
// projection) and output. Routed rows are grouped by expert, ascending, each
// expert's in token order, so an expert's rows are one run. Error on an
// expert id out of range.
class ExpertRouting {
 public:
  ExpertRouting(const int32_t* ids, int k, int n_tokens, int n_experts);

  int n_tokens() const { return n_tokens_; }
  int n_experts() const { return n_experts_; }
  int n_rows() const { return static_cast<int>(token_of_row_.size()); }
  int32_t row_of(int t, int j) const { return row_of_slot_[static_cast<size_t>(t) * k_ + j]; }
  // Expert e's routed rows [first_row(e), first_row(e + 1)).
  int32_t first_row(int e) const { return first_row_[e]; }
  // The tokens of expert e's routed rows, in order.
  std::span<const int32_t> tokens_of(int e) const {
    return std::span(token_of_row_).subspan(first_row_[e], first_row_[e + 1] - first_row_[e]);
  }
  // Expert e's routed rows themselves.
  std::span<const int32_t> rows_of(int e) const {
    return std::span(routed_rows_).subspan(first_row_[e], first_row_[e + 1] - first_row_[e]);
  }

 private:
  int k_, n_tokens_, n_experts_;
  std::vector<int32_t> first_row_;     // n_experts + 1
  std::vector<int32_t> token_of_row_;  // per routed row
  std::vector<int32_t> row_of_slot_;   // per slot t * k + j
  std::vector<int32_t> routed_rows_;   // 0, 1, ..., n_rows - 1
};

// One expert projection of the grouped product: `experts` are matrices of one
// shape [rows, cols], in any layout (views into a 3-D GGUF tensor, or a
// checkpoint's tensor per expert); y is [routing.n_rows(), rows], by routed row.
struct ExpertProduct {
  std::span<const Matrix> experts;
  float* y;
};

// What the grouped product's input x holds: one row a token ([n_tokens, cols]:
// the gate and up projections), or one a routed row ([n_rows, cols]: the down
// projection, whose input is the gate and up projections' output).
enum class ExpertInput { kPerToken, kPerRoutedRow };

// Products every token takes beside the experts (a shared expert's), on their
// own input x [n_tokens, cols]: y[t, :] = W · x[t, :], as matmul_many().
struct TokenProducts {
  std::span<const MatmulProduct> products;
  const float* x = nullptr;
};

// y[row_of(t, j), :] = W_e · x[t or row_of(t, j), :] for every product, e =
// ids[t * k + j]: all the products (gate and up, sharing their input) and the
// products every token takes in one parallel region (routed_product.h), each
// expert's rows read once for all its tokens, an expert no token chose not at
// all. Each expert's output is bit-identical to a matmul() of its rows
// gathered, and each of every_token's to a matmul(). Every product's matrices
// must have the same number of columns, and so must every_token's.
void matmul_experts(std::span<const ExpertProduct> products, const ExpertRouting& routing, const float* x,
                    ExpertInput input, TokenProducts every_token = {});

}  // namespace skiff

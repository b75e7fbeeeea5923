#include "kernels/matmul/matmul_experts.h"

#include <numeric>

#include "base/error.h"
#include "kernels/matmul/routed_product.h"

namespace skiff {

ExpertRouting::ExpertRouting(const int32_t* ids, int k, int n_tokens, int n_experts)
    : k_(k), n_tokens_(n_tokens), n_experts_(n_experts), first_row_(n_experts + 1, 0) {
  if (k <= 0 || n_tokens < 0 || n_experts <= 0)
    fail("expert routing: {} tokens to {} of {} experts", n_tokens, k, n_experts);
  const size_t n_slots = static_cast<size_t>(n_tokens) * k;
  for (size_t i = 0; i < n_slots; ++i) {
    if (ids[i] < 0 || ids[i] >= n_experts) fail("matmul_experts: expert {} of {}", ids[i], n_experts);
    ++first_row_[ids[i] + 1];
  }
  std::partial_sum(first_row_.begin(), first_row_.end(), first_row_.begin());
  std::vector<int32_t> next(first_row_.begin(), first_row_.end() - 1);
  token_of_row_.resize(n_slots);
  row_of_slot_.resize(n_slots);
  for (size_t i = 0; i < n_slots; ++i) {  // slots in token order: each expert's rows too
    const int32_t row = next[ids[i]]++;
    row_of_slot_[i] = row;
    token_of_row_[row] = static_cast<int32_t>(i / k);
  }
  routed_rows_.resize(n_slots);
  std::iota(routed_rows_.begin(), routed_rows_.end(), 0);
}

void matmul_experts(std::span<const ExpertProduct> products, const ExpertRouting& routing, const float* x,
                    ExpertInput input, TokenProducts every_token) {
  if (products.empty()) fail("matmul_experts: no products");
  for (const ExpertProduct& p : products) {
    if (static_cast<int>(p.experts.size()) != routing.n_experts())
      fail("matmul_experts: {} experts routed to, {} given", routing.n_experts(), p.experts.size());
    const Matrix& first = p.experts[0];
    for (const Matrix& w : p.experts)
      if (w.rows != first.rows || w.cols != first.cols)
        fail("matmul_experts: experts of shapes [{}, {}] and [{}, {}]", first.rows, first.cols, w.rows, w.cols);
  }
  // Expert by expert, its products together: a thread streams an expert's
  // gate and up rows over the same activations.
  std::vector<RoutedProduct> routed;
  for (int e = 0; e < routing.n_experts(); ++e) {
    if (routing.first_row(e) == routing.first_row(e + 1)) continue;
    const std::span<const int32_t> rows = input == ExpertInput::kPerToken ? routing.tokens_of(e) : routing.rows_of(e);
    for (const ExpertProduct& p : products)
      routed.push_back({&p.experts[e], p.y + static_cast<size_t>(routing.first_row(e)) * p.experts[e].rows, rows});
  }
  // Every token's products read the experts' input where it is theirs (the
  // gate and up projections': x quantized once for all), else their own.
  std::vector<RoutedProduct> own;
  const bool same_input = every_token.x == x && input == ExpertInput::kPerToken;
  for (const MatmulProduct& p : every_token.products)
    (same_input ? routed : own).push_back({p.w, p.y, {}, p.batch_invariant});
  const int n_x = input == ExpertInput::kPerToken ? routing.n_tokens() : routing.n_rows();
  const RoutedInput inputs[] = {{routed, x, n_x}, {own, every_token.x, routing.n_tokens()}};
  matmul_routed(inputs, products[0].experts.data());
}

}  // namespace skiff

// Test helper: a token's outputs of w are bit-identical whether it runs alone
// or among n tokens, for each n in counts, on every ISA this CPU supports.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include "each_isa.h"
#include "kernels/dtype.h"
#include "kernels/matmul/matmul.h"

namespace skiff::testing {

// x holds max(counts) token rows of w.cols.
inline void expect_token_outputs_batch_invariant(const Matrix& w, const float* x, std::initializer_list<int> counts) {
  int max_tokens = 0;
  for (int n : counts) max_tokens = n > max_tokens ? n : max_tokens;
  const int64_t rows = w.rows, cols = w.cols;
  for_each_isa([&](Isa isa) {
    std::vector<float> alone(max_tokens * rows);
    for (int t = 0; t < max_tokens; ++t) matmul(w, x + t * cols, 1, alone.data() + t * rows);
    for (int n : counts) {
      std::vector<float> y(n * rows);
      matmul(w, x, n, y.data());
      for (int t = 0; t < n; ++t)
        ASSERT_EQ(0, std::memcmp(&y[t * rows], &alone[t * rows], rows * sizeof(float)))
            << isa_name(isa) << " " << dtype_info(w.type).name << ": token " << t << " of " << n
            << " differs from the token alone";
    }
  });
}

}  // namespace skiff::testing

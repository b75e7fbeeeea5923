// matmul_many() — several weight matrices on one input in one call — against
// separate matmul() calls: the same kernels on the same rows, so the outputs
// must be bit-identical, on every ISA, for every weight type, for mixed types
// (activations quantized to more than one format) and for shapes whose row
// split between threads falls mid-matrix and mid-panel.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace {

constexpr DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0,
                            DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

struct Weights {
  DType type;
  int64_t rows, cols;
  std::vector<uint8_t> bytes;
  MatrixLayout layout = MatrixLayout::kRows;

  Matrix matrix() const { return Matrix{type, rows, cols, bytes.data(), layout}; }
  // Into 16-row panels, as the loader does on AVX-512 (kernels/matmul/repack.h).
  Weights repacked() const {
    Weights w = *this;
    Matrix m = w.matrix();
    repack(m, w.bytes.data());
    w.layout = m.layout;
    return w;
  }
};

Weights random_weights(DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> row(cols);
  Weights w{type, rows, cols, std::vector<uint8_t>(row_bytes(type, cols) * rows)};
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = dist(rng);
    quantize_row(type, row.data(), w.bytes.data() + row_bytes(type, cols) * r, cols);
  }
  return w;
}

// Runs the matrices fused and one by one on the active ISA and compares bits.
void check_fused_equals_separate(const std::vector<Weights>& ws, int n_tokens, std::mt19937& rng) {
  const int64_t cols = ws[0].cols;
  std::vector<Matrix> matrices;
  for (const Weights& w : ws) matrices.push_back(w.matrix());
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> x(n_tokens * cols);
  for (float& v : x) v = dist(rng);
  std::vector<std::vector<float>> fused(ws.size()), separate(ws.size());
  std::vector<MatmulProduct> products;
  for (size_t i = 0; i < ws.size(); ++i) {
    const size_t n = n_tokens * ws[i].rows;
    fused[i].assign(n, std::numeric_limits<float>::quiet_NaN());
    separate[i].assign(n, std::numeric_limits<float>::quiet_NaN());
    matmul(matrices[i], x.data(), n_tokens, separate[i].data());
    products.push_back({&matrices[i], fused[i].data()});
  }
  matmul_many(products, x.data(), n_tokens);
  for (size_t i = 0; i < ws.size(); ++i)
    ASSERT_EQ(std::memcmp(fused[i].data(), separate[i].data(), fused[i].size() * sizeof(float)), 0)
        << isa_name(active_isa()) << ": product " << i << " of " << ws.size() << " ("
        << dtype_info(ws[i].type).name << ", " << ws[i].rows << " × " << cols
        << "), " << n_tokens << " tokens";
}

// check_fused_equals_separate on every ISA for each token count.
void check_every_isa(const std::vector<Weights>& ws, std::initializer_list<int> token_counts, std::mt19937& rng) {
  for (int n_tokens : token_counts) {
    testing::for_each_isa([&](Isa) { check_fused_equals_separate(ws, n_tokens, rng); });
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(MatmulMany, EqualsSeparateCallsEveryTypeAndIsa) {
  std::mt19937 rng(5);
  for (DType type : kTypes) {
    const int64_t cols = 3 * static_cast<int64_t>(dtype_info(type).block_size);
    for (int n_tokens : {1, 2, 3, 5, 13, 64}) {
      // Odd row counts: q/k/v-like (big, small, small) and a single row.
      const std::vector<Weights> ws = {random_weights(type, 97, cols, rng),
                                       random_weights(type, 33, cols, rng),
                                       random_weights(type, 1, cols, rng)};
      testing::for_each_isa([&](Isa) { check_fused_equals_separate(ws, n_tokens, rng); });
      if (HasFatalFailure()) return;
    }
  }
}

// Big enough to run threaded, with products of different types and so of
// different activation formats and row granularities in one parallel region.
TEST(MatmulMany, MixedTypesThreaded) {
  std::mt19937 rng(11);
  const int64_t cols = 512;
  const std::vector<Weights> ws = {
      random_weights(DType::Q4_K, 301, cols, rng), random_weights(DType::Q8_0, 77, cols, rng),
      random_weights(DType::F16, 130, cols, rng), random_weights(DType::Q4_0, 259, cols, rng),
      random_weights(DType::Q6_K, 45, cols, rng)};
  check_every_isa(ws, {1, 4, 20}, rng);
}

// Repacked and row matrices in one call, for 1-5 tokens: the panel kernels
// read a single token's row as quantized but interleaved quads from 2 tokens
// on, where the row kernels of the same activation format read neither (up to
// 3 tokens), so quads must be built for the call whichever product needs them.
TEST(MatmulMany, PanelsAndRowsMixed) {
  std::mt19937 rng(13);
  const int64_t cols = 256;
  const std::vector<Weights> ws = {
      random_weights(DType::Q8_0, 77, cols, rng), random_weights(DType::Q8_0, 96, cols, rng).repacked(),
      random_weights(DType::Q4_0, 32, cols, rng).repacked(), random_weights(DType::F16, 48, cols, rng).repacked(),
      random_weights(DType::Q4_0, 45, cols, rng), random_weights(DType::Q6_K, 48, cols, rng).repacked(),
      random_weights(DType::Q4_K, 33, cols, rng), random_weights(DType::Q3_K, 64, cols, rng).repacked(),
      random_weights(DType::Q3_K, 17, cols, rng), random_weights(DType::Q2_K, 32, cols, rng).repacked()};
  check_every_isa(ws, {1, 2, 3, 4, 5, 9}, rng);
}

// No tokens (the output head of a step that only runs prompt chunks): nothing
// is read or written, on every type and layout. The panel kernels once ran a
// 2-token tile over absent activations here and crashed.
TEST(MatmulMany, NoTokensTouchesNothing) {
  std::mt19937 rng(21);
  for (DType type : kTypes) {
    Weights w = random_weights(type, 48, 256, rng);
    for (const Weights& ws : {w, can_repack(w.matrix()) ? w.repacked() : w}) {
      const Matrix m = ws.matrix();
      std::vector<float> y(48, 7.0f);
      testing::for_each_isa([&](Isa) {
        matmul(m, nullptr, 0, y.data());
        EXPECT_EQ(y, std::vector<float>(48, 7.0f)) << dtype_info(type).name;
      });
    }
  }
}

TEST(MatmulMany, InputsMustHaveTheSameWidth) {
  std::mt19937 rng(3);
  const Weights a = random_weights(DType::F32, 4, 32, rng), b = random_weights(DType::F32, 4, 64, rng);
  const Matrix ma = a.matrix(), mb = b.matrix();
  std::vector<float> x(64), ya(4), yb(4);
  const MatmulProduct products[] = {{&ma, ya.data()}, {&mb, yb.data()}};
  EXPECT_ANY_THROW(matmul_many(products, x.data(), 1));
}

}  // namespace
}  // namespace skiff

// matmul_experts() (ggml's mul_mat_id) against a scalar fp64 reference from
// dequantize_row, on every ISA, for float and quantized expert weights: each
// routed row is its expert's product, whichever tokens share the expert, and
// an expert no token chose is never read. And bit for bit against matmul() of
// each expert's rows gathered, in every activation precision, with and
// without batch-invariant mode, on rows and panels, for gate and up sharing
// one pass.
//
// The integer kernels see x quantized to 8 bits with a scale of at most
// max|x| / 127 a block (this program runs ActivationPrecision::kPlainInt8), so
// an output may differ from Σ w·x by Σ |w| · max|x| / 254, plus float rounding.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/error.h"
#include "each_isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_experts.h"
#include "kernels/matmul/repack.h"
#include "precision_guard.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace {

constexpr DType kTypes[] = {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::MXFP4};

struct Experts {
  DType type;
  int n_experts;
  int64_t rows, cols;  // of each expert
  std::vector<uint8_t> bytes;

  // Views of each expert in the stacked bytes, as a 3-D GGUF tensor holds them.
  std::vector<Matrix> matrices() const { return views(bytes.data()); }
  std::vector<Matrix> views(const void* data) const {
    std::vector<Matrix> out;
    for (int e = 0; e < n_experts; ++e)
      out.push_back(Matrix{type, rows, cols, static_cast<const uint8_t*>(data) + row_bytes(type, cols) * e * rows});
    return out;
  }
  std::vector<float> row(int expert, int64_t r) const {
    std::vector<float> out(cols);
    dequantize_row(type, bytes.data() + row_bytes(type, cols) * (expert * rows + r), out.data(), cols);
    return out;
  }
};

Experts random_experts(DType type, int n_experts, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Experts e{type, n_experts, rows, cols, std::vector<uint8_t>(row_bytes(type, cols) * n_experts * rows)};
  std::vector<float> row(cols);
  for (int64_t r = 0; r < n_experts * rows; ++r) {
    for (float& v : row) v = dist(rng);
    quantize_row(type, row.data(), e.bytes.data() + row_bytes(type, cols) * r, cols);
  }
  return e;
}

// Routes n_tokens tokens to k distinct experts each, none to the last expert.
std::vector<int32_t> random_ids(int n_experts, int k, int n_tokens, std::mt19937& rng) {
  std::vector<int32_t> ids;
  std::vector<int32_t> order(n_experts - 1);
  for (int t = 0; t < n_tokens; ++t) {
    for (int e = 0; e < n_experts - 1; ++e) order[e] = e;
    std::shuffle(order.begin(), order.end(), rng);
    ids.insert(ids.end(), order.begin(), order.begin() + k);
  }
  return ids;
}

// The routed rows' input: x's row of the slot's token, or of the routed row.
const float* input_row(const std::vector<float>& x, const ExpertRouting& routing, ExpertInput input, int t, int j,
                       int64_t cols) {
  return &x[(input == ExpertInput::kPerToken ? t : routing.row_of(t, j)) * cols];
}

std::vector<float> random_input(const ExpertRouting& routing, ExpertInput input, int64_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(input == ExpertInput::kPerToken ? routing.n_tokens() : routing.n_rows()) * cols);
  for (float& v : x) v = dist(rng);
  return x;
}

void check_against_reference(const Experts& w, int k, ExpertInput input, int n_tokens, std::mt19937& rng) {
  const std::vector<int32_t> ids = random_ids(w.n_experts, k, n_tokens, rng);
  const ExpertRouting routing(ids.data(), k, n_tokens, w.n_experts);
  const std::vector<float> x = random_input(routing, input, w.cols, rng);
  std::vector<float> y(static_cast<size_t>(n_tokens) * k * w.rows, std::numeric_limits<float>::quiet_NaN());
  const std::vector<Matrix> matrices = w.matrices();
  const ExpertProduct product{matrices, y.data()};
  matmul_experts({&product, 1}, routing, x.data(), input);
  for (int t = 0; t < n_tokens; ++t)
    for (int j = 0; j < k; ++j) {
      const float* xr = input_row(x, routing, input, t, j, w.cols);
      const float x_max = std::abs(*std::max_element(xr, xr + w.cols, [](float a, float b) { return std::abs(a) < std::abs(b); }));
      for (int64_t r = 0; r < w.rows; ++r) {
        const std::vector<float> wr = w.row(ids[t * k + j], r);
        double ref = 0, abs_sum = 0, w_sum = 0;
        for (int64_t i = 0; i < w.cols; ++i) {
          ref += static_cast<double>(wr[i]) * xr[i];
          abs_sum += std::abs(static_cast<double>(wr[i]) * xr[i]);
          w_sum += std::abs(wr[i]);
        }
        const double bound = w_sum * x_max / 254 + 1e-4 * abs_sum + 1e-5;
        ASSERT_NEAR(y[routing.row_of(t, j) * w.rows + r], ref, bound)
            << dtype_info(w.type).name << ": token " << t << ", slot " << j << " (expert " << ids[t * k + j]
            << "), row " << r << ", " << n_tokens << " tokens, input per "
            << (input == ExpertInput::kPerToken ? "token" : "routed row");
      }
    }
}

TEST(MatmulExperts, MatchesScalarReferenceEveryTypeAndIsa) {
  std::mt19937 rng(43);
  for (DType type : kTypes) {
    const Experts w = random_experts(type, 6, 40, 2 * static_cast<int64_t>(dtype_info(type).block_size), rng);
    for (int n_tokens : {1, 3, 17})
      for (ExpertInput input : {ExpertInput::kPerToken, ExpertInput::kPerRoutedRow})
        testing::for_each_isa([&](Isa) { check_against_reference(w, 2, input, n_tokens, rng); });
    if (HasFatalFailure()) return;
  }
}

// Each expert panel-repacked in place, as the loader does on AVX-512.
Experts repacked(Experts w) {
  for (Matrix& m : w.views(w.bytes.data())) repack(m, static_cast<uint8_t*>(const_cast<void*>(m.data)));
  return w;
}

std::vector<Matrix> matrices_of(const Experts& w, bool panels) {
  std::vector<Matrix> out = w.matrices();
  if (panels)
    for (Matrix& m : out) m.layout = MatrixLayout::kPanels;
  return out;
}

// Gate and up (two types, so two activation formats) on a per-token input
// with an outlier in one token, then down on per-routed-row input: every
// expert's rows bit-identical to matmul() of its rows gathered. With `shared`
// (one matrix), a product every token takes in the same region, on the
// experts' input where it is per token, else on an input of its own: its
// outputs bit-identical to matmul()'s.
void check_equals_matmul_per_expert(const std::vector<const Experts*>& sets, ExpertInput input, int n_tokens,
                                    bool panels, std::mt19937& rng, const Experts* shared = nullptr) {
  const int k = 3, n_experts = sets[0]->n_experts;
  const int64_t cols = sets[0]->cols;
  const std::vector<int32_t> ids = random_ids(n_experts, k, n_tokens, rng);
  const ExpertRouting routing(ids.data(), k, n_tokens, n_experts);
  std::vector<float> x = random_input(routing, input, cols, rng);
  x[cols / 2] = 100.0f;  // over 16x the row's RMS: an outlier (activation_outliers.h)
  std::vector<std::vector<Matrix>> matrices;
  std::vector<std::vector<float>> ys;
  std::vector<ExpertProduct> products;
  for (const Experts* w : sets) {
    matrices.push_back(matrices_of(*w, panels));
    ys.emplace_back(static_cast<size_t>(routing.n_rows()) * w->rows, std::numeric_limits<float>::quiet_NaN());
  }
  for (size_t p = 0; p < sets.size(); ++p) products.push_back({matrices[p], ys[p].data()});
  std::vector<Matrix> shared_matrix;
  std::vector<float> shared_x, shared_y;
  MatmulProduct shared_product{};
  TokenProducts every_token;
  if (shared) {
    shared_matrix = matrices_of(*shared, panels);
    if (input == ExpertInput::kPerRoutedRow) {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      shared_x.resize(static_cast<size_t>(n_tokens) * shared->cols);
      for (float& v : shared_x) v = dist(rng);
      shared_x.back() = -100.0f;  // an outlier of its own
    }
    shared_y.assign(static_cast<size_t>(n_tokens) * shared->rows, std::numeric_limits<float>::quiet_NaN());
    shared_product = {&shared_matrix[0], shared_y.data()};
    every_token = {{&shared_product, 1}, input == ExpertInput::kPerToken ? x.data() : shared_x.data()};
  }
  matmul_experts(products, routing, x.data(), input, every_token);
  if (shared) {
    std::vector<float> expected(shared_y.size());
    matmul(shared_matrix[0], every_token.x, n_tokens, expected.data());
    ASSERT_EQ(std::memcmp(expected.data(), shared_y.data(), expected.size() * sizeof(float)), 0)
        << isa_name(active_isa()) << ", every token's " << dtype_info(shared->type).name
        << (panels ? " panels" : " rows") << ", " << n_tokens << " tokens, batch-invariant " << batch_invariant()
        << ", precision " << static_cast<int>(activation_precision());
  }
  for (size_t p = 0; p < sets.size(); ++p)
    for (int e = 0; e < n_experts; ++e) {
      const std::span<const int32_t> rows = input == ExpertInput::kPerToken ? routing.tokens_of(e) : routing.rows_of(e);
      const int n = static_cast<int>(rows.size());
      if (n == 0) continue;  // memcmp of two empty vectors would pass null pointers
      std::vector<float> gathered(n * cols), expected(n * sets[p]->rows);
      for (int i = 0; i < n; ++i) std::copy_n(&x[rows[i] * cols], cols, &gathered[i * cols]);
      matmul(matrices[p][e], gathered.data(), n, expected.data());
      ASSERT_EQ(std::memcmp(expected.data(), &ys[p][routing.first_row(e) * sets[p]->rows], expected.size() * sizeof(float)), 0)
          << isa_name(active_isa()) << ", " << dtype_info(sets[p]->type).name << (panels ? " panels" : " rows")
          << ", expert " << e << " of " << n << " rows, " << n_tokens << " tokens, batch-invariant "
          << batch_invariant() << ", precision " << static_cast<int>(activation_precision());
    }
}

TEST(MatmulExperts, EachExpertEqualsMatmulOfItsRowsInEveryMode) {
  std::mt19937 rng(17);
  const Experts gate = random_experts(DType::Q4_K, 5, 48, 512, rng), up = random_experts(DType::Q8_0, 5, 32, 512, rng);
  const Experts down = random_experts(DType::Q6_K, 5, 64, 512, rng), f16 = random_experts(DType::F16, 5, 16, 512, rng);
  const Experts gate_p = repacked(gate), up_p = repacked(up), down_p = repacked(down);
  // A shared expert's gate on the experts' input, and its down on its own, wider input.
  const Experts shared_gate = random_experts(DType::Q4_K, 1, 48, 512, rng);
  const Experts shared_down = random_experts(DType::Q8_0, 1, 64, 768, rng);
  const Experts shared_gate_p = repacked(shared_gate), shared_down_p = repacked(shared_down);
  const bool saved_invariant = batch_invariant();
  for (ActivationPrecision precision :
       {ActivationPrecision::kPlainInt8, ActivationPrecision::kInt8, ActivationPrecision::kRefined}) {
    const testing::PrecisionGuard guard(precision);
    for (bool invariant : {false, true}) {
      set_batch_invariant(invariant);
      for (int n_tokens : {1, 2, 7, 40})
        testing::for_each_isa([&](Isa) {
          check_equals_matmul_per_expert({&gate, &up, &f16}, ExpertInput::kPerToken, n_tokens, false, rng);
          check_equals_matmul_per_expert({&down}, ExpertInput::kPerRoutedRow, n_tokens, false, rng);
          check_equals_matmul_per_expert({&gate, &up}, ExpertInput::kPerToken, n_tokens, false, rng, &shared_gate);
          check_equals_matmul_per_expert({&down}, ExpertInput::kPerRoutedRow, n_tokens, false, rng, &shared_down);
          if (!can_repack(gate.matrices()[0]) || !panel_kernel_for(active_isa(), DType::Q4_K)) return;
          check_equals_matmul_per_expert({&gate_p, &up_p}, ExpertInput::kPerToken, n_tokens, true, rng);
          check_equals_matmul_per_expert({&down_p}, ExpertInput::kPerRoutedRow, n_tokens, true, rng);
          check_equals_matmul_per_expert({&gate_p, &up_p}, ExpertInput::kPerToken, n_tokens, true, rng, &shared_gate_p);
          check_equals_matmul_per_expert({&down_p}, ExpertInput::kPerRoutedRow, n_tokens, true, rng, &shared_down_p);
        });
      if (HasFatalFailure()) break;
    }
    if (HasFatalFailure()) break;
  }
  set_batch_invariant(saved_invariant);
}

// Routed rows: grouped by expert, each expert's in token order.
TEST(MatmulExperts, RoutingGroupsRowsByExpert) {
  const int32_t ids[] = {2, 0, 0, 1, 2, 0};  // 3 tokens, 2 slots each
  const ExpertRouting routing(ids, 2, 3, 4);
  EXPECT_EQ(routing.n_rows(), 6);
  EXPECT_EQ(std::vector<int32_t>(routing.tokens_of(0).begin(), routing.tokens_of(0).end()), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(std::vector<int32_t>(routing.tokens_of(1).begin(), routing.tokens_of(1).end()), (std::vector<int32_t>{1}));
  EXPECT_EQ(std::vector<int32_t>(routing.tokens_of(2).begin(), routing.tokens_of(2).end()), (std::vector<int32_t>{0, 2}));
  EXPECT_TRUE(routing.tokens_of(3).empty());
  EXPECT_EQ(routing.row_of(0, 0), 4);  // expert 2's first
  EXPECT_EQ(routing.row_of(0, 1), 0);
  EXPECT_EQ(routing.row_of(2, 0), 5);
  EXPECT_EQ(routing.row_of(2, 1), 2);
}

// An expert no token chose is not read: its bytes lie on a page that faults
// when touched (4 experts of 16 x 64 F32, a page each).
TEST(MatmulExperts, ReadsOnlyRoutedExperts) {
  std::mt19937 rng(7);
  const Experts w = random_experts(DType::F32, 4, 16, 64, rng);
  const size_t page = 16 * 64 * sizeof(float);
  ASSERT_EQ(page % static_cast<size_t>(sysconf(_SC_PAGESIZE)), 0u);
  void* mapped = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  std::memcpy(mapped, w.bytes.data(), 3 * page);
  ASSERT_EQ(mprotect(static_cast<uint8_t*>(mapped) + 3 * page, page, PROT_NONE), 0);
  const std::vector<Matrix> guarded = w.views(mapped);
  const std::vector<int32_t> ids = random_ids(4, 2, 5, rng);  // never expert 3
  const ExpertRouting routing(ids.data(), 2, 5, 4);
  std::vector<float> x(5 * 64, 0.5f), y(5 * 2 * 16), expected(5 * 2 * 16);
  const std::vector<Matrix> matrices = w.matrices();
  const ExpertProduct read_guarded{guarded, y.data()}, read_all{matrices, expected.data()};
  matmul_experts({&read_guarded, 1}, routing, x.data(), ExpertInput::kPerToken);
  matmul_experts({&read_all, 1}, routing, x.data(), ExpertInput::kPerToken);
  EXPECT_EQ(y, expected);
  munmap(mapped, 4 * page);
}

TEST(MatmulExperts, RefusesAnExpertOutOfRange) {
  const int32_t ids[] = {0, 4};
  EXPECT_THROW(ExpertRouting(ids, 2, 1, 4), Error);
  const int32_t negative[] = {-1, 0};
  EXPECT_THROW(ExpertRouting(negative, 2, 1, 4), Error);
}

TEST(MatmulExperts, RefusesExpertsTheRoutingDoesNotName) {
  std::mt19937 rng(9);
  const Experts w = random_experts(DType::F32, 3, 16, 64, rng);
  const int32_t ids[] = {0, 3};
  const ExpertRouting routing(ids, 2, 1, 4);
  std::vector<float> x(64), y(2 * 16);
  const std::vector<Matrix> matrices = w.matrices();
  const ExpertProduct product{matrices, y.data()};
  EXPECT_THROW(matmul_experts({&product, 1}, routing, x.data(), ExpertInput::kPerToken), Error);
}

}  // namespace
}  // namespace skiff

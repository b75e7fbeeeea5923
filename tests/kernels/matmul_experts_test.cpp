// matmul_experts() (ggml's mul_mat_id) against a scalar fp64 reference from
// dequantize_row, on every ISA, for float and quantized expert weights: each
// routed row is its expert's product, whichever tokens share the expert, and
// an expert no token chose is never read.
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
#include "kernels/matmul/matmul_experts.h"
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

void check_against_reference(const Experts& w, int k, int x_slots, int n_tokens, std::mt19937& rng) {
  const std::vector<int32_t> ids = random_ids(w.n_experts, k, n_tokens, rng);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n_tokens) * x_slots * w.cols);
  for (float& v : x) v = dist(rng);
  std::vector<float> y(static_cast<size_t>(n_tokens) * k * w.rows, std::numeric_limits<float>::quiet_NaN());
  matmul_experts(w.matrices(), ids.data(), k, x.data(), x_slots, n_tokens, y.data());
  for (int t = 0; t < n_tokens; ++t)
    for (int j = 0; j < k; ++j) {
      const float* xr = &x[(t * x_slots + (x_slots == 1 ? 0 : j)) * w.cols];
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
        ASSERT_NEAR(y[(t * k + j) * w.rows + r], ref, bound)
            << dtype_info(w.type).name << ": token " << t << ", slot " << j << " (expert " << ids[t * k + j]
            << "), row " << r << ", " << n_tokens << " tokens, x_slots " << x_slots;
      }
    }
}

TEST(MatmulExperts, MatchesScalarReferenceEveryTypeAndIsa) {
  std::mt19937 rng(43);
  for (DType type : kTypes) {
    const Experts w = random_experts(type, 6, 40, 2 * static_cast<int64_t>(dtype_info(type).block_size), rng);
    for (int n_tokens : {1, 3, 17})
      for (int x_slots : {1, 2})
        testing::for_each_isa([&](Isa) { check_against_reference(w, 2, x_slots, n_tokens, rng); });
    if (HasFatalFailure()) return;
  }
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
  std::vector<float> x(5 * 64, 0.5f), y(5 * 2 * 16), expected(5 * 2 * 16);
  matmul_experts(guarded, ids.data(), 2, x.data(), 1, 5, y.data());
  matmul_experts(w.matrices(), ids.data(), 2, x.data(), 1, 5, expected.data());
  EXPECT_EQ(y, expected);
  munmap(mapped, 4 * page);
}

TEST(MatmulExperts, RefusesAnExpertOutOfRange) {
  std::mt19937 rng(9);
  const Experts w = random_experts(DType::F32, 4, 16, 64, rng);
  const int32_t ids[] = {0, 4};
  std::vector<float> x(64), y(2 * 16);
  EXPECT_THROW(matmul_experts(w.matrices(), ids, 2, x.data(), 1, 1, y.data()), Error);
}

}  // namespace
}  // namespace skiff

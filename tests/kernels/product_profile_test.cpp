// The product profile (kernels/matmul/product_profile.h) behind `skiff bench
// --profile`: off, nothing is recorded; on, each matmul_many call counts once
// under its products' shapes and types and its token count, with the weights'
// bytes, and a take empties the record.
#include "kernels/matmul/product_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/matmul/matmul.h"

namespace skiff {
namespace {

struct ProfilingOn {
  ProfilingOn() { set_product_profiling(true); }
  ~ProfilingOn() { set_product_profiling(false); }
};

TEST(ProductProfile, RecordsEachCallUnderItsProductsAndTokenCount) {
  std::vector<float> a(32 * 64, 0.5f), b(16 * 64, 0.25f), x(3 * 64, 1.0f), ya(3 * 32), yb(3 * 16);
  const Matrix wa{DType::F32, 32, 64, a.data()}, wb{DType::F32, 16, 64, b.data()};
  const MatmulProduct products[] = {{&wa, ya.data()}, {&wb, yb.data()}};

  take_product_timings();
  matmul_many(products, x.data(), 1);
  EXPECT_TRUE(take_product_timings().empty()) << "profiling is off by default";

  const ProfilingOn on;
  matmul_many(products, x.data(), 1);
  matmul_many(products, x.data(), 1);
  matmul_many(products, x.data(), 3);
  matmul_many({products, 1}, x.data(), 3);
  std::vector<ProductTiming> timings = take_product_timings();
  ASSERT_EQ(timings.size(), 3u);
  std::sort(timings.begin(), timings.end(), [](const ProductTiming& l, const ProductTiming& r) {
    return std::tie(l.products, l.n_tokens) < std::tie(r.products, r.n_tokens);
  });
  EXPECT_EQ(timings[0].products, "32x64 F32");
  EXPECT_EQ(timings[0].calls, 1);
  EXPECT_EQ(timings[1].products, "32x64 F32 + 16x64 F32");
  EXPECT_EQ(timings[1].n_tokens, 1);
  EXPECT_EQ(timings[1].calls, 2);
  EXPECT_DOUBLE_EQ(timings[1].weight_bytes, 2.0 * (32 + 16) * 64 * 4);
  EXPECT_EQ(timings[2].n_tokens, 3);
  EXPECT_EQ(timings[2].calls, 1);
  for (const ProductTiming& t : timings) EXPECT_GT(t.seconds, 0);
  EXPECT_TRUE(take_product_timings().empty()) << "a take empties the record";
}

}  // namespace
}  // namespace skiff

// The int8 form of cached K/V rows on every ISA: one fp16 scale per group of
// 32 (or per row for other head sizes), values within half a step.
#include "kernels/attention/kv_row.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/fp16.h"
#include "kernels/isa.h"

namespace skiff {
namespace {

TEST(KvRow, Q8RowsWithinHalfAStepEveryIsa) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int head_dim : {32, 64, 128, 40, 80}) {
    std::vector<float> x(head_dim);
    for (float& v : x) v = normal(rng);
    const int group = kv_q8_group(head_dim);
    EXPECT_EQ(group, head_dim % 32 == 0 ? 32 : head_dim);
    std::vector<uint8_t> first;
    testing::for_each_isa([&](Isa isa) {
      std::vector<uint8_t> row(kv_q8_row_bytes(head_dim) + 1, 0xEE);
      quantize_kv_q8_row(x.data(), head_dim, row.data());
      EXPECT_EQ(row.back(), 0xEE) << "wrote past the row";
      row.pop_back();
      for (int g = 0; g < head_dim / group; ++g) {
        const uint8_t* block = row.data() + g * (2 + group);
        float amax = 0;
        for (int i = 0; i < group; ++i) amax = std::max(amax, std::fabs(x[g * group + i]));
        uint16_t half;
        std::memcpy(&half, block, 2);
        ASSERT_EQ(half, f32_to_fp16(amax / 127)) << isa_name(isa) << " head_dim " << head_dim;
        const double step = amax / 127.0;
        for (int i = 0; i < group; ++i) {
          const int q = static_cast<int8_t>(block[2 + i]);
          ASSERT_LE(std::abs(q * step - x[g * group + i]), 0.5 * step * (1 + 1e-5))
              << isa_name(isa) << " head_dim " << head_dim << " element " << g * group + i;
        }
      }
      if (first.empty()) first = row;
      EXPECT_EQ(row, first) << isa_name(isa) << ": ISAs disagree";
    });
  }
}

}  // namespace
}  // namespace skiff

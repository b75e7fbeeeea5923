#include "base/huge_page_buffer.h"

#include <gtest/gtest.h>

#include <utility>

namespace skiff {
namespace {

TEST(HugePageBuffer, AlignedZeroedAndMovable) {
  HugePageBuffer a(3 << 20);
  ASSERT_NE(a.data(), nullptr);
  EXPECT_EQ(a.size(), 3u << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % (2u << 20), 0u);
  for (size_t i = 0; i < a.size(); i += 4096) ASSERT_EQ(a.data()[i], 0) << i;
  a.data()[a.size() - 1] = 7;
  HugePageBuffer b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(b.data()[b.size() - 1], 7);
  HugePageBuffer empty(0);
  EXPECT_EQ(empty.data(), nullptr);
}

}  // namespace
}  // namespace skiff

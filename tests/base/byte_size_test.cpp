#include "base/byte_size.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace skiff {
namespace {

TEST(ByteSize, ParsesUnitsAndPercent) {
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("512M"), 512u << 20);
  EXPECT_EQ(parse_byte_size("2g"), size_t{2} << 30);
  EXPECT_EQ(parse_byte_size("1.5GiB"), size_t{3} << 29);
  EXPECT_EQ(parse_byte_size("64kb"), 65536u);
  const size_t avail = available_memory_bytes();
  ASSERT_GT(avail, 0u);
  EXPECT_NEAR(static_cast<double>(parse_byte_size("50%")), avail / 2.0, avail * 0.05);
}

TEST(ByteSize, RejectsNonsense) {
  for (const char* bad : {"", "abc", "-5M", "0", "12X", "200%", "nan", "1e400"})
    EXPECT_THROW(parse_byte_size(bad), Error) << bad;
}

}  // namespace
}  // namespace skiff

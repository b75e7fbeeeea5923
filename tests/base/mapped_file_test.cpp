#include "base/mapped_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace skiff {
namespace {

TEST(MappedFile, CopyAndMmapHoldTheSameBytes) {
  const std::string path = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";
  MappedFile mapped(path, FileLoad::kMmap), copied(path, FileLoad::kCopy);
  ASSERT_EQ(mapped.size(), copied.size());
  ASSERT_GT(mapped.size(), 1000000u);
  EXPECT_EQ(std::memcmp(mapped.data(), copied.data(), mapped.size()), 0);
  // Copies start on a huge-page boundary, so tensor alignment within the file is kept.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copied.data()) % (2u << 20), 0u);
}

TEST(MappedFile, EmptyFileAndMissingFile) {
  const std::string empty = testing::TempDir() + "/empty.bin";
  std::ofstream(empty).close();
  for (FileLoad mode : {FileLoad::kMmap, FileLoad::kCopy}) {
    MappedFile f(empty, mode);
    EXPECT_EQ(f.size(), 0u);
    EXPECT_THROW(MappedFile("/nonexistent/file", mode), Error);
    EXPECT_THROW(MappedFile(testing::TempDir(), mode), Error);  // a directory
  }
}

// A file larger than the memory available is refused before any of it is
// read, with both sizes; mapping it is fine (a sparse 1 TiB file).
TEST(MappedFile, ACopyLargerThanMemoryIsRefusedBeforeReading) {
  const std::string path = testing::TempDir() + "/huge_sparse.bin";
  std::ofstream(path).close();
  std::filesystem::resize_file(path, uint64_t{1} << 40);
  try {
    MappedFile copy(path, FileLoad::kCopy);
    ADD_FAILURE() << "a 1 TiB copy was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GiB is available"), std::string::npos) << e.what();
  }
  EXPECT_EQ(MappedFile(path, FileLoad::kMmap).size(), uint64_t{1} << 40);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace skiff

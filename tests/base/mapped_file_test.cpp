#include "base/mapped_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
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

// Released pages of a copy read as zeros (the memory went back); of a mapping
// as the file's bytes again. Only whole pages inside the range go; a range
// outside the file is an Error.
TEST(MappedFile, ReleasedPagesGoBack) {
  const std::string path = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (FileLoad mode : {FileLoad::kMmap, FileLoad::kCopy}) {
    MappedFile f(path, mode), reference(path, FileLoad::kMmap);
    const uint8_t* begin = f.data() + 3 * page + 1;  // pages 4 and 5 lie whole inside [begin, begin + 3 pages)
    f.release(begin, 3 * page);
    const uint8_t* want = reference.data();
    EXPECT_EQ(std::memcmp(f.data(), want, 4 * page), 0);  // the page the range starts in stays
    EXPECT_EQ(std::memcmp(f.data() + 6 * page, want + 6 * page, page), 0);  // so does the one it ends in
    if (mode == FileLoad::kCopy)
      EXPECT_EQ(std::count(f.data() + 4 * page, f.data() + 6 * page, 0), static_cast<ptrdiff_t>(2 * page));
    else
      EXPECT_EQ(std::memcmp(f.data() + 4 * page, want + 4 * page, 2 * page), 0);
    EXPECT_THROW(f.release(f.data() + f.size() - page, 2 * page), Error);
  }
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

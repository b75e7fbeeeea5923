// Helpers for GGUF tests: temporary files and byte patching.
#pragma once
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace skiff::gguf::testing {

// A file under the test temp dir, removed when this goes out of scope.
class TempFile {
 public:
  TempFile() {
    static std::atomic<int> counter{0};
    path_ = ::testing::TempDir() + "skiff_gguf_" + std::to_string(::getpid()) + "_" +
            std::to_string(counter++) + ".gguf";
  }
  explicit TempFile(const std::vector<uint8_t>& bytes) : TempFile() { write(bytes); }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const std::vector<uint8_t>& bytes) const {
    std::ofstream f(path_, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(f.good()) << path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Position of the first occurrence of `needle` in `bytes`; fails the test if absent.
inline size_t find_bytes(const std::vector<uint8_t>& bytes, const std::string& needle) {
  for (size_t i = 0; i + needle.size() <= bytes.size(); ++i)
    if (std::memcmp(bytes.data() + i, needle.data(), needle.size()) == 0) return i;
  ADD_FAILURE() << "'" << needle << "' not found";
  return 0;
}

template <typename T>
void patch(std::vector<uint8_t>& bytes, size_t pos, T v) {
  ASSERT_LE(pos + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + pos, &v, sizeof(T));
}

}  // namespace skiff::gguf::testing

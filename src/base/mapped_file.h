// A whole file in memory, read-only: either memory-mapped (fast start, pages
// faulted in from the page cache on first touch) or read into anonymous memory
// backed by transparent huge pages (slower start, but decode streams weights
// without 4 KiB page-table overhead). Weights are used in place from it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/huge_page_buffer.h"

namespace skiff {

enum class FileLoad {
  kMmap,  // map the file
  kCopy,  // read it into anonymous, huge-page memory
};

class MappedFile {
 public:
  explicit MappedFile(const std::string& path, FileLoad mode = FileLoad::kMmap);  // throws Error
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  // Read into memory (FileLoad::kCopy), the bytes are read-only until
  // unseal() makes them writable and returns them (null for a mapping), so the
  // model loader can rewrite its private copy into kernel layouts; seal()
  // makes them read-only again.
  uint8_t* unseal();
  void seal();
  bool unsealed() const { return unsealed_; }
  // Gives the memory of the whole pages within [begin, begin + n) back to the
  // system: bytes the loader has copied elsewhere and nothing reads again
  // (a checkpoint's MXFP4 blocks, once repacked). Read afterwards, they are
  // zeros (kCopy) or the file's again (kMmap).
  void release(const uint8_t* begin, size_t n) const;
  bool in_memory() const { return copy_.data() != nullptr; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void read_into_anonymous_memory(int fd);

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // FileLoad::kMmap: what to munmap
  HugePageBuffer copy_;      // FileLoad::kCopy: the file's bytes
  bool unsealed_ = false;
};

}  // namespace skiff

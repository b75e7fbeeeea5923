// Anonymous memory for large arrays that are streamed (weights, the KV pool,
// benchmark arrays): 2 MiB-aligned and advised onto transparent huge pages,
// which on this kind of VM reads markedly faster than 4 KiB pages. Zero-filled
// by the kernel on first touch.
#pragma once
#include <cstddef>
#include <cstdint>

namespace skiff {

class HugePageBuffer {
 public:
  HugePageBuffer() = default;
  explicit HugePageBuffer(size_t bytes);  // throws Error when it cannot be had
  ~HugePageBuffer();
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;

  // Makes the kernel back every page now (and zero it), so the first writes
  // of a serving engine do not stall on page faults.
  void prefault();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* region_ = nullptr;  // what to munmap: the data plus alignment slack
  size_t region_size_ = 0;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace skiff

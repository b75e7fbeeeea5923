#include "base/huge_page_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/byte_size.h"
#include "base/error.h"

namespace skiff {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

HugePageBuffer::HugePageBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  // Over-allocate so the data can start on a 2 MiB boundary: huge pages need it.
  region_size_ = bytes + kHugePage;
  void* region = ::mmap(nullptr, region_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED)
    fail("cannot allocate {:.2f} GiB ({:.2f} GiB of memory available): {}", bytes / 1073741824.0,
         available_memory_bytes() / 1073741824.0, std::strerror(errno));
  region_ = region;
  const auto base = reinterpret_cast<uintptr_t>(region);
  data_ = reinterpret_cast<uint8_t*>((base + kHugePage - 1) & ~(kHugePage - 1));
  ::madvise(data_, bytes, MADV_HUGEPAGE);  // best effort: THP may be off
}

void HugePageBuffer::prefault() {
  constexpr size_t kPage = 4096;
  // One write per page faults it in, a whole huge page where THP is on;
  // both threads take part, as the kernel zeroes what each faults.
#pragma omp parallel for schedule(static)
  for (size_t offset = 0; offset < size_; offset += kPage) data_[offset] = 0;
}

HugePageBuffer::~HugePageBuffer() {
  if (region_) ::munmap(region_, region_size_);
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : region_(std::exchange(other.region_, nullptr)),
      region_size_(std::exchange(other.region_size_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    if (region_) ::munmap(region_, region_size_);
    region_ = std::exchange(other.region_, nullptr);
    region_size_ = std::exchange(other.region_size_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace skiff

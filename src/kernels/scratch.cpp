#include "kernels/scratch.h"

#include <cstdlib>
#include <new>

namespace skiff {
namespace {

// Freed at thread exit. Sizes round up to 64 KiB so small growth steps do not
// reallocate on every call.
struct ScratchBuffer {
  void* data = nullptr;
  size_t size = 0;
  ~ScratchBuffer() { std::free(data); }
};

}  // namespace

void* kernel_scratch(size_t bytes) {
  thread_local ScratchBuffer buf;
  if (bytes > buf.size) {
    const size_t size = (bytes + 65535) & ~size_t{65535};
    void* p = std::aligned_alloc(64, size);
    if (!p) throw std::bad_alloc();
    std::free(buf.data);
    buf.data = p;
    buf.size = size;
  }
  return buf.data;
}

}  // namespace skiff

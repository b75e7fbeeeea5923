// Per-thread scratch memory for kernels. A plain function (no templates) so the
// *_avx2.cpp / *_avx512.cpp files can use it without instantiating STL code.
#pragma once
#include <cstddef>

namespace skiff {

// A 64-byte-aligned buffer of at least `bytes` bytes, owned by the calling
// thread and reused across calls (it only grows). The contents are not kept
// when it grows, and the pointer is valid until this thread's next call.
void* kernel_scratch(size_t bytes);

}  // namespace skiff

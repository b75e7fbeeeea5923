// GCC 12's AVX-512 headers trip -Wuninitialized and -Wmaybe-uninitialized on
// their own _mm512_undefined_* placeholders (GCC bug 105593), once per inlined
// intrinsic; nothing in the kernels is uninitialized. The AVX-512 files
// include this after <immintrin.h>; the pragmas hold to the end of the file.
// Clang has no -Wmaybe-uninitialized (it would warn that the group is unknown).
#pragma once

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

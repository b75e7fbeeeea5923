// Peak FMA throughput loops, one per instruction set: fma_peak_avx512.cpp,
// fma_peak_avx2.cpp and the portable fma_peak_scalar.cpp. Plain declarations,
// no STL, because the ISA files include this header (see CMakeLists.txt).
#pragma once
#include <cstdint>

namespace skiff::bench {

// Each runs `iterations` rounds of independent multiply-add chains on one
// thread (enough chains to cover FMA latency × FMA ports), returns the float
// operations done (2 per lane per multiply-add) and stores a checksum in *sink
// so the compiler cannot drop the loop.
double fma_loop_scalar(int64_t iterations, float* sink);
double fma_loop_avx2(int64_t iterations, float* sink);
double fma_loop_avx512(int64_t iterations, float* sink);

}  // namespace skiff::bench

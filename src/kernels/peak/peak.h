// Loops that measure what one core can compute, one per instruction set: the
// limits `skiff bench` holds prefill against. Float multiply-adds for float
// weights; int8 dot products, as the integer kernels multiply quantized
// weights by int8 activations, for the quantized types. Plain declarations, no
// STL, because the ISA files include this header (CMakeLists.txt).
#pragma once
#include <cstdint>

namespace skiff {

// Each runs `iterations` rounds of independent chains on one thread (enough to
// cover the instruction's latency × its ports), returns the operations done (2
// per multiply-add, float or int8) and stores a checksum in *sink so that the
// compiler cannot drop the loop.
using PeakLoop = double (*)(int64_t iterations, float* sink);

double fma_loop_scalar(int64_t iterations, float* sink);  // portable (the compiler may use SSE2)
double fma_loop_avx2(int64_t iterations, float* sink);
double fma_loop_avx512(int64_t iterations, float* sink);
// u8 × s8 products summed four at a time: AVX2's vpmaddubsw (pairs into int16,
// accumulated in int16 as the AVX2 kernels do between widenings), AVX-512
// VNNI's vpdpbusd (fours into int32). The scalar kernels have no integer path:
// their quantized products are float work, held against fma_loop_scalar.
double int8_dot_loop_avx2(int64_t iterations, float* sink);
double int8_dot_loop_avx512(int64_t iterations, float* sink);

}  // namespace skiff

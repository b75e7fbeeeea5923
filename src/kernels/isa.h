// Run-time choice of SIMD instruction set. The binary is built for baseline
// x86-64; kernels for wider ISAs live in *_avx2.cpp / *_avx512.cpp files and
// are called only when the CPU has those instructions.
#pragma once
#include <optional>
#include <string_view>

namespace skiff {

enum class Isa {
  kScalar = 0,  // portable C++ (the reference every kernel is tested against)
  kAvx2 = 1,    // AVX2 + FMA + F16C
  kAvx512 = 2,  // AVX-512 F/BW/VL/DQ + VNNI + BF16
};

const char* isa_name(Isa isa);
std::optional<Isa> isa_from_name(std::string_view name);
bool isa_supported(Isa isa);
// The ISA kernels use: the best the CPU supports, or SKIFF_ISA=scalar|avx2|avx512
// from the environment (Error if the CPU lacks it).
Isa active_isa();
// Forces a path (tests and benchmarks); throws Error when unsupported.
void set_active_isa(Isa isa);

}  // namespace skiff

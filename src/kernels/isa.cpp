#include "kernels/isa.h"

#include <cpuid.h>

#include <cstdlib>

#include "base/error.h"

namespace skiff {
namespace {

// CPUID leaf 1, ECX bit 29: clang 14's __builtin_cpu_supports has no "f16c".
bool cpu_has_f16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}

bool cpu_has(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             cpu_has_f16c();
    case Isa::kAvx512:
#ifdef SKIFF_AVX512_EMULATED  // the emulated kernel tests (tests/avx512_emulation): SIMDe on AVX2
      return cpu_has(Isa::kAvx2);
#else
      return cpu_has(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni") &&
             __builtin_cpu_supports("avx512bf16");
#endif
  }
  return false;
}

Isa initial_isa() {
  if (const char* forced = std::getenv("SKIFF_ISA")) {
    const auto isa = isa_from_name(forced);
    if (!isa) fail("SKIFF_ISA={} is not one of scalar, avx2, avx512", forced);
    if (!cpu_has(*isa)) fail("SKIFF_ISA={}: this CPU does not support it", forced);
    return *isa;
  }
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2})
    if (cpu_has(isa)) return isa;
  return Isa::kScalar;
}

Isa& current() {
  static Isa isa = initial_isa();
  return isa;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

std::optional<Isa> isa_from_name(std::string_view name) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512})
    if (name == isa_name(isa)) return isa;
  return std::nullopt;
}

// Asked once per ISA: CPUID traps to the hypervisor in a VM (microseconds),
// and callers may ask per call.
bool isa_supported(Isa isa) {
  static const bool supported[] = {cpu_has(Isa::kScalar), cpu_has(Isa::kAvx2), cpu_has(Isa::kAvx512)};
  return supported[static_cast<int>(isa)];
}

Isa active_isa() { return current(); }

void set_active_isa(Isa isa) {
  if (!cpu_has(isa)) fail("this CPU does not support {}", isa_name(isa));
  current() = isa;
}

}  // namespace skiff

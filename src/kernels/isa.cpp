#include "kernels/isa.h"

#include <cstdlib>

#include "base/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/x86/cpu_features.h"
#define SKIFF_X86 1
#endif

namespace skiff {
namespace {

// Each ISA family's detection lives in its folder (kernels/x86/); a CPU of
// another family runs the scalar kernels.
bool cpu_has(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return true;
#if defined(SKIFF_X86)
    case Isa::kAvx2:
      return cpu_has_avx2_fma_f16c();
    case Isa::kAvx512:
#ifdef SKIFF_AVX512_EMULATED  // the emulated kernel tests (tests/avx512_emulation): SIMDe on AVX2
      return cpu_has_avx2_fma_f16c();
#else
      return cpu_has_avx2_fma_f16c() && cpu_has_avx512_vnni_bf16();
#endif
#else
    case Isa::kAvx2:
    case Isa::kAvx512:
      return false;
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

// Test helper: runs a check on every instruction set this CPU supports
// (scalar, AVX2, AVX-512), each forced in turn, and restores the active one
// afterwards — also when an assertion fails. Stops at the first fatal failure.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "kernels/isa.h"

namespace skiff::testing {

class IsaGuard {
 public:
  IsaGuard() : saved_(active_isa()) {}
  ~IsaGuard() { set_active_isa(saved_); }
  IsaGuard(const IsaGuard&) = delete;
  IsaGuard& operator=(const IsaGuard&) = delete;

 private:
  Isa saved_;
};

// The ISAs of `isas` this CPU runs. Dispatch tests ask only these: a kernel
// selector lives in its ISA's file, compiled for that ISA, so even calling it
// may execute that ISA's instructions.
inline std::vector<Isa> supported_isas(std::initializer_list<Isa> isas = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
  std::vector<Isa> out;
  for (Isa isa : isas)
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

template <typename F>
void for_each_isa(F&& check) {
  IsaGuard guard;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    set_active_isa(isa);
    check(isa);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace skiff::testing

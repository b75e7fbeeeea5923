// The body of the x86 int8 peak loops (kernels/peak/peak.h): kChains
// independent chains a[j] = step(a[j]), `iterations` times, folded by `add`
// at the end. Each ISA file instantiates it with its own lambdas, types of no
// linkage, so every copy is its file's own, compiled with its flags.
#pragma once
#include <cstdint>

namespace skiff {

template <int kChains, class V, class Init, class Step, class Add>
[[gnu::always_inline]] inline V run_chains(int64_t iterations, Init init, Step step, Add add) {
  V a[kChains];
#pragma GCC unroll 16
  for (int j = 0; j < kChains; ++j) a[j] = init(j);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) a[j] = step(a[j]);
  }
  V sum = a[0];
#pragma GCC unroll 16
  for (int j = 1; j < kChains; ++j) sum = add(sum, a[j]);
  return sum;
}

}  // namespace skiff

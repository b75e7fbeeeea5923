// Per-token loops of the forward pass (norms, RoPE, KV writes, elementwise
// ops) spread over the OpenMP threads, which otherwise spin while one thread
// does them between the parallel matmuls.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>

namespace skiff {

// Below this many floats of work a loop runs serially: waking the threads
// costs more than it saves.
inline constexpr int64_t kParallelMinFloats = int64_t{1} << 13;

// Calls fn(t) for t in [0, n_tokens), over the threads (contiguous ranges)
// when n_tokens × floats_per_token is worth it. fn(t) must touch no state
// another token's call touches. An exception fn throws is rethrown here
// (one escaping a parallel region would terminate the program).
template <typename F>
void for_each_token(int n_tokens, int64_t floats_per_token, F&& fn) {
  std::exception_ptr error;
#pragma omp parallel for schedule(static) if (n_tokens * floats_per_token >= kParallelMinFloats)
  for (int t = 0; t < n_tokens; ++t) {
    try {
      fn(t);
    } catch (...) {
#pragma omp critical(skiff_for_each_token_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// Calls fn(begin, end) on one contiguous range of [0, n) per thread (bounds on
// multiples of 64 floats), for elementwise work over all tokens at once: split by
// tokens, 5 tokens on 2 threads leave one thread idle a third of the time. fn must not throw.
template <typename F>
void for_each_range(int64_t n, F&& fn) {
#pragma omp parallel if (n >= kParallelMinFloats)
  {
    const int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t units = (n + 63) / 64;
    const int64_t begin = std::min(n, units * id / nt * 64), end = std::min(n, units * (id + 1) / nt * 64);
    if (begin < end) fn(begin, end);
  }
}

}  // namespace skiff

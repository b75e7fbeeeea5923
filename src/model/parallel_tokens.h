// Per-token loops of the forward pass (norms, RoPE, KV writes, elementwise
// ops) spread over the OpenMP threads, which otherwise spin while one thread
// does them between the parallel matmuls.
#pragma once
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

}  // namespace skiff

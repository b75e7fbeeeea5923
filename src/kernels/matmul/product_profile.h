// Optional timing of every matmul_many call (`skiff bench --profile`): per set
// of products (their shapes and types) and token count, the calls, the weight
// bytes and the wall time. It shows which products of a decode step stream
// below the machine's bandwidth (the short ones of a small model: their fixed
// costs and cold starts), which a whole step's tokens per second cannot.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul/routed_product.h"

namespace skiff {

struct ProductTiming {
  std::string products;  // "896x896 Q5_0 + 128x896 Q5_0 + 128x896 Q8_0" (rows x cols)
  int n_tokens = 0;
  int64_t calls = 0;
  double weight_bytes = 0;  // of all calls
  double seconds = 0;       // of all calls
};

namespace detail {
extern std::atomic<bool> product_profiling_on;
}

// Off by default; on, each matmul_many call is timed and recorded (a mutex
// per call: for profiling runs only).
void set_product_profiling(bool on);
inline bool product_profiling() { return detail::product_profiling_on.load(std::memory_order_relaxed); }
void record_product_call(std::span<const RoutedProduct> products, int n_tokens, double seconds);

// What was recorded since the last call, most total time first.
std::vector<ProductTiming> take_product_timings();

}  // namespace skiff

#include "kernels/matmul/product_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "kernels/dtype.h"

namespace skiff {
namespace detail {
std::atomic<bool> product_profiling_on{false};
}

namespace {

// Calls are told apart by their first matrix, number of products and token
// count (q/k/v always come together), so a call costs no formatting.
using CallKey = std::tuple<const Matrix*, size_t, int>;

struct Recorded {
  std::mutex mutex;
  std::map<CallKey, ProductTiming> timings;
};

std::string names_of(std::span<const RoutedProduct> products) {
  std::string names;
  for (const RoutedProduct& p : products) {
    if (!names.empty()) names += " + ";
    names += fmt::format("{}x{} {}", p.w->rows, p.w->cols, dtype_info(p.w->type).name);
  }
  return names;
}

Recorded& recorded() {
  static Recorded r;
  return r;
}

}  // namespace

void set_product_profiling(bool on) { detail::product_profiling_on.store(on, std::memory_order_relaxed); }

void record_product_call(std::span<const RoutedProduct> products, int n_tokens, double seconds) {
  double bytes = 0;
  for (const RoutedProduct& p : products)
    bytes += static_cast<double>(row_bytes(p.w->type, p.w->cols)) * static_cast<double>(p.w->rows);
  Recorded& r = recorded();
  const std::lock_guard<std::mutex> lock(r.mutex);
  ProductTiming& t = r.timings[{products[0].w, products.size(), n_tokens}];
  if (t.calls == 0) {
    t.products = names_of(products);
    t.n_tokens = n_tokens;
  }
  ++t.calls;
  t.weight_bytes += bytes;
  t.seconds += seconds;
}

std::vector<ProductTiming> take_product_timings() {
  Recorded& r = recorded();
  std::map<std::pair<std::string, int>, ProductTiming> by_name;  // every layer's together
  {
    const std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& [key, timing] : r.timings) {
      ProductTiming& t = by_name[{timing.products, timing.n_tokens}];
      t.products = timing.products;
      t.n_tokens = timing.n_tokens;
      t.calls += timing.calls;
      t.weight_bytes += timing.weight_bytes;
      t.seconds += timing.seconds;
    }
    r.timings.clear();
  }
  std::vector<ProductTiming> out;
  for (auto& [key, timing] : by_name) out.push_back(std::move(timing));
  std::sort(out.begin(), out.end(), [](const ProductTiming& a, const ProductTiming& b) { return a.seconds > b.seconds; });
  return out;
}

}  // namespace skiff

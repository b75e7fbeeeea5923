// What listing the prefix cache costs the engine thread, which lists it after
// each step that changed the cache (ServingEngine, for GET /kv/prefix_blocks):
// BlockPool::cached_hashes at the server's cap of 16384 hashes, over pools of
// 4K to 256K blocks whose every block is cached, all in use or all evictable,
// against copying as many hashes out of a vector (the floor of any listing).
//
//   bench_prefix_listing [REPS]   (default 200; each figure is the median call)
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "base/timer.h"
#include "kv/block_pool.h"

namespace {

constexpr size_t kListed = 16384;  // ServingEngine::kMaxListedBlocks

template <typename Fn>
double median_us(int reps, Fn&& fn) {
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    skiff::Timer timer;
    fn();
    times.push_back(timer.seconds() * 1e6);
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[reps / 2];
}

// A pool whose every block is registered; released (evictable, in a shuffled
// release order, as requests end) or still held.
skiff::BlockPool cached_pool(int n_blocks, bool evictable) {
  skiff::BlockPool pool(n_blocks);
  for (int block = 0; block < n_blocks; ++block) {
    pool.allocate();
    pool.register_block(block, 0x9e3779b97f4a7c15ULL * (block + 1));
  }
  if (evictable)
    for (int i = 0; i < n_blocks; ++i) pool.release(static_cast<int>((int64_t{i} * 7919) % n_blocks));
  return pool;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  std::vector<uint64_t> source(kListed, 42);
  uint64_t sink = 0;
  const double copy_us = median_us(reps, [&] {
    std::vector<uint64_t> copy(source.begin(), source.end());
    sink += copy.back();
  });
  fmt::print("copying {} hashes: {:.1f} us\n", kListed, copy_us);
  fmt::print("{:>8} {:>10} {:>12} {:>8}\n", "blocks", "cached", "listing us", "x copy");
  for (int n_blocks : {4096, 16384, 65536, 262144}) {
    for (bool evictable : {false, true}) {
      const skiff::BlockPool pool = cached_pool(n_blocks, evictable);
      const double us = median_us(reps, [&] { sink += pool.cached_hashes(kListed).size(); });
      fmt::print("{:>8} {:>10} {:>12.1f} {:>8.2f}\n", n_blocks, evictable ? "evictable" : "in use", us,
                 us / copy_us);
    }
  }
  return sink == 0;  // keeps the work
}

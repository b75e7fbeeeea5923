// What the engine counts while it serves, for logs, benchmarks and the
// server's /metrics: queue sizes, token and request counters, KV and prefix
// cache use, and latency histograms with Prometheus-style buckets.
#pragma once
#include <cstdint>
#include <vector>

namespace skiff {

class Histogram {
 public:
  // Upper bounds of the buckets, ascending; a last +inf bucket is implied.
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Observations per bucket, not cumulative [upper_bounds + 1].
  const std::vector<int64_t>& bucket_counts() const { return counts_; }
  int64_t count() const { return count_; }
  double sum() const { return sum_; }
  double mean() const { return count_ ? sum_ / count_ : 0.0; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<int64_t> counts_;
  int64_t count_ = 0;
  double sum_ = 0;
};

struct EngineMetrics {
  int requests_waiting = 0;     // queued, no completion running yet
  int requests_running = 0;     // at least one completion running
  int64_t requests_finished = 0;  // including cancelled ones
  int64_t requests_cancelled = 0;
  int64_t prompt_tokens = 0;      // of the requests whose prompt has been computed (cancelled before: none)
  int64_t generation_tokens = 0;
  int64_t jump_forward_tokens = 0;  // of generation_tokens, appended by jump-forward without sampling
  int kv_blocks_used = 0;
  int kv_blocks_total = 0;
  int64_t prefix_cache_queries = 0;  // prompt tokens looked up on admission
  int64_t prefix_cache_hits = 0;     // of them, found in the cache
  int64_t preemptions = 0;
  int64_t steps = 0;                 // forward passes
  int64_t step_tokens = 0;           // tokens through the model, all steps
  int64_t attended_positions = 0;    // Σ over those tokens of the positions each attended to
  double forward_seconds = 0;        // inside forward passes
  // Speculative decoding: drafts verified, tokens drafted and accepted, and
  // per draft position i: drafts that reached it and accepted it.
  int64_t spec_verifications = 0;
  int64_t spec_drafted_tokens = 0;
  int64_t spec_accepted_tokens = 0;
  std::vector<int64_t> spec_drafted_at;
  std::vector<int64_t> spec_accepted_at;
  Histogram time_to_first_token{{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
                                 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}};
  Histogram time_per_output_token{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15,
                                   0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}};

  double spec_acceptance_rate() const {
    return spec_drafted_tokens ? static_cast<double>(spec_accepted_tokens) / spec_drafted_tokens : 0.0;
  }
  // Drafted tokens accepted per verification (the tokens a step outputs is one more).
  double spec_mean_accepted_length() const {
    return spec_verifications ? static_cast<double>(spec_accepted_tokens) / spec_verifications : 0.0;
  }
  double prefix_cache_hit_rate() const {
    return prefix_cache_queries ? static_cast<double>(prefix_cache_hits) / prefix_cache_queries : 0.0;
  }
};

}  // namespace skiff

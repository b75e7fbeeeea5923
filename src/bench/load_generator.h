// What `skiff bench-serve` does, as `vllm bench serve`: sends a workload to a
// running server over HTTP (streaming completions, greedy, EOS ignored), at a
// Poisson request rate and/or a bounded number of requests in flight, and
// times every request: time to first token, the gaps between tokens, and the
// whole latency.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bench/throughput.h"

namespace skiff {

struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;
  std::string model;  // the "model" field; empty: none sent
  double request_rate = std::numeric_limits<double>::infinity();  // requests/s, Poisson arrivals
  int max_concurrency = 0;  // requests in flight at most (0: all at once)
  uint64_t seed = 0;        // of the arrival times
};

struct RequestTiming {
  bool ok = false;
  std::string error;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;  // from the response's usage
  double ttft = 0;            // seconds from sending to the first text
  double latency = 0;         // seconds from sending to the end
  std::vector<double> itl;    // seconds between successive text chunks
};

struct Percentiles {
  double mean = 0, median = 0, p99 = 0;
};
Percentiles percentiles(std::vector<double> values);

struct LoadResult {
  int max_concurrency = 0;
  double request_rate = 0;
  double seconds = 0;  // first request sent to last finished
  std::vector<RequestTiming> requests;

  int succeeded() const;
  int64_t prompt_tokens() const;
  int64_t output_tokens() const;
  Percentiles ttft() const;
  Percentiles tpot() const;  // (latency - ttft) / (output tokens - 1), per request
  Percentiles itl() const;
  Percentiles latency() const;
};

// on_progress(finished, total) after each request.
LoadResult run_load(const bench::Workload& workload, const LoadOptions& options,
                    const std::function<void(int, int)>& on_progress = {});

}  // namespace skiff

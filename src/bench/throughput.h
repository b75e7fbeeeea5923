// What `skiff bench-throughput` measures, as `vllm bench throughput`: a fixed
// workload of requests (random token prompts, or a dataset) with a fixed
// number of output tokens each (greedy, EOS ignored), served three ways on
// fresh engines: continuous batching (all queued at once), one request at a
// time, and static batches of max_seqs requests that each wait for their
// longest member.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/metrics.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace skiff::bench {

struct ThroughputRequest {
  std::vector<int32_t> prompt;
  int output_len = 0;  // exactly this many tokens are generated
};

struct Workload {
  std::vector<ThroughputRequest> requests;
  int64_t prompt_tokens() const;
  int64_t output_tokens() const;
  int max_total_len() const;  // the longest prompt + output
};

// Token ids a random prompt may use: those the tokenizer treats as normal
// text (not control, user-defined, unknown or unused, nor an end of
// generation); every id from 3 when the vocabulary marks none.
std::vector<int32_t> random_prompt_ids(const Tokenizer& tokenizer);

// n requests of input_len random ids each (from `ids`), output lengths
// uniform in [output_min, output_max]; the same seed gives the same workload.
Workload random_workload(int n, int input_len, int output_min, int output_max, uint64_t seed,
                         const std::vector<int32_t>& ids);

// A JSONL dataset: {"prompt": "...", "output_len": N} (encoded with BOS) or
// {"prompt_token_ids": [...], "output_len": N} per line; empty lines skipped.
// default_output_len (> 0) stands in for a missing output_len. max_requests > 0
// keeps only the first that many. Throws Error naming the file and line.
Workload load_dataset(const std::string& path, const Tokenizer& tokenizer, int default_output_len,
                      int max_requests);

enum class ServeMode { kContinuous, kOneAtATime, kStatic };
const char* serve_mode_name(ServeMode mode);  // "continuous", "one-at-a-time", "static"

struct ModeResult {
  ServeMode mode = ServeMode::kContinuous;
  int requests = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;  // counted from the requests' outputs
  double seconds = 0;         // wall time from the first request queued to the last finished
  EngineMetrics metrics;      // the engine's at the end
  std::vector<int> output_lens;  // per request, in the workload's order
  double requests_per_second() const { return seconds > 0 ? requests / seconds : 0.0; }
  double output_tokens_per_second() const { return seconds > 0 ? output_tokens / seconds : 0.0; }
  double total_tokens_per_second() const {
    return seconds > 0 ? (prompt_tokens + output_tokens) / seconds : 0.0;
  }
};

// on_progress(requests finished, requests total), at most a few times a second
// and once at the end.
using ProgressCallback = std::function<void(int done, int total)>;

// Serves the workload on a fresh Engine built with `options`, every request
// greedy with ignore_eos and max_tokens = its output length; with a
// constraint (structured outputs), max_tokens is the most it may write and
// it ends where the constraint lets it (no ignore_eos). kStatic runs groups
// of options.scheduler.max_seqs requests in order. Throws Error when a request
// does not fit (its prompt + output above max_model_len).
ModeResult serve(Model& model, const Tokenizer& tokenizer, const EngineOptions& options,
                 const Workload& workload, ServeMode mode, const ProgressCallback& on_progress = {},
                 const StructuredOutputs* constraint = nullptr);

// An untimed continuous run of the workload's first max_seqs requests, cut to
// a few output tokens, so that no timed mode pays the model's one-time costs
// (scratch growing to the largest batch, first touches of its pages).
void warm_up(Model& model, const Tokenizer& tokenizer, const EngineOptions& options,
             const Workload& workload);

// Floating-point operations of the forward passes an engine ran:
//   2 · (layer matrix parameters) · step_tokens              projections and FFN
// + 2 · vocab · dim · sampled rows                           the output head, only rows that sample
// + 4 · n_layers · q_dim · attended_positions                causal attention: Q·Kᵀ and P·V
// sampled_rows: rows the head ran for; with ignore_eos and n = 1 every
// sample is an output token, so the output tokens.
double forward_flops(const Model& model, const EngineMetrics& metrics, int64_t sampled_rows);

}  // namespace skiff::bench

// The workload flags of the two serving benchmarks (bench-throughput offline,
// bench-serve over HTTP), so that both can run the very same requests: random
// token prompts from a seed, or a JSONL dataset.
#pragma once
#include <CLI/CLI.hpp>

#include <charconv>
#include <filesystem>
#include <string>
#include <utility>

#include "base/error.h"
#include "bench/throughput.h"
#include "tokenizer/tokenizer.h"

namespace skiff::cli {

struct WorkloadFlags {
  int num_prompts = 64;
  bool num_prompts_given = false;
  int input_len = 128;
  int output_len = 128;
  std::string output_len_range;  // "A:B"
  std::string dataset;
  uint64_t seed = 0;
};

// "A:B" with 1 <= A <= B.
inline std::pair<int, int> parse_output_len_range(const std::string& text) {
  const size_t colon = text.find(':');
  auto parse = [&](std::string_view s, int& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  int a = 0, b = 0;
  if (colon == std::string::npos || !parse(std::string_view(text).substr(0, colon), a) ||
      !parse(std::string_view(text).substr(colon + 1), b))
    fail("--output-len-range {}: expected A:B, two integers", text);
  if (a < 1 || b < a) fail("--output-len-range {}: needs 1 <= A <= B", text);
  return {a, b};
}

inline void add_workload_flags(CLI::App* cmd, WorkloadFlags& f) {
  CLI::Option* num = cmd->add_option("--num-prompts", f.num_prompts,
                                     "requests (with --dataset: its first N; default all of it)")
                         ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  CLI::Option* input = cmd->add_option("--input-len", f.input_len, "random prompt tokens per request")
                           ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  CLI::Option* output = cmd->add_option("--output-len", f.output_len,
                                        "output tokens per request (with --dataset: for lines without output_len)")
                            ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  CLI::Option* range = cmd->add_option("--output-len-range", f.output_len_range,
                                       "A:B, each request's output length uniform in [A, B] (seeded)");
  range->excludes(output);
  CLI::Option* dataset = cmd->add_option("--dataset", f.dataset,
                                         "JSONL of {\"prompt\": ..., \"output_len\": N} or "
                                         "{\"prompt_token_ids\": [...], \"output_len\": N}, instead of random prompts");
  dataset->excludes(input)->excludes(range);
  cmd->add_option("--seed", f.seed, "seed of the random prompts and output lengths")->capture_default_str();
  num->each([&f](const std::string&) { f.num_prompts_given = true; });
}

// Throws Error on a bad range or a missing dataset: called before anything slow.
inline void check_workload_flags(const WorkloadFlags& f) {
  if (!f.output_len_range.empty()) parse_output_len_range(f.output_len_range);
  if (!f.dataset.empty() && !std::filesystem::is_regular_file(f.dataset)) fail("dataset not found: {}", f.dataset);
}

inline bench::Workload make_workload(const WorkloadFlags& f, const Tokenizer& tokenizer) {
  check_workload_flags(f);
  int out_min = f.output_len, out_max = f.output_len;
  if (!f.output_len_range.empty()) std::tie(out_min, out_max) = parse_output_len_range(f.output_len_range);
  if (!f.dataset.empty()) {
    return bench::load_dataset(f.dataset, tokenizer, f.output_len, f.num_prompts_given ? f.num_prompts : 0);
  }
  return bench::random_workload(f.num_prompts, f.input_len, out_min, out_max, f.seed,
                                bench::random_prompt_ids(tokenizer));
}

}  // namespace skiff::cli

// skiff bench-spec: speculative decoding against plain decoding of one greedy
// request, each k in the same run (repeated, interleaved: plain, k1, k2, ...
// then again), with acceptance and the cost of one verification pass of k+1
// tokens relative to one decode step. Progress to stderr, the table to stdout.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "bench/speculative.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/list_flags.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace skiff::cli {
namespace {

struct BenchSpecArgs {
  std::string model;
  std::string prompt = "Once upon a time";
  int n_tokens = 128;
  std::string ks = "1,2,4,8";
  int repeats = 3;
  EngineFlags engine;
};

struct Row {
  std::vector<double> tok_s;  // one per repeat
  bench::SpecResult last;
  double verify_cost = 0;     // forward of k+1 tokens / forward of 1
  double median_tok_s() const {
    std::vector<double> v = tok_s;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
};

void print_table(const std::map<int, Row>& rows, const std::string& method) {
  const double plain = rows.at(0).median_tok_s();
  const std::vector<int32_t>& plain_tokens = rows.at(0).last.tokens;
  fmt::print("| method | k | decode tok/s | speedup | acceptance | accepted/step | verify k+1 / decode | same output |\n");
  fmt::print("| ------ | -: | ----------: | ------: | ---------: | ------------: | ------------------: | ---------- |\n");
  for (const auto& [k, row] : rows) {
    const EngineMetrics& m = row.last.metrics;
    fmt::print("| {} | {} | {:.1f} | {:.2f}x | {} | {} | {} | {} |\n", k ? method : "plain", k,
               row.median_tok_s(), row.median_tok_s() / plain,
               k ? fmt::format("{:.1f}%", 100 * m.spec_acceptance_rate()) : "-",
               k ? fmt::format("{:.2f}", m.spec_mean_accepted_length()) : "-",
               k ? fmt::format("{:.2f}x", row.verify_cost) : "1.00x",
               row.last.tokens == plain_tokens ? "yes" : "NO");
  }
}

void bench_spec(const BenchSpecArgs& a) {
  const int threads = set_threads(a.engine.threads);
  EngineOptions options = engine_options(a.engine);
  const SpecMethod method = options.speculation.method;
  if (method == SpecMethod::kNone) fail("bench-spec needs --draft MODEL or --spec-method ngram|suffix");
  const std::vector<int> ks = int_list(a.ks, "--spec-k", 1);
  auto model = load_model(a.model, load_options(a.engine));
  auto tokenizer = Tokenizer::from_path(a.model);
  const auto draft = load_draft(a.engine.spec, load_options(a.engine), *model, *tokenizer);
  options.speculation.draft = draft.get();
  const std::vector<int32_t> prompt = tokenizer->encode(a.prompt, true, true);
  fmt::print(stderr, "bench-spec: {} with {}, prompt {} tokens, {} greedy tokens, threads {}\n", a.model,
             draft ? a.engine.spec.draft : spec_method_name(method), prompt.size(), a.n_tokens, threads);

  std::vector<int> configs = {0};
  configs.insert(configs.end(), ks.begin(), ks.end());
  std::map<int, Row> rows;
  for (int repeat = 0; repeat <= a.repeats; ++repeat) {  // repeat 0 warms up, untimed
    for (int k : configs) {
      EngineOptions o = options;
      o.speculation.method = k ? method : SpecMethod::kNone;
      o.speculation.k = std::max(k, 1);
      bench::SpecResult r = bench::run_greedy(*model, *tokenizer, o, prompt, a.n_tokens);
      if (repeat == 0) continue;
      fmt::print(stderr, "bench-spec: repeat {} k {}: {:.1f} tok/s\n", repeat, k, r.decode_tokens_per_second());
      rows[k].tok_s.push_back(r.decode_tokens_per_second());
      rows[k].last = std::move(r);
    }
  }
  constexpr int kForwardRepeats = 15;
  for (int k : ks) {
    const double one = bench::forward_seconds(*model, prompt, 1, kForwardRepeats);
    const double verify = bench::forward_seconds(*model, prompt, k + 1, kForwardRepeats);
    rows[k].verify_cost = verify / one;
  }
  print_table(rows, spec_method_name(method));
}

}  // namespace

void add_bench_spec_command(CLI::App& app) {
  auto args = std::make_shared<BenchSpecArgs>();
  CLI::App* cmd = app.add_subcommand("bench-spec", "speculative decoding against plain decoding, each k in one run");
  cmd->add_option("-m,--model", args->model, "target model: GGUF file or Hugging Face directory")->required();
  cmd->add_option("-p,--prompt", args->prompt, "prompt text")->capture_default_str();
  cmd->add_option("-n,--n-tokens", args->n_tokens, "greedy tokens to generate (EOS ignored)")
      ->capture_default_str()->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--spec-k", args->ks, "values of k to measure, comma-separated")->capture_default_str();
  cmd->add_option("-r,--repeats", args->repeats, "timed runs of each configuration (interleaved; the median is reported)")
      ->capture_default_str()->check(CLI::Range(1, 100));
  add_engine_flags(cmd, args->engine, true, /*with_spec_k=*/false);
  cmd->callback([args] { bench_spec(*args); });
}

}  // namespace skiff::cli

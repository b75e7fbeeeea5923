// skiff bench-serve: load on a running server over HTTP, as `vllm bench
// serve`. The workload is bench-throughput's (same flags, same seed, same
// requests), so the two compare directly. Several --max-concurrency values
// make a sweep; --plot draws its latency percentiles against load.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/workload_flags.h"
#include "bench/load_generator.h"

namespace skiff::cli {
namespace {

struct BenchServeArgs {
  LoadOptions load;
  std::string tokenizer;
  WorkloadFlags workload;
  std::vector<int> concurrencies{0};
  std::string result_file;
  std::string plot;
};

using ojson = nlohmann::ordered_json;

ojson percentiles_json(const Percentiles& p) {
  return ojson{{"mean_ms", p.mean * 1e3}, {"median_ms", p.median * 1e3}, {"p99_ms", p.p99 * 1e3}};
}

ojson result_json(const LoadResult& r) {
  const double s = r.seconds > 0 ? r.seconds : 1;
  ojson j;
  j["max_concurrency"] = r.max_concurrency;
  j["request_rate"] = std::isfinite(r.request_rate) ? ojson(r.request_rate) : ojson("inf");
  j["completed"] = r.succeeded();
  j["failed"] = static_cast<int>(r.requests.size()) - r.succeeded();
  j["duration_s"] = r.seconds;
  j["total_input_tokens"] = r.prompt_tokens();
  j["total_output_tokens"] = r.output_tokens();
  j["request_throughput"] = r.succeeded() / s;
  j["output_throughput"] = r.output_tokens() / s;
  j["total_token_throughput"] = (r.prompt_tokens() + r.output_tokens()) / s;
  j["ttft"] = percentiles_json(r.ttft());
  j["tpot"] = percentiles_json(r.tpot());
  j["itl"] = percentiles_json(r.itl());
  j["e2el"] = percentiles_json(r.latency());
  return j;
}

void print_report(const LoadResult& r) {
  const ojson j = result_json(r);
  const auto line = [](const std::string& name, const std::string& value) {
    fmt::print("{:<40} {:>10}\n", name, value);
  };
  const auto section = [&](const char* title, const char* key, const char* name) {
    fmt::print("{:-^51}\n", title);
    for (const auto& [stat, label] : {std::pair{"mean_ms", "Mean"}, {"median_ms", "Median"}, {"p99_ms", "P99"}})
      line(fmt::format("{} {} (ms):", label, name), fmt::format("{:.2f}", j[key][stat].get<double>()));
  };
  fmt::print("{:=^51}\n", " Serving Benchmark Result ");
  line("Max concurrency:", r.max_concurrency ? std::to_string(r.max_concurrency) : "all");
  line("Request rate (req/s):", std::isfinite(r.request_rate) ? fmt::format("{:.2f}", r.request_rate) : "inf");
  line("Successful requests:", std::to_string(r.succeeded()));
  line("Failed requests:", std::to_string(j["failed"].get<int>()));
  line("Benchmark duration (s):", fmt::format("{:.2f}", r.seconds));
  line("Total input tokens:", std::to_string(r.prompt_tokens()));
  line("Total generated tokens:", std::to_string(r.output_tokens()));
  line("Request throughput (req/s):", fmt::format("{:.2f}", j["request_throughput"].get<double>()));
  line("Output token throughput (tok/s):", fmt::format("{:.2f}", j["output_throughput"].get<double>()));
  line("Total token throughput (tok/s):", fmt::format("{:.2f}", j["total_token_throughput"].get<double>()));
  section(" Time to First Token ", "ttft", "TTFT");
  section(" Time per Output Token (excl. 1st token) ", "tpot", "TPOT");
  section(" Inter-token Latency ", "itl", "ITL");
  section(" End-to-end Latency ", "e2el", "E2EL");
  fmt::print("{:=^51}\n", "");
  std::fflush(stdout);
  for (const RequestTiming& t : r.requests)
    if (!t.ok) {
      fmt::print(stderr, "bench-serve: a request failed: {}\n", t.error);
      break;
    }
}

// $SKIFF_PYTHON, else the venv scripts/setup-test-env.sh makes (it has
// matplotlib), else python3.
std::string plot_python() {
  if (const char* python = std::getenv("SKIFF_PYTHON")) return python;
  const char* venv = std::getenv("SKIFF_TEST_VENV");
  const char* home = std::getenv("HOME");
  const std::string dir = venv ? venv : std::string(home ? home : "") + "/.cache/skiff/test-venv";
  if (access((dir + "/bin/python").c_str(), X_OK) == 0) return dir + "/bin/python";
  return "python3";
}

// tools/plot_bench_serve.py over the results file.
void plot(const std::string& results_path, const std::string& png) {
  const std::string script = std::string(SKIFF_SOURCE_DIR) + "/tools/plot_bench_serve.py";
  const std::string cmd = fmt::format("'{}' '{}' '{}' '{}'", plot_python(), script, results_path, png);
  if (std::system(cmd.c_str()) != 0) fail("--plot: `{}` failed (it needs matplotlib)", cmd);
  fmt::print(stderr, "bench-serve: plot written to {}\n", png);
}

void bench_serve(const BenchServeArgs& a) {
  const auto tokenizer = Tokenizer::from_path(a.tokenizer);
  const bench::Workload workload = make_workload(a.workload, *tokenizer);
  fmt::print(stderr, "bench-serve: {} requests, {} prompt + {} output tokens, to http://{}:{}\n",
             workload.requests.size(), workload.prompt_tokens(), workload.output_tokens(), a.load.host, a.load.port);
  // One untimed request first, as vllm bench serve sends: the first
  // connection and the server's first step pay one-time costs.
  // Its prompt is the first one reversed: the same length, and nothing for
  // the prefix cache to give the timed requests.
  bench::Workload warm_up{{workload.requests.front()}};
  warm_up.requests[0].output_len = std::min(warm_up.requests[0].output_len, 4);
  std::reverse(warm_up.requests[0].prompt.begin(), warm_up.requests[0].prompt.end());
  const LoadResult warm = run_load(warm_up, a.load);
  if (warm.succeeded() != 1) fail("bench-serve: the warm-up request failed: {}", warm.requests[0].error);

  ojson all = ojson::array();
  for (const int concurrency : a.concurrencies) {
    LoadOptions o = a.load;
    o.max_concurrency = concurrency;
    const bool tty = isatty(fileno(stderr));
    const LoadResult r = run_load(workload, o, [tty](int done, int total) {
      if (tty) fmt::print(stderr, "\rbench-serve: {}/{} requests\033[K{}", done, total, done == total ? "\n" : "");
    });
    print_report(r);
    all.push_back(result_json(r));
  }
  std::string results_path = a.result_file;
  if (results_path.empty() && !a.plot.empty()) results_path = a.plot + ".json";
  if (!results_path.empty()) {
    std::ofstream out(results_path);
    out << all.dump(2) << "\n";
    if (!out) fail("cannot write {}", results_path);
    fmt::print(stderr, "bench-serve: results written to {}\n", results_path);
  }
  if (!a.plot.empty()) plot(results_path, a.plot);
}

}  // namespace

void add_bench_serve_command(CLI::App& app) {
  auto args = std::make_shared<BenchServeArgs>();
  CLI::App* cmd = app.add_subcommand("bench-serve", "load a running skiff serve over HTTP and time it (like vllm bench serve)");
  cmd->add_option("--host", args->load.host, "server address")->capture_default_str();
  cmd->add_option("--port", args->load.port, "server port")->capture_default_str()->check(CLI::Range(1, 65535));
  cmd->add_option("--api-key", args->load.api_key, "sent as Authorization: Bearer KEY");
  cmd->add_option("--model", args->load.model, "the request's \"model\" (default: none sent)");
  cmd->add_option("--tokenizer", args->tokenizer, "the served model's GGUF file or HF directory (random prompts use its ids)")
      ->required();
  add_workload_flags(cmd, args->workload);
  cmd->add_option("--request-rate", args->load.request_rate, "requests per second, Poisson arrivals (default: inf, all at once)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-concurrency", args->concurrencies,
                  "requests in flight at most (0: all); several (1,8,32) run a sweep")
      ->delimiter(',')->check(CLI::Range(0, 4096));
  cmd->add_option("--result-file", args->result_file, "write every run's figures as JSON");
  cmd->add_option("--plot", args->plot, "draw TTFT/TPOT percentiles against concurrency into this PNG (needs matplotlib)");
  cmd->callback([args] { bench_serve(*args); });
}

}  // namespace skiff::cli

// skiff bench-throughput: offline serving throughput, as `vllm bench
// throughput`, of one fixed workload served three ways (continuous batching,
// one request at a time, static batches of max_seqs), each on a fresh engine,
// next to the machine's FMA peak. Progress goes to stderr, results to stdout.
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "bench/machine.h"
#include "bench/throughput.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/workload_flags.h"
#include "model/loader.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/tokenizer.h"

namespace skiff::cli {
namespace {

struct ThroughputArgs {
  std::string model;
  WorkloadFlags workload;
  std::string output = "md";
  bool continuous_only = false;
  std::string json_schema;  // set: the structured-outputs comparison instead
  EngineFlags engine;
};

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

nlohmann::ordered_json mode_json(const bench::ModeResult& r, const Model& model,
                                 const bench::MachineInfo& machine) {
  nlohmann::ordered_json j;
  j["mode"] = bench::serve_mode_name(r.mode);
  j["requests"] = r.requests;
  j["prompt_tokens"] = r.prompt_tokens;
  j["output_tokens"] = r.output_tokens;
  j["seconds"] = r.seconds;
  j["requests_per_s"] = r.requests_per_second();
  j["output_tok_s"] = r.output_tokens_per_second();
  j["total_tok_s"] = r.total_tokens_per_second();
  j["steps"] = r.metrics.steps;
  j["step_tokens"] = r.metrics.step_tokens;
  j["forward_seconds"] = r.metrics.forward_seconds;
  j["preemptions"] = r.metrics.preemptions;
  j["prefix_cache_hit_rate"] = r.metrics.prefix_cache_hit_rate();
  if (r.mode == bench::ServeMode::kContinuous) {
    const double flops = bench::forward_flops(model, r.metrics, r.output_tokens);
    const double flops_per_s = r.metrics.forward_seconds > 0 ? flops / r.metrics.forward_seconds : 0.0;
    j["forward_flops"] = flops;
    j["forward_gflops"] = flops_per_s / 1e9;
    j["peak_gflops"] = machine.peak_gflops;
    j["fma_peak_fraction"] = ratio(flops_per_s, machine.peak_gflops * 1e9);
    j["cpu_info"] = machine.cpu_model;
    j["isa"] = machine.isa;
    j["triad_gbs"] = machine.triad_gbs;
    j["plain_read_gbs"] = machine.read_gbs;
  }
  return j;
}

constexpr const char* kRowFormat = "| {:<13} | {:>8} | {:>9} | {:>10} | {:>12} | {:>12} | {:>11} |\n";

std::string markdown_header() {
  return fmt::format(fmt::runtime(kRowFormat), "mode", "requests", "wall s", "requests/s", "output tok/s",
                     "total tok/s", "preemptions") +
         "| ------------- | -------: | --------: | ---------: | -----------: | -----------: | ----------: |\n";
}

std::string markdown_row(const bench::ModeResult& r) {
  return fmt::format(fmt::runtime(kRowFormat), bench::serve_mode_name(r.mode), r.requests,
                     fmt::format("{:.3f}", r.seconds), fmt::format("{:.2f}", r.requests_per_second()),
                     fmt::format("{:.1f}", r.output_tokens_per_second()),
                     fmt::format("{:.1f}", r.total_tokens_per_second()), r.metrics.preemptions);
}

void out(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// Per-mode progress on stderr: in place on a terminal, else a line a second.
bench::ProgressCallback progress_for(const char* mode) {
  const bool tty = isatty(fileno(stderr));
  auto last = std::make_shared<Timer>();
  auto shown = std::make_shared<bool>(false);
  return [=](int done, int total) {
    const bool end = done == total;
    if (!tty && !end && *shown && last->seconds() < 1.0) return;
    last->reset();
    *shown = true;
    const std::string line = fmt::format("bench-throughput: {}: {}/{} requests", mode, done, total);
    if (tty) fmt::print(stderr, "\r{}\033[K{}", line, end ? "\n" : "");
    else fmt::print(stderr, "{}\n", line);
  };
}

// Structured outputs against free decoding: the workload continuous, every
// request held to the schema (with jump-forward, then without), then free
// with each request's output as long as its constrained one was, so the
// tokens per second compare like for like.
void bench_structured(const ThroughputArgs& a, Model& model, const Tokenizer& tokenizer, EngineOptions options,
                      const bench::Workload& workload, bool json) {
  StructuredOutputs constraint;
  constraint.json = hf::read_file(a.json_schema);
  constraint.field = "--json-schema";
  struct Run {
    const char* name;
    bench::ModeResult result;
  };
  std::vector<Run> runs;
  auto report = [&](const char* name, const bench::ModeResult& r) {
    runs.push_back({name, r});
    if (json) {
      nlohmann::ordered_json j{{"run", name}, {"requests", r.requests}, {"output_tokens", r.output_tokens},
                               {"seconds", r.seconds}, {"output_tok_s", r.output_tokens_per_second()},
                               {"steps", r.metrics.steps}, {"jump_forward_tokens", r.metrics.jump_forward_tokens}};
      out(j.dump() + "\n");
    } else {
      out(fmt::format("| {:<34} | {:>8} | {:>13} | {:>9} | {:>12} | {:>13} | {:>12} |\n", name, r.requests,
                      r.output_tokens, fmt::format("{:.3f}", r.seconds),
                      fmt::format("{:.1f}", r.output_tokens_per_second()), r.metrics.steps,
                      r.metrics.jump_forward_tokens));
    }
  };
  if (!json)
    out("| run                                | requests | output tokens |    wall s | output tok/s | forward steps | jump-forward |\n"
        "| ---------------------------------- | -------: | ------------: | --------: | -----------: | ------------: | -----------: |\n");
  options.jump_forward = true;
  report("constrained, jump-forward", bench::serve(model, tokenizer, options, workload, bench::ServeMode::kContinuous,
                                                  progress_for("constrained"), &constraint));
  options.jump_forward = false;
  report("constrained, no jump-forward", bench::serve(model, tokenizer, options, workload,
                                                     bench::ServeMode::kContinuous, progress_for("no jump-forward"),
                                                     &constraint));
  bench::Workload same = workload;
  for (size_t i = 0; i < same.requests.size(); ++i)
    same.requests[i].output_len = std::max(1, runs[1].result.output_lens[i]);
  report("free, the same output lengths", bench::serve(model, tokenizer, options, same, bench::ServeMode::kContinuous,
                                                      progress_for("free")));
  const double constrained = runs[1].result.output_tokens_per_second();
  const double free = runs[2].result.output_tokens_per_second();
  const double jumping = runs[0].result.output_tokens_per_second();
  if (json) {
    out(nlohmann::ordered_json{{"constrained_vs_free", ratio(constrained, free)},
                               {"jump_forward_gain", ratio(jumping, constrained)}}.dump() + "\n");
    return;
  }
  out(fmt::format("\nconstrained vs free (same lengths, no jump-forward): {:.3f}; jump-forward: {:.2f}x the "
                  "constrained tok/s ({} of {} tokens appended without sampling)\n",
                  ratio(constrained, free), ratio(jumping, constrained), runs[0].result.metrics.jump_forward_tokens,
                  runs[0].result.output_tokens));
}

void bench_throughput(const ThroughputArgs& a) {
  const bool json = a.output == "json";
  check_workload_flags(a.workload);
  EngineOptions options = engine_options(a.engine);
  const int threads = set_threads(a.engine.threads);

  fmt::print(stderr, "bench-throughput: loading {}\n", a.model);
  auto model = load_model(a.model, load_options(a.engine));
  auto tokenizer = Tokenizer::from_path(a.model);
  const auto draft = load_draft(a.engine.spec, load_options(a.engine), *model, *tokenizer);
  options.speculation.draft = draft.get();
  const bench::Workload workload = make_workload(a.workload, *tokenizer);
  const int max_model_len = options.max_model_len > 0 ? options.max_model_len : model->config().max_ctx;
  if (workload.max_total_len() > max_model_len)
    fail("a request needs {} tokens (prompt + output) but max_model_len is {}", workload.max_total_len(),
         max_model_len);

  fmt::print(stderr, "bench-throughput: measuring memory bandwidth and FMA peak on {} threads\n", threads);
  const bench::MachineInfo machine = bench::measure_machine(threads);
  const std::string machine_line = "machine: " + bench::machine_line(machine) + "\n";
  const std::string workload_line = fmt::format(
      "model {}: {} requests, {} prompt + {} output tokens; threads {}, max_seqs {}, max_batch_tokens {}, "
      "KV {}{}\n",
      std::filesystem::path(a.model).filename().string(), workload.requests.size(), workload.prompt_tokens(),
      workload.output_tokens(), threads, options.scheduler.max_seqs, options.scheduler.max_batch_tokens,
      kv_type_name(options.kv_type),
      options.speculation.method == SpecMethod::kNone
          ? std::string()
          : fmt::format(", speculation {} k {}", spec_method_name(options.speculation.method),
                        options.speculation.k));
  if (json) {
    std::fputs((machine_line + workload_line).c_str(), stderr);
  } else {
    out(machine_line + workload_line + "\n" + (a.json_schema.empty() ? markdown_header() : ""));
  }

  bench::warm_up(*model, *tokenizer, options, workload);
  if (!a.json_schema.empty()) return bench_structured(a, *model, *tokenizer, options, workload, json);
  std::vector<bench::ModeResult> results;
  std::vector<bench::ServeMode> modes = {bench::ServeMode::kContinuous};
  if (!a.continuous_only) modes.insert(modes.end(), {bench::ServeMode::kOneAtATime, bench::ServeMode::kStatic});
  for (const bench::ServeMode mode : modes) {
    results.push_back(bench::serve(*model, *tokenizer, options, workload, mode,
                                   progress_for(bench::serve_mode_name(mode))));
    out(json ? mode_json(results.back(), *model, machine).dump() + "\n" : markdown_row(results.back()));
  }
  if (a.continuous_only) return;

  const double continuous = results[0].output_tokens_per_second();
  const double vs_one = ratio(continuous, results[1].output_tokens_per_second());
  const double vs_static = ratio(continuous, results[2].output_tokens_per_second());
  if (json) {
    nlohmann::ordered_json j;
    j["continuous_vs_one_at_a_time"] = vs_one;
    j["continuous_vs_static"] = vs_static;
    out(j.dump() + "\n");
    return;
  }
  const bench::ModeResult& c = results[0];
  const double flops = bench::forward_flops(*model, c.metrics, c.output_tokens);
  const double flops_per_s = c.metrics.forward_seconds > 0 ? flops / c.metrics.forward_seconds : 0.0;
  out(fmt::format("\ncontinuous: {} forward passes of {:.1f} tokens on average, {:.3f} GFLOP in {:.3f} s: "
                  "{:.2f} GFLOP/s, {:.2f}% of the FMA peak\n",
                  c.metrics.steps, ratio(static_cast<double>(c.metrics.step_tokens), c.metrics.steps), flops / 1e9,
                  c.metrics.forward_seconds, flops_per_s / 1e9,
                  100 * ratio(flops_per_s, machine.peak_gflops * 1e9)));
  out(fmt::format("continuous vs one-at-a-time: {:.2f}x, vs static: {:.2f}x\n", vs_one, vs_static));
}

}  // namespace

void add_bench_throughput_command(CLI::App& app) {
  auto args = std::make_shared<ThroughputArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench-throughput",
      "offline throughput of continuous batching vs one request at a time vs static batches (like vllm bench throughput)");
  cmd->add_option("-m,--model", args->model, "GGUF file or Hugging Face directory")->required();
  add_workload_flags(cmd, args->workload);
  add_engine_flags(cmd, args->engine);
  cmd->add_option("-o,--output", args->output, "output format")
      ->capture_default_str()->check(CLI::IsMember({"md", "json"}));
  cmd->add_flag("--continuous-only", args->continuous_only,
                "run the continuous mode only (no one-at-a-time and static baselines)");
  cmd->add_option("--json-schema", args->json_schema,
                  "structured outputs: every request held to this JSON Schema (with and without jump-forward), "
                  "against free decoding of the same lengths");
  cmd->callback([args] { bench_throughput(*args); });
}

}  // namespace skiff::cli

// skiff bench: prompt-processing and token-generation speed, in the spirit of
// llama-bench, next to the machine's measured limits (memory bandwidth for
// decode, the FMA or int8 dot-product peak for prefill). Progress goes to
// stderr, results to stdout.
#include <fmt/core.h>
#include <omp.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <cstdio>
#include <thread>

#include "base/error.h"
#include "bench/machine.h"
#include "bench/report.h"
#include "bench/runner.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/list_flags.h"
#include "model/loader.h"

namespace skiff::cli {
namespace {

struct BenchArgs {
  std::string models;
  std::string n_prompt = "512";
  std::string n_gen = "128";
  std::string threads;  // empty: every hardware thread
  int reps = 5;
  std::string output = "md";
  std::string n_depth = "0";
  std::string kv_type = "f16";
  bool mmap = false;
  bool profile = false;
};

struct Plan {
  std::vector<std::string> models;
  std::vector<int> n_prompt, n_gen, threads, n_depth;
  KvType kv_type = KvType::kF16;
};

Plan make_plan(const BenchArgs& a) {
  Plan p;
  p.models = split_list(a.models, "-m");
  for (const std::string& m : p.models)
    if (!std::filesystem::exists(m)) fail("model not found: {}", m);
  p.n_prompt = int_list(a.n_prompt, "-p", 0);
  p.n_gen = int_list(a.n_gen, "-n", 0);
  p.n_depth = int_list(a.n_depth, "-d", 0);
  const auto kv_type = kv_type_from_name(a.kv_type);
  if (!kv_type) fail("--kv-type {} is not one of f32, f16, q8_0", a.kv_type);
  p.kv_type = *kv_type;
  const int all_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.threads = a.threads.empty() ? std::vector<int>{all_threads} : int_list(a.threads, "-t", 1);
  return p;
}

// The tests of one model at one thread count: for each depth, pp for each -p,
// then tg for each -n (0 skips).
std::vector<bench::TestSpec> tests_of(const Plan& p, int reps) {
  std::vector<bench::TestSpec> tests;
  for (int d : p.n_depth) {
    for (int n : p.n_prompt)
      if (n > 0) tests.push_back({bench::TestKind::kPrompt, n, reps, d, p.kv_type});
    for (int n : p.n_gen)
      if (n > 0) tests.push_back({bench::TestKind::kGeneration, n, reps, d, p.kv_type});
  }
  return tests;
}

void print_result(const bench::BenchRow& row, const bench::MachineInfo& machine, bool json) {
  const std::string text = json ? bench::json_line(row, machine) + "\n" : bench::markdown_row(row);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// The bandwidth around each timed decode repetition: best of kProbeReps passes.
constexpr int kProbeReps = 2;
constexpr size_t kProbeBytesPerArray = size_t{64} << 20;

// measure_bandwidth: the bandwidth now.
void bench_model(const std::string& path, const Plan& plan, const BenchArgs& a,
                 const bench::MachineInfo& machine, const std::function<bench::Bandwidth()>& measure_bandwidth) {
  fmt::print(stderr, "bench: loading {}\n", path);
  auto model = load_model(path, LoadOptions{a.mmap ? FileLoad::kMmap : FileLoad::kCopy});
  const bench::ModelFacts facts = bench::describe_model(path, *model);
  for (int threads : plan.threads) {
    omp_set_num_threads(threads);
    for (const bench::TestSpec& test : tests_of(plan, a.reps)) {
      bench::BenchRow row;
      row.model = facts;
      row.n_threads = threads;
      row.n_depth = test.n_depth;
      row.kv_type = kv_type_name(test.kv_type);
      row.test = test.name();
      (test.kind == bench::TestKind::kPrompt ? row.n_prompt : row.n_gen) = test.n_tokens;
      // Decode is judged against the bandwidth measured around its own
      // repetitions: before each, and after the last.
      const bool decode = test.kind == bench::TestKind::kGeneration;
      row.result = bench::run_test(*model, test, [&](int rep) {
        if (a.profile && rep == 1) take_product_timings();  // drops the warm-up's
        if (decode && rep > 0) row.bandwidths.push_back(measure_bandwidth());
        fmt::print(stderr, "bench: {} {} t={} {}\n", facts.filename, row.test, threads,
                   rep == 0 ? std::string("warm-up") : fmt::format("rep {}/{}", rep, test.reps));
      });
      if (decode) row.bandwidths.push_back(measure_bandwidth());
      row.efficiency = bench::efficiency(row, *model, machine);
      row.read_efficiency = bench::read_efficiency(row, machine);
      print_result(row, machine, a.output == "json");
      if (a.profile) std::fputs(bench::product_profile_table(row, take_product_timings()).c_str(), stderr);
    }
  }
}

void bench(const BenchArgs& a) {
  const Plan plan = make_plan(a);
  set_product_profiling(a.profile);
  if (tests_of(plan, a.reps).empty()) fail("nothing to run: every -p and -n is 0");
  const int machine_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  fmt::print(stderr, "bench: measuring memory bandwidth and the FMA and int8 peaks on {} threads\n", machine_threads);
  const bench::MachineInfo machine = bench::measure_machine(machine_threads);
  // Kept for the whole run beside the models, so smaller than the machine
  // line's arrays (3 × 64 MiB, still 6× this class of L3). A probe also
  // evicts the caches before a repetition: a model that fits in L3 starts
  // each repetition cold (one token's worth of misses). Made at the first tg
  // test: a pp-only run needs none.
  std::optional<bench::BandwidthProbe> probe;
  auto measure_bandwidth = [&] {
    if (!probe) probe.emplace(kProbeBytesPerArray, machine_threads);
    return probe->measure(kProbeReps);
  };
  const std::string line = "machine: " + bench::machine_line(machine) + "\n";
  const bool json = a.output == "json";
  // In JSON mode stdout holds only JSON lines; the machine is in every object.
  std::fputs(line.c_str(), json ? stderr : stdout);
  if (!json) std::fputs(("\n" + bench::markdown_header()).c_str(), stdout);
  for (const std::string& path : plan.models) bench_model(path, plan, a, machine, measure_bandwidth);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "measure prefill and decode speed (like llama-bench)");
  cmd->add_option("-m,--model", args->models, "model path(s), comma-separated")->required();
  cmd->add_option("-p,--n-prompt", args->n_prompt, "prompt lengths, comma-separated (0: no pp test)")
      ->capture_default_str();
  cmd->add_option("-n,--n-gen", args->n_gen, "generation lengths, comma-separated (0: no tg test)")
      ->capture_default_str();
  cmd->add_option("-t,--threads", args->threads, "thread counts, comma-separated (default: all)");
  cmd->add_option("-r,--repetitions", args->reps, "timed repetitions per test")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("-d,--n-depth", args->n_depth, "KV cache depths (tokens already cached), comma-separated")
      ->capture_default_str();
  cmd->add_option("--kv-type", args->kv_type, "KV cache element type: f16, f32, q8_0")->capture_default_str();
  cmd->add_flag("--mmap", args->mmap, kMmapHelp);
  cmd->add_flag("--profile", args->profile,
                "after each test, a table of its matrix products (time, GB/s, share) on stderr");
  cmd->add_option("-o,--output", args->output, "output format")
      ->capture_default_str()->check(CLI::IsMember({"md", "json"}));
  cmd->callback([args] { bench(*args); });
}

}  // namespace skiff::cli

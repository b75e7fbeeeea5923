// Output of `skiff bench`: llama-bench's markdown table, or one JSON object
// per line per test with llama-bench's field names plus skiff's machine and
// efficiency fields.
#pragma once
#include <string>
#include <vector>

#include "bench/machine.h"
#include "bench/runner.h"
#include "kernels/matmul/product_profile.h"

namespace skiff::bench {

struct BenchRow {
  ModelFacts model;
  int n_threads = 0;
  int n_prompt = 0;  // the test's prompt tokens (0 for tg)
  int n_gen = 0;     // the test's generated tokens (0 for pp)
  int n_depth = 0;   // tokens cached before the test
  std::string kv_type = "f16";
  std::string test;  // "pp512", "tg128"
  TestResult result;
  // tg: the bandwidths measured before each timed repetition and after the
  // last (empty: not measured; the machine's stand in).
  std::vector<Bandwidth> bandwidths;
  // tg: (weight + K/V bytes per step) × tok/s ÷ triad bandwidth, per
  // repetition against the mean of the two triads around it, then averaged;
  // pp: prefill_flops ÷ time ÷ the peak its products run at: the int8 peak
  // for quantized weights (ModelFacts::int8_products), else the FMA peak.
  double efficiency = 0;
  // tg: the same against the plain read (Bandwidth::read_gbs), decode's own limit; pp: 0.
  double read_efficiency = 0;
  double bytes_per_step() const { return model.decode_bytes_per_token + result.kv_bytes_per_step; }
  double triad_mean_gbs() const;  // 0 when none were measured
  double read_mean_gbs() const;   // 0 when none were measured
};

// The row's efficiency from its result and the machine's limits.
double efficiency(const BenchRow& row, const Model& model, const MachineInfo& machine);
// A tg row's efficiency against the plain read; 0 for pp.
double read_efficiency(const BenchRow& row, const MachineInfo& machine);

std::string markdown_header();        // two lines: column names and alignment
std::string markdown_row(const BenchRow& row);
std::string json_line(const BenchRow& row, const MachineInfo& machine);  // no newline

// `skiff bench --profile`: the row's matrix products (timed over its timed
// repetitions), most time first, each with its streaming rate and share of
// the repetitions' time, as a markdown table after a title line.
std::string product_profile_table(const BenchRow& row, const std::vector<ProductTiming>& timings);

}  // namespace skiff::bench

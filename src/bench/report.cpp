#include "bench/report.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

namespace skiff::bench {
namespace {

std::string size_label(uint64_t bytes) {
  if (bytes < (uint64_t{1} << 30)) return fmt::format("{:.2f} MiB", bytes / 1048576.0);
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

std::string params_label(uint64_t n) {
  if (n < 1'000'000'000) return fmt::format("{:.2f} M", n / 1e6);
  return fmt::format("{:.2f} B", n / 1e9);
}

constexpr const char* kRowFormat =
    "| {:<30} | {:>10} | {:>10} | {:<6} | {:>7} | {:>13} | {:>20} | {:>11} | {:>12} | {:>8} | {:>7} | {:>12} | {:>10} "
    "| {:>15} |\n";

// One of Bandwidth's figures.
using BandwidthField = double (*)(const Bandwidth&);
double triad_of(const Bandwidth& b) { return b.triad_gbs; }
double read_of(const Bandwidth& b) { return b.read_gbs; }

// A tg row's bytes per step × tok/s ÷ the bandwidth `of` picks, each
// repetition against the mean of the two samples around it (the bandwidth can
// change between repetitions), or against `machine_gbs` when they were not taken.
double decode_fraction(const BenchRow& row, BandwidthField of, double machine_gbs) {
  const std::vector<double>& ts = row.result.samples_ts;
  if (row.bandwidths.size() != ts.size() + 1) return row.bytes_per_step() * row.result.avg_ts / (machine_gbs * 1e9);
  double sum = 0;
  for (size_t i = 0; i < ts.size(); ++i)
    sum += row.bytes_per_step() * ts[i] / ((of(row.bandwidths[i]) + of(row.bandwidths[i + 1])) / 2 * 1e9);
  return sum / static_cast<double>(ts.size());
}

double mean_of(const std::vector<Bandwidth>& samples, BandwidthField of) {
  double sum = 0;
  for (const Bandwidth& b : samples) sum += of(b);
  return samples.empty() ? 0.0 : sum / static_cast<double>(samples.size());
}

std::vector<double> samples_of(const std::vector<Bandwidth>& samples, BandwidthField of) {
  std::vector<double> out;
  for (const Bandwidth& b : samples) out.push_back(of(b));
  return out;
}

}  // namespace

double efficiency(const BenchRow& row, const Model& model, const MachineInfo& machine) {
  if (row.n_gen > 0) return decode_fraction(row, triad_of, machine.triad_gbs);
  const double seconds_per_prompt = row.n_prompt / row.result.avg_ts;
  const double peak = row.model.int8_products ? machine.int8_peak_gops : machine.peak_gflops;
  return prefill_flops(model, row.n_prompt, row.n_depth) / seconds_per_prompt / (peak * 1e9);
}

double read_efficiency(const BenchRow& row, const MachineInfo& machine) {
  return row.n_gen > 0 ? decode_fraction(row, read_of, machine.read_gbs) : 0.0;
}

double BenchRow::triad_mean_gbs() const { return mean_of(bandwidths, triad_of); }
double BenchRow::read_mean_gbs() const { return mean_of(bandwidths, read_of); }

std::string markdown_header() {
  return fmt::format(fmt::runtime(kRowFormat), "model", "size", "params", "type", "threads", "test",
                     "t/s", "of FMA peak", "of int8 peak", "of triad", "of read", "read GB/s", "triad GB/s",
                     "plain read GB/s") +
         "| ------------------------------ | ---------: | ---------: | ------ | ------: | ------------: "
         "| -------------------: | ----------: | -----------: | -------: | ------: | -----------: | ---------: "
         "| --------------: |\n";
}

std::string markdown_row(const BenchRow& row) {
  const std::string name = std::filesystem::path(row.model.filename).filename().string();
  const bool decode = row.n_gen > 0, sampled = !row.bandwidths.empty();
  const auto percent_if = [](bool shown, double fraction) {
    return shown ? fmt::format("{:.1f}%", fraction * 100) : std::string("-");
  };
  return fmt::format(fmt::runtime(kRowFormat), name, size_label(row.model.size_bytes),
                     params_label(row.model.n_params), row.model.type_name, row.n_threads, row.test,
                     fmt::format("{:.2f} ± {:.2f}", row.result.avg_ts, row.result.stddev_ts),
                     percent_if(!decode && !row.model.int8_products, row.efficiency),
                     percent_if(!decode && row.model.int8_products, row.efficiency),
                     percent_if(decode, row.efficiency), percent_if(decode, row.read_efficiency),
                     decode ? fmt::format("{:.1f}", row.bytes_per_step() * row.result.avg_ts / 1e9) : std::string("-"),
                     sampled ? fmt::format("{:.1f}", row.triad_mean_gbs()) : std::string("-"),
                     sampled ? fmt::format("{:.1f}", row.read_mean_gbs()) : std::string("-"));
}

std::string json_line(const BenchRow& row, const MachineInfo& machine) {
  nlohmann::ordered_json j;
  j["model_filename"] = row.model.filename;
  j["model_type"] = row.model.description;
  j["model_size"] = row.model.size_bytes;
  j["model_n_params"] = row.model.n_params;
  j["cpu_info"] = machine.cpu_model;
  j["n_threads"] = row.n_threads;
  j["type_k"] = row.kv_type;
  j["type_v"] = row.kv_type;
  j["n_prompt"] = row.n_prompt;
  j["n_gen"] = row.n_gen;
  j["n_depth"] = row.n_depth;
  j["test"] = row.test;
  j["avg_ns"] = row.result.avg_ns;
  j["stddev_ns"] = row.result.stddev_ns;
  j["avg_ts"] = row.result.avg_ts;
  j["stddev_ts"] = row.result.stddev_ts;
  j["samples_ns"] = row.result.samples_ns;
  j["samples_ts"] = row.result.samples_ts;
  // skiff's own fields: the machine's limits and how close the test came to them.
  j["isa"] = machine.isa;
  j["triad_gbs"] = machine.triad_gbs;
  j["plain_read_gbs"] = machine.read_gbs;
  j["peak_gflops"] = machine.peak_gflops;
  j["int8_peak_gops"] = machine.int8_peak_gops;
  j["weight_bytes_per_token"] = row.model.decode_bytes_per_token;
  if (row.n_gen > 0) {
    j["kv_bytes_per_step"] = row.result.kv_bytes_per_step;
    j["read_gbs"] = row.bytes_per_step() * row.result.avg_ts / 1e9;
    if (!row.bandwidths.empty()) {
      j["triad_during_gbs"] = row.triad_mean_gbs();
      j["triad_samples_gbs"] = samples_of(row.bandwidths, triad_of);
      j["plain_read_during_gbs"] = row.read_mean_gbs();
      j["plain_read_samples_gbs"] = samples_of(row.bandwidths, read_of);
    }
  }
  j[row.n_gen > 0 ? "decode_efficiency" : "prefill_efficiency"] = row.efficiency;
  if (row.n_gen == 0) j["prefill_peak"] = row.model.int8_products ? "int8" : "fma";
  if (row.n_gen > 0) j["decode_efficiency_of_read"] = row.read_efficiency;
  return j.dump();
}

std::string product_profile_table(const BenchRow& row, const std::vector<ProductTiming>& timings) {
  double step_seconds = 0, product_seconds = 0;
  for (double ns : row.result.samples_ns) step_seconds += ns * 1e-9;
  for (const ProductTiming& t : timings) product_seconds += t.seconds;
  std::string out = fmt::format("\nmatrix products of {} ({} threads): {:.1f}% of its timed time\n\n", row.test,
                                row.n_threads, step_seconds > 0 ? 100 * product_seconds / step_seconds : 0.0);
  out += "| products (rows x cols) | tokens | calls | MB a call | µs a call | GB/s | share |\n";
  out += "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const ProductTiming& t : timings) {
    const double calls = static_cast<double>(t.calls);
    out += fmt::format("| {} | {} | {} | {:.3f} | {:.1f} | {:.1f} | {:.1f}% |\n", t.products, t.n_tokens, t.calls,
                       t.weight_bytes / calls / 1e6, t.seconds / calls * 1e6, t.weight_bytes / t.seconds / 1e9,
                       step_seconds > 0 ? 100 * t.seconds / step_seconds : 0.0);
  }
  return out;
}

}  // namespace skiff::bench

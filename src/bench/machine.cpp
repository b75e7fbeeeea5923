#include "bench/machine.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <set>
#include <thread>
#include <utility>

#include "base/huge_page_buffer.h"
#include "base/timer.h"
#include "kernels/isa.h"
#include "kernels/peak/peak.h"
#include "kernels/peak/read_fold.h"

namespace skiff::bench {
namespace {

constexpr size_t kTriadBytesPerArray = size_t{256} << 20;  // 3 × 256 MiB, far past any L3
constexpr int kTriadReps = 5;
constexpr int kPeakReps = 3;
constexpr double kPeakMinSeconds = 0.05;

PeakLoop fma_loop_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return fma_loop_avx512;
    case Isa::kAvx2: return fma_loop_avx2;
    case Isa::kScalar: return fma_loop_scalar;
  }
  return fma_loop_scalar;
}

// The scalar kernels multiply quantized weights in floats.
PeakLoop int8_dot_loop_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return int8_dot_loop_avx512;
    case Isa::kAvx2: return int8_dot_loop_avx2;
    case Isa::kScalar: return fma_loop_scalar;
  }
  return fma_loop_scalar;
}

// Where the peak loops' and the read's checksums go, so their work is observable.
volatile float g_peak_checksum = 0;
volatile uint64_t g_read_checksum = 0;

// Runs the loop on every thread at once; returns operations/s of the whole team.
double team_ops(PeakLoop loop, int64_t iterations, int threads) {
  double ops = 0;
  float checksum = 0;
  Timer timer;
#pragma omp parallel num_threads(threads) reduction(+ : ops, checksum)
  {
    float sink = 0;
    ops += loop(iterations, &sink);
    checksum += sink;
  }
  const double seconds = timer.seconds();
  g_peak_checksum = checksum;
  return ops / seconds;
}

}  // namespace

// Raw arrays on transparent huge pages, as the model's weights are (4 KiB
// pages cost this VM a third of its bandwidth, and vary run to run), touched
// first by the threads that use them, so pages land on their nodes.
BandwidthProbe::BandwidthProbe(size_t bytes_per_array, int threads)
    : n_(bytes_per_array / sizeof(double)),
      threads_(threads),
      a_(n_ * sizeof(double)),
      b_(n_ * sizeof(double)),
      c_(n_ * sizeof(double)) {
  double* pa = reinterpret_cast<double*>(a_.data());
  double* pb = reinterpret_cast<double*>(b_.data());
  double* pc = reinterpret_cast<double*>(c_.data());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (size_t i = 0; i < n_; ++i) {
    pa[i] = 0.0;
    pb[i] = 1.0;
    pc[i] = 2.0;
  }
}

double BandwidthProbe::triad_pass() {
  double* pa = reinterpret_cast<double*>(a_.data());
  const double* pb = reinterpret_cast<const double*>(b_.data());
  const double* pc = reinterpret_cast<const double*>(c_.data());
  const size_t n = n_;
  const double scalar = 3.0;
  Timer timer;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (size_t i = 0; i < n; ++i) pa[i] = pb[i] + scalar * pc[i];
  return 3.0 * sizeof(double) * static_cast<double>(n) / timer.seconds() / 1e9;
}

// Each thread folds its share of b and c (kernels/peak/read_fold.h).
double BandwidthProbe::read_pass() {
  const size_t n_lines = n_ * sizeof(double) / 64;
  uint64_t folded = 0;
  Timer timer;
#pragma omp parallel num_threads(threads_) reduction(^ : folded)
  {
    const size_t t = omp_get_thread_num(), n_threads = omp_get_num_threads();
    const size_t first = n_lines * t / n_threads, last = n_lines * (t + 1) / n_threads;
    folded ^= xor_fold_read(b_.data() + first * 64, c_.data() + first * 64, last - first);
  }
  const double gbs = 2.0 * 64 * static_cast<double>(n_lines) / timer.seconds() / 1e9;
  g_read_checksum = folded;
  return gbs;
}

Bandwidth BandwidthProbe::measure(int reps) {
  Bandwidth best;
  for (int r = 0; r < reps; ++r) {
    best.triad_gbs = std::max(best.triad_gbs, triad_pass());
    best.read_gbs = std::max(best.read_gbs, read_pass());
  }
  return best;
}

double measure_triad_gbs(size_t bytes_per_array, int threads, int reps) {
  return measure_bandwidth(bytes_per_array, threads, reps).triad_gbs;
}

Bandwidth measure_bandwidth(size_t bytes_per_array, int threads, int reps) {
  return BandwidthProbe(bytes_per_array, threads).measure(reps);
}

namespace {

double measure_peak(PeakLoop loop, int threads, int reps) {
  // Grow the run until it lasts long enough to time, then keep the best of reps.
  int64_t iterations = 1 << 16;
  for (;;) {
    Timer timer;
    team_ops(loop, iterations, threads);
    if (timer.seconds() >= kPeakMinSeconds) break;
    iterations *= 2;
  }
  double best = 0;
  for (int r = 0; r < reps; ++r) best = std::max(best, team_ops(loop, iterations, threads));
  return best / 1e9;
}

}  // namespace

double measure_peak_gflops(int threads, int reps) { return measure_peak(fma_loop_for(active_isa()), threads, reps); }

double measure_int8_peak_gops(int threads, int reps) {
  return measure_peak(int8_dot_loop_for(active_isa()), threads, reps);
}

MachineInfo describe_cpu() {
  MachineInfo m;
  m.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  std::string line, physical_id;
  auto value = [](const std::string& l) {
    const size_t colon = l.find(':');
    return colon == std::string::npos ? std::string() : l.substr(l.find_first_not_of(" \t", colon + 1));
  };
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 && m.cpu_model.empty()) m.cpu_model = value(line);
    if (line.rfind("physical id", 0) == 0) physical_id = value(line);
    if (line.rfind("core id", 0) == 0) cores.emplace(physical_id, value(line));
  }
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
  m.n_cores = cores.empty() ? m.n_threads : static_cast<int>(cores.size());
  m.isa = isa_name(active_isa());
  return m;
}

MachineInfo measure_machine(int threads) {
  MachineInfo m = describe_cpu();
  const Bandwidth bandwidth = measure_bandwidth(kTriadBytesPerArray, threads, kTriadReps);
  m.triad_gbs = bandwidth.triad_gbs;
  m.read_gbs = bandwidth.read_gbs;
  m.peak_gflops = measure_peak_gflops(threads, kPeakReps);
  m.int8_peak_gops = measure_int8_peak_gops(threads, kPeakReps);
  return m;
}

std::string machine_line(const MachineInfo& m) {
  return fmt::format("{} ({} cores, {} threads), ISA {}, triad {:.1f} GB/s, plain read {:.1f} GB/s, FMA peak {:.1f} "
                     "GFLOP/s, int8 peak {:.1f} GOP/s",
                     m.cpu_model, m.n_cores, m.n_threads, m.isa, m.triad_gbs, m.read_gbs, m.peak_gflops,
                     m.int8_peak_gops);
}

}  // namespace skiff::bench

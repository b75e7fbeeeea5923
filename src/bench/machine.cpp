#include "bench/machine.h"

#include <fmt/format.h>
#include <emmintrin.h>
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
#include "bench/fma_peak.h"
#include "kernels/isa.h"

namespace skiff::bench {
namespace {

constexpr size_t kTriadBytesPerArray = size_t{256} << 20;  // 3 × 256 MiB, far past any L3
constexpr int kTriadReps = 5;
constexpr int kFmaReps = 3;
constexpr double kFmaMinSeconds = 0.05;

using FmaLoop = double (*)(int64_t, float*);

FmaLoop fma_loop_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return fma_loop_avx512;
    case Isa::kAvx2: return fma_loop_avx2;
    case Isa::kScalar: return fma_loop_scalar;
  }
  return fma_loop_scalar;
}

// Where the FMA loops' and the read's checksums go, so their work is observable.
volatile float g_fma_checksum = 0;
volatile uint64_t g_read_checksum = 0;

// Runs the loop on every thread at once; returns FLOP/s of the whole team.
double fma_team_flops(FmaLoop loop, int64_t iterations, int threads) {
  double flops = 0;
  float checksum = 0;
  Timer timer;
#pragma omp parallel num_threads(threads) reduction(+ : flops, checksum)
  {
    float sink = 0;
    flops += loop(iterations, &sink);
    checksum += sink;
  }
  const double seconds = timer.seconds();
  g_fma_checksum = checksum;
  return flops / seconds;
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

// b and c read 16 bytes at a time (SSE2, every x86-64) and folded by xor into
// four registers: one-cycle operations that never hold the loads back.
double BandwidthProbe::read_pass() {
  const auto* pb = reinterpret_cast<const __m128i*>(b_.data());
  const auto* pc = reinterpret_cast<const __m128i*>(c_.data());
  const size_t n = n_ * sizeof(double) / sizeof(__m128i) / 4 * 4;  // vectors per array
  uint64_t folded = 0;
  Timer timer;
#pragma omp parallel num_threads(threads_) reduction(^ : folded)
  {
    __m128i l0 = _mm_setzero_si128(), l1 = l0, l2 = l0, l3 = l0;
    auto fold = [&](size_t i) { return _mm_xor_si128(_mm_load_si128(pb + i), _mm_load_si128(pc + i)); };
#pragma omp for schedule(static)
    for (size_t i = 0; i < n; i += 4) {
      l0 = _mm_xor_si128(l0, fold(i));
      l1 = _mm_xor_si128(l1, fold(i + 1));
      l2 = _mm_xor_si128(l2, fold(i + 2));
      l3 = _mm_xor_si128(l3, fold(i + 3));
    }
    folded ^= static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_xor_si128(_mm_xor_si128(l0, l1), _mm_xor_si128(l2, l3))));
  }
  const double gbs = 2.0 * sizeof(__m128i) * static_cast<double>(n) / timer.seconds() / 1e9;
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

double measure_peak_gflops(int threads, int reps) {
  const FmaLoop loop = fma_loop_for(active_isa());
  // Grow the run until it lasts long enough to time, then keep the best of reps.
  int64_t iterations = 1 << 16;
  for (;;) {
    Timer timer;
    fma_team_flops(loop, iterations, threads);
    if (timer.seconds() >= kFmaMinSeconds) break;
    iterations *= 2;
  }
  double best = 0;
  for (int r = 0; r < reps; ++r) best = std::max(best, fma_team_flops(loop, iterations, threads));
  return best / 1e9;
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
  m.peak_gflops = measure_peak_gflops(threads, kFmaReps);
  return m;
}

std::string machine_line(const MachineInfo& m) {
  return fmt::format("{} ({} cores, {} threads), ISA {}, triad {:.1f} GB/s, plain read {:.1f} GB/s, FMA peak {:.1f} GFLOP/s",
                     m.cpu_model, m.n_cores, m.n_threads, m.isa, m.triad_gbs, m.read_gbs, m.peak_gflops);
}

}  // namespace skiff::bench

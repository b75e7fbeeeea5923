// What the machine can do, measured once per `skiff bench` run: memory
// bandwidth (a STREAM triad, and a plain read), decode's limit, and the peak
// float FMA and int8 dot-product throughput, prefill's for float and for
// quantized weights.
#pragma once
#include <cstddef>
#include <string>

#include "base/huge_page_buffer.h"

namespace skiff::bench {

struct MachineInfo {
  std::string cpu_model;  // /proc/cpuinfo "model name"
  int n_cores = 0;        // distinct physical cores
  int n_threads = 0;      // hardware threads
  std::string isa;        // the kernels' instruction set (active_isa())
  double triad_gbs = 0;   // STREAM triad, 10^9 bytes/s
  double read_gbs = 0;    // a plain read (Bandwidth)
  double peak_gflops = 0; // float FMA, 10^9 FLOP/s
  double int8_peak_gops = 0;  // int8 dot products as the integer kernels do them, 10^9 op/s (2 per multiply-add)
};

// STREAM's triad a[i] = b[i] + s * c[i] over three arrays of doubles of
// `bytes_per_array` each (make them much larger than L3), on `threads` threads;
// the best of `reps` passes, counted as STREAM counts it: 24 bytes per element
// (write-allocate traffic on a is not counted).
double measure_triad_gbs(size_t bytes_per_array, int threads, int reps);

// Memory bandwidth two ways, 10^9 bytes/s: STREAM's triad, and a plain read
// of two of its arrays (16 bytes per element), which is all decode does. They
// part where reads and writes have limits of their own (an AMD CCD reaches
// memory over a link of 32 bytes per fabric clock for reads and 16 for
// writes); on the Zen 4 VM the read ran at or above the triad
// (figures: docs/notes/kernel-design-figures.md).
struct Bandwidth {
  double triad_gbs = 0;
  double read_gbs = 0;
};

// The triad's arrays, kept to measure the bandwidth again and again: on a
// shared VM it moves by up to 2x from one minute to the next, so `skiff bench`
// compares each decode test with the bandwidth measured around its repetitions.
class BandwidthProbe {
 public:
  BandwidthProbe(size_t bytes_per_array, int threads);  // allocates and touches the arrays
  Bandwidth measure(int reps);                          // the best of reps passes of each

 private:
  double triad_pass();
  double read_pass();

  size_t n_;  // doubles per array
  int threads_;
  HugePageBuffer a_, b_, c_;
};

// Both figures of Bandwidth on a probe of that size.
Bandwidth measure_bandwidth(size_t bytes_per_array, int threads, int reps);

// Independent FMAs on the widest vectors of the active ISA, on `threads`
// threads; the best of `reps` runs of at least about 50 ms each.
double measure_peak_gflops(int threads, int reps);
// The same for int8 dot products (kernels/peak/peak.h); on the scalar ISA,
// whose kernels have no integer path, the FMA peak.
double measure_int8_peak_gops(int threads, int reps);

// CPU model and counts from /proc/cpuinfo (counts fall back to the thread count).
MachineInfo describe_cpu();

// describe_cpu() plus the bandwidths and both peaks on `threads` threads.
MachineInfo measure_machine(int threads);

// "Intel(R) Xeon(R) Processor (2 cores, 2 threads), ISA avx512, triad 30.3 GB/s, plain read 33.9 GB/s,
// FMA peak 460.9 GFLOP/s, int8 peak 1635.0 GOP/s"
std::string machine_line(const MachineInfo& m);

}  // namespace skiff::bench

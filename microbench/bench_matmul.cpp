// Times matmul() on float weights (F32, F16, BF16) and compares it with what
// the machine can do: decode shapes (a few tokens) in GB/s of weights against
// a STREAM triad, prefill shapes in GFLOP/s against an FMA loop.
//
//   bench_matmul [--isa avx512|avx2|scalar] [--threads N] [--types f16,bf16,f32]
//                [--reps N] [--decode-only | --prefill-only]
//
// Decode matrices rotate through copies totalling well past L3, so every call
// streams its weights from memory as in a real model. Each figure is the best
// of --reps passes (others may share the machine).
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/timer.h"
#include "bench/machine.h"
#include "kernels/isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/quant/quant.h"

using namespace skiff;

namespace {

struct Options {
  std::vector<DType> types{DType::F16, DType::BF16, DType::F32};
  int threads = 0;  // 0: OpenMP's default
  int reps = 10;
  bool decode = true, prefill = true;
};

struct Shape {
  int64_t rows, cols;
  int n_tokens;
};

constexpr Shape kDecodeShapes[] = {{2048, 8192, 1}, {8192, 2048, 1}, {2048, 8192, 4}};
constexpr Shape kPrefillShapes[] = {{2048, 2048, 512}, {8192, 2048, 512}, {2048, 8192, 512}};
constexpr size_t kColdBytes = size_t{256} << 20;  // decode copies in all: 8x the L3
constexpr size_t kTriadBytesPerArray = size_t{32} << 20;  // 3 arrays: 3x the L3, ~2 ms a pass

// `copies` matrices of random weights in `type`, one buffer.
std::vector<uint8_t> random_weights(DType type, const Shape& s, int copies) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> row(s.cols);
  const size_t rb = row_bytes(type, s.cols);
  std::vector<uint8_t> data(rb * s.rows * copies);
  for (int64_t r = 0; r < s.rows * copies; ++r) {
    for (float& v : row) v = dist(rng);
    quantize_row(type, row.data(), data.data() + rb * r, s.cols);
  }
  return data;
}

// Best seconds of one matmul over reps passes through the copies. Single calls
// are timed, not averages: a call that loses its core to another process is
// simply not the best.
double time_matmul(DType type, const Shape& s, int copies, int reps) {
  const std::vector<uint8_t> data = random_weights(type, s, copies);
  const size_t matrix_bytes = row_bytes(type, s.cols) * s.rows;
  std::vector<float> x(s.n_tokens * s.cols, 0.5f), y(s.n_tokens * s.rows);
  auto run = [&](int i) {
    const Matrix w{type, s.rows, s.cols, data.data() + matrix_bytes * (i % copies)};
    matmul(w, x.data(), s.n_tokens, y.data());
  };
  for (int i = 0; i < copies; ++i) run(i);  // warm up: pages, scratch, thread pool
  double best = 1e30;
  for (int r = 0; r < reps * copies; ++r) {
    Timer timer;
    run(r);
    best = std::min(best, timer.seconds());
  }
  return best;
}

void bench_decode(const Options& o, const bench::MachineInfo& m) {
  fmt::print("\n| decode | type | tokens | ms | weight GB/s | of triad |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const Shape& s : kDecodeShapes)
    for (DType type : o.types) {
      const double bytes = static_cast<double>(row_bytes(type, s.cols) * s.rows);
      const int copies = static_cast<int>(std::max<size_t>(2, kColdBytes / bytes));
      const double t = time_matmul(type, s, copies, o.reps);
      const double gbs = bytes / t / 1e9;
      fmt::print("| {}x{} | {} | {} | {:.3f} | {:.1f} | {:.0f}% |\n", s.rows, s.cols,
                 dtype_info(type).name, s.n_tokens, t * 1e3, gbs, 100 * gbs / m.triad_gbs);
    }
}

void bench_prefill(const Options& o, const bench::MachineInfo& m) {
  fmt::print("\n| prefill | type | tokens | ms | GFLOP/s | of FMA peak |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const Shape& s : kPrefillShapes)
    for (DType type : o.types) {
      const double t = time_matmul(type, s, 1, std::max(1, o.reps / 2));
      const double gflops = 2.0 * s.rows * s.cols * s.n_tokens / t / 1e9;
      fmt::print("| {}x{} | {} | {} | {:.2f} | {:.1f} | {:.0f}% |\n", s.rows, s.cols,
                 dtype_info(type).name, s.n_tokens, t * 1e3, gflops, 100 * gflops / m.peak_gflops);
    }
}

[[noreturn]] void usage(const char* why) {
  fmt::print(stderr, "bench_matmul: {}\nusage: bench_matmul [--isa avx512|avx2|scalar] "
             "[--threads N] [--types f16,bf16,f32] [--reps N] [--decode-only|--prefill-only]\n",
             why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (a == "--isa") {
      const auto isa = isa_from_name(value());
      if (!isa || !isa_supported(*isa)) usage("unknown or unsupported ISA");
      set_active_isa(*isa);
    } else if (a == "--threads") {
      o.threads = std::atoi(value().c_str());
    } else if (a == "--reps") {
      o.reps = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--types") {
      o.types.clear();
      const std::string list = value();
      for (size_t p = 0; p <= list.size();) {
        const size_t e = std::min(list.find(',', p), list.size());
        const auto t = dtype_from_name(std::string_view(list).substr(p, e - p));
        if (!t) usage("unknown type");
        o.types.push_back(*t);
        p = e + 1;
      }
    } else if (a == "--decode-only") {
      o.prefill = false;
    } else if (a == "--prefill-only") {
      o.decode = false;
    } else {
      usage("unknown option");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  const int threads = omp_get_max_threads();
  // The machine's limits, measured as the best of many short runs like the
  // matmuls themselves, so a busy neighbour skews both sides alike.
  bench::MachineInfo m = bench::describe_cpu();
  m.triad_gbs = bench::measure_triad_gbs(kTriadBytesPerArray, threads, 100);
  m.peak_gflops = bench::measure_peak_gflops(threads, 10);
  fmt::print("{}\nmatmul on {} threads, ISA {}, best call of {} passes\n", bench::machine_line(m),
             threads, isa_name(active_isa()), o.reps);
  if (o.decode) bench_decode(o, m);
  if (o.prefill) bench_prefill(o, m);
}

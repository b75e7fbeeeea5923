// Times matmul() on integer-weight types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS; any DType name) for the matrix
// shapes of the 1B Llama (width 2048, FFN 8192, 8 KV heads of 64, vocab 32000),
// at decode (1 token) and prefill (512 tokens) batch sizes, per ISA.
//
//   bench_quant_matmul [-t THREADS] [--types q8_0,q8_0p,q4_0,q4_0p,q5_0,q3_k,q3_kp,q4_k,q4_kp,q6_k,q6_kp,...] [--isas avx512,avx2]
//                      [--tokens 1,512] [--shapes ROWSxCOLS,...] [--min-time SECONDS] [--cpu-time 1]
//
// --cpu-time 1 (with -t 1) times by the thread's CPU clock, which leaves out
// time the thread spent descheduled: per-core kernel speed on a shared machine.
// Prints the best of repeated runs: GB/s = weight bytes / time (the decode
// figure of merit), GOP/s = 2·rows·cols·tokens / time (prefill); and GB/s over
// the mean time, which a model's calls see: on the Zen 4 VM the best ran 10-20%
// above the mean, more for long rows, so compare a kernel with a model's
// products (`skiff bench --profile`, means) by the mean. Successive
// calls cycle through copies of the weights totalling over 256 MB, so decode
// reads them from memory, not from the 32 MiB L3, as a whole model would; a
// STREAM-style triad first gives the machine's bandwidth for comparison.
// --resident 1 reuses one copy instead: for a matrix that fits in cache, the
// kernel's speed when memory is not the limit (is a decode kernel compute-bound?).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/huge_page_buffer.h"
#include "kernels/isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"

namespace {

using namespace skiff;

struct Shape {
  std::string name;
  int64_t rows, cols;
};
const Shape kShapes[] = {
    {"q/o 2048x2048", 2048, 2048},   {"k/v 512x2048", 512, 2048},      {"gate/up 8192x2048", 8192, 2048},
    {"down 2048x8192", 2048, 8192}, {"output 32000x2048", 32000, 2048},
};

// 64 distinct quantized random rows, repeated: memory traffic is what counts.
// A type skiff cannot write (IQ4_XS) gets random block bytes with every fp16
// field set to a small scale (the kernels' speed does not depend on the values).
void fill_weights(DType type, int64_t rows, int64_t cols, uint8_t* out) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  const size_t rb = row_bytes(type, cols);
  std::vector<float> w(cols);
  const int64_t distinct = std::min<int64_t>(rows, 64);
  for (int64_t r = 0; r < distinct; ++r) {
    if (can_quantize(type)) {
      for (float& v : w) v = dist(rng);
      quantize_row(type, w.data(), out + rb * r, cols);
      continue;
    }
    for (size_t i = 0; i < rb; ++i) out[rb * r + i] = static_cast<uint8_t>(rng());
    const DTypeInfo& info = dtype_info(type);
    const uint16_t scale = 0x1C00;  // 2^-8 in fp16 for d, at byte 0 of the IQ4_XS block
    for (size_t b = 0; b < rb / info.type_size; ++b) std::memcpy(out + rb * r + info.type_size * b, &scale, 2);
  }
  for (int64_t r = distinct; r < rows; ++r) std::memcpy(out + rb * r, out + rb * (r % distinct), rb);
}

using Clock = std::chrono::steady_clock;

// Best GB/s of a[i] = b[i] + s·c[i] over 64 MiB arrays, counting 24 bytes per element.
double triad_gbs() {
  const size_t n = size_t{8} << 20;
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
  double best = 1e30;
  for (int rep = 0; rep < 10; ++rep) {
    const auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return 24.0 * static_cast<double>(n) / best * 1e-9;
}

// Best seconds per call over repeated calls for at least min_time seconds,
// each call on the next copy of the weights.
bool g_cpu_time = false;

double now_seconds() {
  if (!g_cpu_time) return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double best, mean;  // seconds a call
};

Timing time_matmul(const std::vector<Matrix>& copies, const float* x, int n_tokens, float* y, double min_time) {
  for (const Matrix& w : copies) matmul(w, x, n_tokens, y);  // warm-up: scratch, page faults
  double best = 1e30, total = 0;
  int reps = 0;
  for (; total < min_time || reps < 3; ++reps) {
    const Matrix& w = copies[reps % copies.size()];
    const double t0 = now_seconds();
    matmul(w, x, n_tokens, y);
    const double s = now_seconds() - t0;
    best = std::min(best, s);
    total += s;
  }
  return {best, total / reps};
}

std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(',', start), s.size());
    out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_quant_matmul [-t THREADS] [--types q8_0,q8_0p,q4_0,q4_0p,q5_0,q3_k,q3_kp,q4_k,q4_kp,q6_k,q6_kp,...] [--isas avx512,avx2,scalar]\n"
               "                          [--tokens 1,512] [--shapes ROWSxCOLS,...] [--min-time SECONDS] [--cpu-time 1] [--resident 1]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> types = {"q8_0", "q4_0", "q4_k"}, isas = {"avx512", "avx2"};
  std::vector<int> tokens = {1, 512};
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  double min_time = 0.3;
  bool resident = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) return usage();
    const char* v = argv[++i];
    if (a == "-t") omp_set_num_threads(std::atoi(v));
    else if (a == "--types") types = split(v);
    else if (a == "--isas") isas = split(v);
    else if (a == "--min-time") min_time = std::atof(v);
    else if (a == "--cpu-time") g_cpu_time = std::atoi(v) != 0;
    else if (a == "--resident") resident = std::atoi(v) != 0;
    else if (a == "--shapes") {
      shapes.clear();
      for (const std::string& s : split(v)) {
        int64_t rows = 0, cols = 0;
        if (std::sscanf(s.c_str(), "%ldx%ld", &rows, &cols) != 2 || rows <= 0 || cols <= 0) return usage();
        shapes.push_back({s, rows, cols});
      }
    } else if (a == "--tokens") {
      tokens.clear();
      for (const std::string& s : split(v)) tokens.push_back(std::atoi(s.c_str()));
    } else return usage();
  }
  std::printf("threads %d, triad %.1f GB/s\n", omp_get_max_threads(), triad_gbs());
  std::printf("| type | isa | shape | tokens | ms | GB/s | mean GB/s | GOP/s |\n|---|---|---|---|---|---|---|---|\n");
  const int max_tokens = *std::max_element(tokens.begin(), tokens.end());
  int64_t max_rows = 0, max_cols = 0;
  for (const Shape& s : shapes) max_rows = std::max(max_rows, s.rows), max_cols = std::max(max_cols, s.cols);
  std::vector<float> x(static_cast<size_t>(max_tokens) * max_cols);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  std::vector<float> y(static_cast<size_t>(max_tokens) * max_rows);
  for (const std::string& type_name : types) {
    // q8_0p, q4_0p, q3_kp, q4_kp, q6_kp, ...: repacked into panels as the loader does on AVX-512 (kernels/matmul/repack.h).
    const bool repacked = type_name.back() == 'p';
    const auto type = dtype_from_name(repacked ? type_name.substr(0, type_name.size() - 1) : type_name);
    if (!type) return usage();
    for (const Shape& s : shapes) {
      const size_t bytes = row_bytes(*type, s.cols) * s.rows;
      const size_t n_copies = resident ? 1 : (size_t{256} << 20) / bytes + 1;
      HugePageBuffer weights(bytes * n_copies);
      fill_weights(*type, s.rows, s.cols, weights.data());
      std::vector<Matrix> copies;
      for (size_t i = 0; i < n_copies; ++i) {
        if (i > 0) std::memcpy(weights.data() + bytes * i, weights.data(), bytes);
        copies.push_back({*type, s.rows, s.cols, weights.data() + bytes * i});
      }
      if (repacked)
        for (size_t i = 0; i < n_copies; ++i) repack(copies[i], weights.data() + bytes * i);
      for (const std::string& isa_str : isas) {
        const auto isa = isa_from_name(isa_str);
        if (!isa) return usage();
        if (!isa_supported(*isa)) continue;
        set_active_isa(*isa);
        for (int n : tokens) {
          const Timing t = time_matmul(copies, x.data(), n, y.data(), min_time);
          std::printf("| %s | %s | %s | %d | %.3f | %.1f | %.1f | %.1f |\n", type_name.c_str(), isa_str.c_str(),
                      s.name.c_str(), n, t.best * 1e3, static_cast<double>(bytes) / t.best * 1e-9,
                      static_cast<double>(bytes) / t.mean * 1e-9,
                      2.0 * static_cast<double>(s.rows * s.cols) * n / t.best * 1e-9);
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}

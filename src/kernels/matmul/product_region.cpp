#include "kernels/matmul/product_region.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/unit_ranges.h"

namespace skiff {
namespace {

constexpr int kNumFormats = 3;  // the values of ActivationFormat

int index_of(ActivationFormat f) { return static_cast<int>(f); }

// Where the kernels of one activation format read one product's rows: in
// place, when they are one run of x, or from the format's gathered copy; and
// as quads, when a kernel reads those.
struct Source {
  ActivationFormat format;
  std::span<const int32_t> rows;  // of x; empty: all of them
  int n = 0;
  int first = 0;        // >= 0: x rows [first, first + n), in place; -1: gathered
  size_t gathered = 0;  // the first of its rows in the format's gathered copy
  bool quads = false;
  size_t quads_at = 0;  // its first QuadUnit in the format's quads
};

// One product as the parallel region sees it: its kernel, its activations, and
// its place among the concatenated row units (of row_granularity rows) of all products.
struct Job {
  const Matrix* w;
  float* y;
  KernelEntry k;
  Activations act;
  int input, source;  // its input's Input and its Source there
  int64_t first_unit, n_units;
  bool invariant_chunks;                        // the kernel sees kInvariantTokens tokens at a time
  std::span<const OutlierTerm> outlier_terms;  // added to the rows after the kernel's products
  std::span<const ColumnFill> column_fills;    // the columns those terms read, filled per row range first
};

// Whether a kernel reads n_tokens tokens' activations as quads.
bool reads_quads(const KernelEntry& k, int n_tokens) {
  return k.activations != ActivationFormat::kF32 && k.quads_from_tokens > 0 && n_tokens >= k.quads_from_tokens;
}

// One input's sources, and how much of each buffer they need.
struct Input {
  const float* x;
  int n_x;
  int64_t cols;
  std::vector<Source> sources;
  size_t gathered_rows[kNumFormats] = {};
  size_t quad_units[kNumFormats] = {};
  bool quantized[kNumFormats] = {};  // formats x is quantized into
  size_t row_bytes[kNumFormats] = {};  // of their rows
};

// The jobs of all inputs.
struct Region {
  std::vector<Input> inputs;
  std::vector<Job> jobs;
  int64_t n_units = 0, work = 0;
  int max_n_x = 0;
  bool any_gather = false, any_quads = false;
};

// The source of these rows in this format, shared by the products that read the same.
int find_source(Input& in, ActivationFormat format, std::span<const int32_t> rows) {
  const int n_x = in.n_x;
  for (size_t s = 0; s < in.sources.size(); ++s) {
    const Source& src = in.sources[s];
    if (src.format == format && src.rows.data() == rows.data() && src.rows.size() == rows.size())
      return static_cast<int>(s);
  }
  Source src{format, rows, rows.empty() ? n_x : static_cast<int>(rows.size())};
  bool run = true;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= n_x) fail("matmul: input row {} of {}", rows[i], n_x);
    run = run && rows[i] == rows[0] + static_cast<int32_t>(i);
  }
  src.first = run ? (rows.empty() ? 0 : rows[0]) : -1;
  in.sources.push_back(src);
  return static_cast<int>(in.sources.size()) - 1;
}

// Whether the kernel on w must see few tokens at a time to be batch-invariant (matmul.h).
bool needs_invariant_chunks(const RoutedProduct& p, int n_tokens) {
  return (batch_invariant() || p.batch_invariant) && n_tokens > kInvariantTokens &&
         p.w->layout == MatrixLayout::kRows && active_isa() != Isa::kScalar;
}

// Adds a group's input and its products' jobs to the region.
void plan_group(Region& region, const ProductGroup& group, PrefetchLevel prefetch) {
  const int64_t cols = group.products[0].w->cols;
  const int input = static_cast<int>(region.inputs.size());
  Input& in = region.inputs.emplace_back(Input{group.x, group.n_x, cols, {}});
  region.max_n_x = std::max(region.max_n_x, group.n_x);
  for (size_t p = 0; p < group.products.size(); ++p) {
    const RoutedProduct& product = group.products[p];
    const Matrix& w = *product.w;
    if (w.cols != cols) fail("matmul_many: a {}-column matrix with {}-column ones", w.cols, cols);
    const KernelEntry k = find_kernel(active_isa(), w);
    const int n = routed_rows(product, group.n_x);
    const int source = find_source(in, k.activations, product.rows);
    in.sources[source].quads = in.sources[source].quads || reads_quads(k, n);
    const int64_t units = (w.rows + k.row_granularity - 1) / k.row_granularity;
    Job job{&w, product.y, k, Activations{nullptr, nullptr, 0, nullptr, n, cols, prefetch}, input, source,
            region.n_units, units, needs_invariant_chunks(product, n), {}, {}};
    if (!group.outliers.empty()) {
      job.outlier_terms = group.outliers[p].terms;
      job.column_fills = group.outliers[p].fills;
    }
    region.jobs.push_back(job);
    region.n_units += units;
    region.work += w.rows * cols * n;
  }
  for (Source& s : in.sources) {
    const int f = index_of(s.format);
    if (s.format != ActivationFormat::kF32 && !in.quantized[f]) {
      in.quantized[f] = true;
      in.row_bytes[f] = activation_row_bytes(s.format, cols);  // before the parallel region: it may throw
    }
    if (s.first < 0) {
      s.gathered = in.gathered_rows[f];
      in.gathered_rows[f] += s.n;
      region.any_gather = true;
    }
    if (s.quads) {
      s.quads_at = in.quad_units[f];
      in.quad_units[f] += activation_quads_bytes(cols, s.n) / sizeof(QuadUnit);
      region.any_quads = true;
    }
  }
}

Region plan_region(std::span<const ProductGroup> groups, PrefetchLevel prefetch) {
  Region region;
  for (const ProductGroup& group : groups)
    if (!group.products.empty()) plan_group(region, group, prefetch);
  return region;
}

// A thread's scratch, reused across calls: per format x's quantized rows, the
// gathered rows and the quads; gathered float rows for kF32 kernels.
struct Scratch {
  std::vector<uint8_t> rows[kNumFormats], gathered[kNumFormats];
  std::vector<QuadUnit> quads[kNumFormats];
};

// This thread's scratch for each of n inputs.
std::span<Scratch> thread_scratch(size_t n) {
  thread_local std::vector<Scratch> scratch;
  if (scratch.size() < n) scratch.resize(n);
  return std::span(scratch).first(n);
}

template <class T>
T* at_least(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

struct Buffers {
  size_t row_bytes[kNumFormats] = {};  // kF32: of floats
  uint8_t* rows[kNumFormats] = {};     // x's, quantized (kF32: x itself)
  uint8_t* gathered[kNumFormats] = {};
  QuadUnit* quads[kNumFormats] = {};
};

Buffers make_buffers(const Input& in, Scratch& scratch) {
  Buffers b;
  for (int f = 0; f < kNumFormats; ++f) {
    const auto format = static_cast<ActivationFormat>(f);
    if (format == ActivationFormat::kF32) {
      b.row_bytes[f] = in.cols * sizeof(float);
      b.rows[f] = reinterpret_cast<uint8_t*>(const_cast<float*>(in.x));
    } else if (in.quantized[f]) {
      b.row_bytes[f] = in.row_bytes[f];
      b.rows[f] = at_least(scratch.rows[f], b.row_bytes[f] * in.n_x);
    }
    if (in.gathered_rows[f]) b.gathered[f] = at_least(scratch.gathered[f], b.row_bytes[f] * in.gathered_rows[f]);
    if (in.quad_units[f]) b.quads[f] = at_least(scratch.quads[f], in.quad_units[f]);
  }
  return b;
}

// Every input's buffers in this scratch.
std::vector<Buffers> make_all_buffers(const Region& region, std::span<Scratch> scratch) {
  std::vector<Buffers> buffers;
  for (size_t i = 0; i < region.inputs.size(); ++i) buffers.push_back(make_buffers(region.inputs[i], scratch[i]));
  return buffers;
}

// The first row of a source's activations in the buffers.
const uint8_t* source_rows(const Source& s, const Buffers& b) {
  const int f = index_of(s.format);
  return s.first >= 0 ? b.rows[f] + b.row_bytes[f] * s.first : b.gathered[f] + b.row_bytes[f] * s.gathered;
}

// Points each job at its source's activations in its input's buffers.
void attach(std::vector<Job>& jobs, const std::vector<Input>& inputs, const std::vector<Buffers>& buffers) {
  for (Job& j : jobs) {
    const Source& s = inputs[j.input].sources[j.source];
    const Buffers& b = buffers[j.input];
    const int f = index_of(s.format);
    if (s.format == ActivationFormat::kF32) {
      j.act.f32 = reinterpret_cast<const float*>(source_rows(s, b));
      continue;
    }
    j.act.quant = source_rows(s, b);
    j.act.quant_row_bytes = b.row_bytes[f];
    j.act.quads = s.quads ? b.quads[f] + s.quads_at : nullptr;
  }
}

// Quantizes x's row t into every format some source of the input reads.
void quantize_row(const Input& in, const Buffers& b, int t) {
  for (int f = 0; f < kNumFormats; ++f)
    if (in.quantized[f])  // never kF32
      quantize_activation_row(static_cast<ActivationFormat>(f), in.x + t * in.cols, b.rows[f] + b.row_bytes[f] * t,
                              in.cols);
}

// One row copied into a gathered source.
struct RowCopy {
  const uint8_t* from;
  uint8_t* to;
  size_t bytes;
};

std::vector<RowCopy> gather_copies(const Region& region, const std::vector<Buffers>& buffers) {
  std::vector<RowCopy> copies;
  for (size_t i = 0; i < region.inputs.size(); ++i) {
    const Buffers& b = buffers[i];
    for (const Source& s : region.inputs[i].sources) {
      if (s.first >= 0) continue;
      const int f = index_of(s.format);
      uint8_t* to = const_cast<uint8_t*>(source_rows(s, b));
      for (int r = 0; r < s.n; ++r)
        copies.push_back({b.rows[f] + b.row_bytes[f] * s.rows[r], to + b.row_bytes[f] * r, b.row_bytes[f]});
    }
  }
  return copies;
}

// One row of an input to quantize, or one quad (kQuadTokens rows) of a source to interleave.
struct RowTask {
  int input, row;
};
struct QuadTask {
  int input, source;
  int64_t quad;
};

std::vector<RowTask> row_tasks(const Region& region) {
  std::vector<RowTask> tasks;
  for (size_t i = 0; i < region.inputs.size(); ++i)
    for (int t = 0; t < region.inputs[i].n_x; ++t) tasks.push_back({static_cast<int>(i), t});
  return tasks;
}

std::vector<QuadTask> quad_tasks(const Region& region) {
  std::vector<QuadTask> tasks;
  for (size_t i = 0; i < region.inputs.size(); ++i) {
    const std::vector<Source>& sources = region.inputs[i].sources;
    for (size_t s = 0; s < sources.size(); ++s)
      if (sources[s].quads)
        for (int64_t k = 0; k * kQuadTokens < sources[s].n; ++k)
          tasks.push_back({static_cast<int>(i), static_cast<int>(s), k});
  }
  return tasks;
}

// Rows [r0, r1) of one job: the kernel's products, then the outliers' terms.
void run_job_rows(const Job& j, int64_t r0, int64_t r1) {
  const int64_t rows = j.w->rows;
  if (!j.invariant_chunks) {
    j.k.fn(*j.w, j.act, j.y, rows, r0, r1);
  } else {
    for (int t0 = 0; t0 < j.act.n_tokens; t0 += kInvariantTokens) {
      Activations chunk = j.act;
      chunk.n_tokens = std::min(kInvariantTokens, j.act.n_tokens - t0);
      if (chunk.f32) chunk.f32 += t0 * chunk.cols;
      if (chunk.quant) chunk.quant += t0 * chunk.quant_row_bytes;
      chunk.quads = nullptr;  // kernels on rows read none
      j.k.fn(*j.w, chunk, j.y + t0 * rows, rows, r0, r1);
    }
  }
  fill_columns(*j.w, j.column_fills, r0, r1);
  add_outlier_terms(j.outlier_terms, j.y, rows, r0, r1);
}

// Runs the rows of units [u0, u1) of the concatenation, job by job.
void run_units(const std::vector<Job>& jobs, int64_t u0, int64_t u1) {
  auto j = std::upper_bound(jobs.begin(), jobs.end(), u0, [](int64_t u, const Job& job) { return u < job.first_unit; });
  for (--j; j != jobs.end() && j->first_unit < u1; ++j) {
    const int64_t a = std::max(u0, j->first_unit) - j->first_unit;
    const int64_t b = std::min(u1, j->first_unit + j->n_units) - j->first_unit;
    if (a >= b) continue;
    const int64_t g = j->k.row_granularity, rows = j->w->rows;
    run_job_rows(*j, std::min(rows, a * g), std::min(rows, b * g));
  }
}

// Up to this many input rows, every thread quantizes all of them for itself.
constexpr int kOwnQuantizationTokens = 4;

// The fewest multiply-adds a thread claims at a time (UnitRanges), 20-35 KB of
// 4-8-bit weights in decode: what is left to a thread when the other one is
// done is at most about a microsecond's streaming (the LM head's claims of 1/64
// of a thread's share, 1.1 MB, kept the second thread waiting far longer;
// figures: docs/notes/kernel-design-figures.md), and short products go in a few
// claims.
constexpr int64_t kMinClaimWork = int64_t{1} << 15;

}  // namespace

void run_products(std::span<const ProductGroup> groups, PrefetchLevel prefetch) {
  Region region = plan_region(groups, prefetch);
  if (region.jobs.empty()) return;
  const size_t n_inputs = region.inputs.size();
  // A decode step's few rows are quantized by every thread for itself, into
  // its own buffers: a microsecond's work, where sharing one thread's would
  // cost a barrier. Otherwise the threads share the calling thread's buffers.
  const bool each_thread_quantizes =
      !region.any_quads && !region.any_gather && region.max_n_x <= kOwnQuantizationTokens;
  std::vector<Buffers> shared;
  std::vector<RowTask> rows;
  std::vector<RowCopy> copies;
  std::vector<QuadTask> quads;
  if (!each_thread_quantizes) {
    shared = make_all_buffers(region, thread_scratch(n_inputs));
    attach(region.jobs, region.inputs, shared);
    rows = row_tasks(region);
    copies = gather_copies(region, shared);
    quads = quad_tasks(region);
  }
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  const int64_t n_copies = static_cast<int64_t>(copies.size()), n_quads = static_cast<int64_t>(quads.size());

  // One parallel region: quantize, gather, interleave quads, then the units.
  // Threads only pay off once the products have real work; tiny models run serially.
  const int n_threads = region.work >= (int64_t{1} << 16) ? omp_get_max_threads() : 1;
  UnitRanges ranges(region.n_units, n_threads,
                    region.n_units * kMinClaimWork / std::max<int64_t>(1, region.work));
#pragma omp parallel num_threads(n_threads)
  {
    const std::vector<Job>* jobs = &region.jobs;
    if (each_thread_quantizes) {
      thread_local std::vector<Job> own_jobs;
      own_jobs.assign(region.jobs.begin(), region.jobs.end());
      const std::vector<Buffers> mine = make_all_buffers(region, thread_scratch(n_inputs));
      for (size_t i = 0; i < n_inputs; ++i)
        for (int t = 0; t < region.inputs[i].n_x; ++t) quantize_row(region.inputs[i], mine[i], t);
      attach(own_jobs, region.inputs, mine);
      jobs = &own_jobs;
    } else {
#pragma omp for schedule(static)
      for (int64_t r = 0; r < n_rows; ++r) quantize_row(region.inputs[rows[r].input], shared[rows[r].input], rows[r].row);
    }
    if (n_copies > 0) {  // the same for every thread
#pragma omp for schedule(static)
      for (int64_t c = 0; c < n_copies; ++c) std::memcpy(copies[c].to, copies[c].from, copies[c].bytes);
    }
    if (n_quads > 0) {
#pragma omp for schedule(static)
      for (int64_t q = 0; q < n_quads; ++q) {
        const Input& in = region.inputs[quads[q].input];
        const Source& s = in.sources[quads[q].source];
        const Buffers& b = shared[quads[q].input];
        const int f = index_of(s.format);
        pack_activation_quad(s.format, source_rows(s, b), b.row_bytes[f], s.n, in.cols, quads[q].quad,
                             b.quads[f] + s.quads_at);
      }
    }
    for (int64_t u0, u1; ranges.next(omp_get_thread_num(), u0, u1);) run_units(*jobs, u0, u1);
  }
}

}  // namespace skiff

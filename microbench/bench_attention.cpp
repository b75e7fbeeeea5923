// Attention benchmark: naive attention (the N×N score matrix materialized)
// against flash attention, for one head's causal prefill at contexts 512 to
// 32768 — time and peak memory, each measured in a child process of its own —
// decode attention (one token, GQA) over a long cached context, as the
// K/V bandwidth it reaches against a STREAM triad, and batched decode as the
// engine runs it (many sequences of short contexts, one flash_attention call
// per sequence and KV head), as ns per cached key and query row.
//
//   bench_attention [--prefill-max 32768] [--decode-ctx 16384] [--threads N] [--decode-reps N]
//                   [--scattered] [--skip-prefill] [--skip-decode]
//                   [--batch-seqs 64] [--batch-ctx 200] [--batch-kv-heads 12] [--batch-group 1]
//                   [--batch-head-dim 64] [--batch-layers 12] [--batch-block 16] [--skip-batch]
#include <fmt/format.h>
#include <omp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/huge_page_buffer.h"
#include "base/timer.h"
#include "bench/machine.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/kv_row.h"

using namespace skiff;

namespace {

// The fastest of reps timed runs of fn, after one untimed warm-up run.
template <class F>
double best_seconds(int reps, F&& fn) {
  fn();
  double best = 1e9;
  for (int rep = 0; rep < reps; ++rep) {
    Timer t;
    fn();
    best = std::min(best, t.seconds());
  }
  return best;
}

constexpr int kHeadDim = 128;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// The textbook version: S = Q·Kᵀ·scale masked causally, row softmax, O = S·V.
void naive_attention(const float* q, const float* k, const float* v, int n, float* out) {
  std::vector<float> scores(static_cast<size_t>(n) * n);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
#pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < n; ++i) {
    float* s = &scores[static_cast<size_t>(i) * n];
    float max = -INFINITY;
    for (int j = 0; j <= i; ++j) {
      float dot = 0;
      for (int d = 0; d < kHeadDim; ++d) dot += q[i * kHeadDim + d] * k[j * kHeadDim + d];
      s[j] = dot * scale;
      max = std::max(max, s[j]);
    }
    float sum = 0;
    for (int j = 0; j <= i; ++j) sum += (s[j] = std::exp(s[j] - max));
    for (int d = 0; d < kHeadDim; ++d) out[i * kHeadDim + d] = 0;
    for (int j = 0; j <= i; ++j)
      for (int d = 0; d < kHeadDim; ++d) out[i * kHeadDim + d] += s[j] / sum * v[j * kHeadDim + d];
  }
}

// One head's keys and values as F32 blocks of 16 in one contiguous pool.
struct F32Head {
  std::vector<int> table;
  std::vector<float> pool;  // per block: 16 K rows then 16 V rows
};

F32Head paged_copy(const float* k, const float* v, int n) {
  F32Head h;
  const int blocks = (n + 15) / 16;
  h.pool.resize(static_cast<size_t>(blocks) * 32 * kHeadDim);
  for (int b = 0; b < blocks; ++b) h.table.push_back(b);
  for (int p = 0; p < n; ++p) {
    std::memcpy(&h.pool[(p / 16 * 32 + p % 16) * kHeadDim], k + p * kHeadDim, kHeadDim * 4);
    std::memcpy(&h.pool[(p / 16 * 32 + 16 + p % 16) * kHeadDim], v + p * kHeadDim, kHeadDim * 4);
  }
  return h;
}

void flash_prefill(const float* q, const F32Head& h, int n, float* out) {
  const auto* base = reinterpret_cast<const uint8_t*>(h.pool.data());
  const KvBlocks kv{h.table.data(), base, base + 16 * kHeadDim * 4, 32 * kHeadDim * 4, 16, n,
                    KvElement::kF32};
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < n; t += kAttentionMaxRows) {
    const int rows = std::min(kAttentionMaxRows, n - t);
    flash_attention({q + t * kHeadDim, kHeadDim, out + t * kHeadDim, kHeadDim, rows, 1, t}, kv,
                    kHeadDim, scale);
  }
}

// Runs f in a child process; returns {seconds, peak RSS growth in bytes}.
template <typename F>
std::pair<double, double> measure_in_child(F&& f) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, -1};
  const pid_t pid = fork();
  if (pid == 0) {
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    Timer timer;
    f();
    double result[2] = {timer.seconds(), 0};
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    result[1] = (after.ru_maxrss - before.ru_maxrss) * 1024.0;
    if (write(fds[1], result, sizeof(result)) != sizeof(result)) _exit(1);
    _exit(0);
  }
  double result[2] = {-1, -1};
  if (read(fds[0], result, sizeof(result)) != sizeof(result)) result[0] = -1;
  waitpid(pid, nullptr, 0);
  close(fds[0]);
  close(fds[1]);
  return {result[0], result[1]};
}

void bench_prefill(int max_ctx) {
  std::fflush(stdout);  // children inherit unflushed output otherwise
  fmt::print("## Causal prefill, one head (head dim {}), naive vs flash\n\n", kHeadDim);
  fmt::print("| context | naive s | flash s | speed-up | naive peak MiB | flash peak MiB | memory ratio |\n");
  fmt::print("|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int n = 512; n <= max_ctx; n *= 2) {
    const auto q = random_floats(static_cast<size_t>(n) * kHeadDim, 1);
    const auto k = random_floats(static_cast<size_t>(n) * kHeadDim, 2);
    const auto v = random_floats(static_cast<size_t>(n) * kHeadDim, 3);
    const F32Head paged = paged_copy(k.data(), v.data(), n);
    std::vector<float> out(q.size());
    const auto [naive_s, naive_mem] = measure_in_child([&] { naive_attention(q.data(), k.data(), v.data(), n, out.data()); });
    const auto [flash_s, flash_mem] = measure_in_child([&] { flash_prefill(q.data(), paged, n, out.data()); });
    fmt::print("| {} | {:.3f} | {:.3f} | {:.1f}x | {:.1f} | {:.1f} | {:.0f}x |\n", n, naive_s, flash_s,
               naive_s / flash_s, naive_mem / 1048576, flash_mem / 1048576,
               naive_mem / std::max(flash_mem, 4096.0));
    std::fflush(stdout);
  }
}

// n_rows value rows from one of 64 random N(0,1) rows each.
void fill_value_rows(uint8_t* rows, size_t n_rows, KvElement element, int head_dim) {
  const auto values = random_floats(static_cast<size_t>(head_dim) * 64, 4);
  const size_t row = kv_row_bytes(element, head_dim);
  for (size_t r = 0; r < n_rows; ++r) encode_kv_row(element, &values[(r % 64) * head_dim], head_dim, rows + r * row);
}

// n_blocks key blocks of `block` keys from the same 64 rows, in the keys'
// dimension-major layout (kernels/attention/kv_row.h).
void fill_key_blocks(uint8_t* keys, size_t n_blocks, KvElement element, int head_dim, int block) {
  const auto values = random_floats(static_cast<size_t>(head_dim) * 64, 4);
  const size_t block_bytes = kv_row_bytes(element, head_dim) * block;
  for (size_t b = 0; b < n_blocks; ++b)
    for (int slot = 0; slot < block; ++slot)
      store_key(element, &values[((b * block + slot) % 64) * head_dim], head_dim, block, slot, keys + b * block_bytes);
}

// Decode: one query token, 8 KV heads × group 4 (the 1B shape's GQA), over ctx
// cached positions in blocks of 16, heads and context split over the threads.
double bench_decode(int ctx, KvElement element, const char* element_name, int head_dim, int reps,
                    bool scattered) {
  const int n_kv_heads = 8, group = 4, block = 16, blocks = (ctx + block - 1) / block;
  const size_t row = kv_row_bytes(element, head_dim);
  // The cache's layout: one array per (K/V, head) over all blocks.
  const size_t block_stride = row * block, head_array = block_stride * blocks;
  HugePageBuffer pool(2 * n_kv_heads * head_array);
  fill_key_blocks(pool.data(), static_cast<size_t>(n_kv_heads) * blocks, element, head_dim, block);
  fill_value_rows(pool.data() + n_kv_heads * head_array, static_cast<size_t>(n_kv_heads) * blocks * block, element,
                  head_dim);
  std::vector<int> table(blocks);
  for (int b = 0; b < blocks; ++b) table[b] = scattered ? (b * 7919) % blocks : b;
  const auto q = random_floats(static_cast<size_t>(n_kv_heads) * group * head_dim, 5);
  std::vector<float> out(q.size());
  const int splits = 4;  // per head: 32 work items for the threads
  std::vector<float> parts(static_cast<size_t>(n_kv_heads) * splits * group * (head_dim + 2));
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  auto step = [&] {
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
      for (int w = 0; w < n_kv_heads * splits; ++w) {
        const int h = w / splits, s = w % splits;
        const KvBlocks kv{table.data(), pool.data() + h * head_array,
                          pool.data() + (n_kv_heads + h) * head_array, block_stride, block, ctx, element};
        float* base = &parts[static_cast<size_t>(w) * group * (head_dim + 2)];
        const int chunk = (ctx / splits + block - 1) / block * block;
        flash_attention_partial({q.data() + h * group * head_dim, head_dim, out.data() + h * group * head_dim,
                                 head_dim, 1, group, ctx - 1},
                                kv, s * chunk, std::min(ctx, (s + 1) * chunk), head_dim, scale,
                                {base, base + group * head_dim, base + group * (head_dim + 1)});
      }
    }
    for (int h = 0; h < n_kv_heads; ++h) {
      AttentionPartial p[splits];
      for (int s = 0; s < splits; ++s) {
        float* base = &parts[static_cast<size_t>(h * splits + s) * group * (head_dim + 2)];
        p[s] = {base, base + group * head_dim, base + group * (head_dim + 1)};
      }
      merge_attention_partials({q.data() + h * group * head_dim, head_dim, out.data() + h * group * head_dim,
                                head_dim, 1, group, ctx - 1}, p, splits, head_dim);
    }
  };
  const double best = best_seconds(reps, step);
  const double bytes = 2.0 * n_kv_heads * head_array;
  fmt::print("| {} | {} | {} | {:.2f} | {:.3f} | {:.1f} |", ctx, element_name, head_dim,
             bytes / 1048576, best * 1e3, bytes / best / 1e9);
  return bytes / best / 1e9;
}

// Batched decode as the engine steps it: `seqs` sequences of ctx cached
// positions each, one query token per sequence, one flash_attention call per
// (sequence, KV head) spread over the threads, layer after layer (so the K/V
// of all layers, far past L3, come from memory as in the engine). Scattered:
// each sequence's blocks interleave with the others' in the pool, as when
// sequences grow together. Returns ns per cached key and query row, per
// thread (with one thread, the kernel's cost per key), and sets *gbs.
struct BatchShape {
  int seqs = 64, ctx = 200, kv_heads = 12, group = 1, head_dim = 64, layers = 12, block = 16;
};

double bench_batch(const BatchShape& b, KvElement element, int reps, bool scattered, double* gbs) {
  const int block = b.block, seq_blocks = (b.ctx + block - 1) / block, blocks = b.seqs * seq_blocks;
  const size_t row = kv_row_bytes(element, b.head_dim);
  const size_t block_stride = row * block, head_array = block_stride * blocks;
  const size_t layer_bytes = 2 * b.kv_heads * head_array;
  HugePageBuffer pool(b.layers * layer_bytes);
  for (int l = 0; l < b.layers; ++l) {
    uint8_t* layer = pool.data() + l * layer_bytes;
    fill_key_blocks(layer, static_cast<size_t>(b.kv_heads) * blocks, element, b.head_dim, block);
    fill_value_rows(layer + b.kv_heads * head_array, static_cast<size_t>(b.kv_heads) * blocks * block, element,
                    b.head_dim);
  }
  std::vector<int> table(blocks);  // sequence s's blocks at [s * seq_blocks, (s + 1) * seq_blocks)
  for (int s = 0; s < b.seqs; ++s)
    for (int i = 0; i < seq_blocks; ++i) table[s * seq_blocks + i] = scattered ? i * b.seqs + s : s * seq_blocks + i;
  const int q_row = b.kv_heads * b.group * b.head_dim;
  const auto q = random_floats(static_cast<size_t>(b.seqs) * q_row, 5);
  std::vector<float> out(q.size());
  const float scale = 1.0f / std::sqrt(static_cast<float>(b.head_dim));
  auto step = [&] {
    for (int l = 0; l < b.layers; ++l) {
      const uint8_t* layer = pool.data() + l * layer_bytes;
#pragma omp parallel for schedule(dynamic, 1)
      for (int w = 0; w < b.seqs * b.kv_heads; ++w) {
        const int s = w / b.kv_heads, h = w % b.kv_heads;
        const KvBlocks kv{table.data() + s * seq_blocks, layer + h * head_array,
                          layer + (b.kv_heads + h) * head_array, block_stride, block, b.ctx, element};
        const size_t at = static_cast<size_t>(s) * q_row + h * b.group * b.head_dim;
        flash_attention({q.data() + at, q_row, out.data() + at, q_row, 1, b.group, b.ctx - 1}, kv, b.head_dim,
                        scale);
      }
    }
  };
  const double best = best_seconds(reps, step);
  const double key_rows = static_cast<double>(b.seqs) * b.kv_heads * b.group * b.ctx * b.layers;
  *gbs = static_cast<double>(b.layers) * 2 * b.kv_heads * b.seqs * b.ctx * row / best / 1e9;
  return best * 1e9 * omp_get_max_threads() / key_rows;
}

}  // namespace

int main(int argc, char** argv) {
  int prefill_max = 32768, decode_ctx = 16384, threads = 0, decode_reps = 10;
  bool prefill = true, decode = true, batch = true, scattered = false;
  BatchShape shape;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::stoi(argv[++i]) : 0; };
    if (a == "--help") {
      fmt::print("bench_attention [--prefill-max 32768] [--decode-ctx 16384] [--threads N] [--decode-reps N]\n"
                 "                [--scattered] [--skip-prefill] [--skip-decode] [--skip-batch]\n"
                 "                [--batch-seqs 64] [--batch-ctx 200] [--batch-kv-heads 12] [--batch-group 1]\n"
                 "                [--batch-head-dim 64] [--batch-layers 12] [--batch-block 16]\n");
      return 0;
    }
    if (a == "--prefill-max") prefill_max = next();
    else if (a == "--decode-ctx") decode_ctx = next();
    else if (a == "--threads") threads = next();
    else if (a == "--decode-reps") decode_reps = next();
    else if (a == "--skip-prefill") prefill = false;
    else if (a == "--skip-decode") decode = false;
    else if (a == "--scattered") scattered = true;
    else if (a == "--skip-batch") batch = false;
    else if (a == "--batch-seqs") shape.seqs = next();
    else if (a == "--batch-ctx") shape.ctx = next();
    else if (a == "--batch-kv-heads") shape.kv_heads = next();
    else if (a == "--batch-group") shape.group = next();
    else if (a == "--batch-head-dim") shape.head_dim = next();
    else if (a == "--batch-layers") shape.layers = next();
    else if (a == "--batch-block") shape.block = next();
    else { fmt::print(stderr, "unknown argument {}\n", a); return 2; }
  }
  if (threads > 0) omp_set_num_threads(threads);
  // Prefill runs in child processes, forked before this process starts
  // OpenMP's thread pool (libgomp does not survive a fork once running).
  if (prefill) bench_prefill(prefill_max);
  const double triad = decode || batch ? bench::measure_triad_gbs(size_t{256} << 20, omp_get_max_threads(), 5) : 0;
  if (decode || batch) fmt::print("\nthreads {}, triad {:.1f} GB/s\n", omp_get_max_threads(), triad);
  if (decode) {
    fmt::print("\n## Decode attention, 8 KV heads x group 4, one token over the cached context, blocks {}\n\n",
               scattered ? "scattered in the pool" : "in pool order");
    fmt::print("| context | KV type | head dim | K+V MiB | ms | GB/s | of triad |\n|---:|---|---:|---:|---:|---:|---:|\n");
    for (auto [e, name] : {std::pair{KvElement::kF16, "f16"}, {KvElement::kQ8_0, "q8_0"}, {KvElement::kF32, "f32"}})
      for (int hd : {64, 128}) {
        const double gbs = bench_decode(decode_ctx, e, name, hd, decode_reps, scattered);
        fmt::print(" {:.0f}% |\n", 100 * gbs / triad);
      }
  }
  if (batch) {
    fmt::print("\n## Batched decode, {} sequences x {} KV heads x group {}, context {}, head dim {}, {} layers, "
               "blocks {}, threads {}\n\n| KV type | ns per key and row (x threads) | GB/s | of triad |\n"
               "|---|---:|---:|---:|\n",
               shape.seqs, shape.kv_heads, shape.group, shape.ctx, shape.head_dim, shape.layers,
               scattered ? "interleaved across sequences" : "in pool order", omp_get_max_threads());
    for (auto [e, name] : {std::pair{KvElement::kF16, "f16"}, {KvElement::kQ8_0, "q8_0"}, {KvElement::kF32, "f32"}}) {
      double gbs = 0;
      const double ns = bench_batch(shape, e, std::max(decode_reps, 5), scattered, &gbs);
      fmt::print("| {} | {:.2f} | {:.1f} | {:.0f}% |\n", name, ns, gbs, 100 * gbs / triad);
    }
  }
  return 0;
}

// The continuous-batching engine's flags, shared by the commands that drive an
// Engine (skiff batch, skiff bench-throughput): scheduler limits, the KV pool,
// threads and how the weights are loaded.
#pragma once
#include <CLI/CLI.hpp>
#include <omp.h>

#include <algorithm>
#include <string>
#include <thread>

#include "base/byte_size.h"
#include "base/error.h"
#include "engine/engine.h"
#include "model/loader.h"

namespace skiff::cli {

struct EngineFlags {
  int max_seqs = SchedulerOptions{}.max_seqs;
  int max_batch_tokens = SchedulerOptions{}.max_batch_tokens;
  std::string kv_type = "f16";
  std::string kv_mem;  // empty: the engine's default
  int block_size = 16;
  int max_model_len = 0;  // 0: the model's context
  int threads = 0;        // 0: every core
  bool no_prefix_caching = false;
  bool mmap = false;
};

inline void add_engine_flags(CLI::App* cmd, EngineFlags& f, bool with_max_model_len = true) {
  cmd->add_option("--max-seqs", f.max_seqs, "sequences running at once at most")
      ->capture_default_str()->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--max-batch-tokens", f.max_batch_tokens, "tokens per forward pass at most")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--kv-type", f.kv_type, "KV cache element type: f16, f32, q8_0")->capture_default_str();
  cmd->add_option("--kv-mem", f.kv_mem,
                  "KV pool size: bytes, 512M, 2G or a % of available memory (default: max-seqs full "
                  "sequences, at most 25% of available memory)");
  cmd->add_option("--block-size", f.block_size, "tokens per KV block")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  if (with_max_model_len)
    cmd->add_option("-c,--max-model-len", f.max_model_len,
                    "prompt + output tokens of one sequence at most (default: the model's context)")
        ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("-t,--threads", f.threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  cmd->add_flag("--no-prefix-caching", f.no_prefix_caching,
                "do not reuse the KV blocks of prompt prefixes seen before");
  cmd->add_flag("--mmap", f.mmap,
                "use weights from a file mapping (faster start) instead of reading them into huge-page memory (where, on AVX-512, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q4_K and F16 are also repacked for the kernels)");
}

// Throws Error on a bad --kv-type or --kv-mem.
inline EngineOptions engine_options(const EngineFlags& f) {
  EngineOptions o;
  o.scheduler.max_seqs = f.max_seqs;
  o.scheduler.max_batch_tokens = f.max_batch_tokens;
  o.scheduler.prefix_caching = !f.no_prefix_caching;
  const auto kv_type = kv_type_from_name(f.kv_type);
  if (!kv_type) fail("--kv-type {} is not one of f32, f16, q8_0", f.kv_type);
  o.kv_type = *kv_type;
  o.block_size = f.block_size;
  if (!f.kv_mem.empty()) {
    o.kv_mem_bytes = parse_byte_size(f.kv_mem);
    if (o.kv_mem_bytes == 0) fail("--kv-mem {}: the KV pool needs more than 0 bytes", f.kv_mem);
  }
  o.max_model_len = f.max_model_len;
  return o;
}

inline LoadOptions load_options(const EngineFlags& f) {
  return LoadOptions{f.mmap ? FileLoad::kMmap : FileLoad::kCopy};
}

// Sets OpenMP's thread count (0: every hardware thread) and returns it.
inline int set_threads(int threads) {
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  omp_set_num_threads(n);
  return n;
}

}  // namespace skiff::cli

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
#include "engine/llm.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace skiff::cli {

// Speculative decoding: a drafter and how many tokens it proposes per step.
struct SpecFlags {
  std::string draft;   // a draft model's path: --spec-method draft by default
  std::string method;  // empty: draft with --draft, else none
  int k = SpeculationOptions{}.k;
};

// with_k false: the command reads --spec-k itself (bench-spec: a list).
inline void add_spec_flags(CLI::App* cmd, SpecFlags& f, bool with_k = true) {
  cmd->add_option("--draft", f.draft, "draft model for speculative decoding (GGUF file or HF directory; same vocabulary as the model)");
  cmd->add_option("--spec-method", f.method, "speculative drafting: draft (a --draft model), ngram (prompt lookup), suffix (suffix decoding over the prompt, output and recent outputs) or none (default: draft with --draft, else none)");
  if (with_k)
    cmd->add_option("--spec-k", f.k, "tokens drafted per step at most")
        ->capture_default_str()->check(CLI::Range(1, kMaxSpecK));
}

inline SpecMethod spec_method(const SpecFlags& f) {
  if (f.method.empty()) return f.draft.empty() ? SpecMethod::kNone : SpecMethod::kDraft;
  const std::optional<SpecMethod> m = spec_method_from_name(f.method);
  if (!m) fail("--spec-method {} is not one of draft, ngram, suffix, none", f.method);
  if (*m == SpecMethod::kDraft && f.draft.empty()) fail("--spec-method draft needs --draft MODEL");
  if (*m != SpecMethod::kDraft && !f.draft.empty())
    fail("--draft is a draft model, used only by --spec-method draft (not {})", f.method);
  return *m;
}

// The draft model of --draft (nullptr without one), checked against the target.
inline std::unique_ptr<Model> load_draft(const SpecFlags& f, const LoadOptions& load,
                                         const Model& target, const Tokenizer& target_tokenizer) {
  if (spec_method(f) != SpecMethod::kDraft) return nullptr;
  return load_draft_model(f.draft, load, target, target_tokenizer);
}

inline SpeculationOptions speculation_options(const SpecFlags& f, Model* draft) {
  SpeculationOptions o;
  o.method = spec_method(f);
  o.draft = draft;
  o.k = f.k;
  return o;
}

// --mmap's help, for every command that loads a model.
inline constexpr const char* kMmapHelp =
    "use weights from a file mapping (faster start) instead of reading them into huge-page memory (where most "
    "quantized types, and on AVX-512 also F32, F16 and BF16, are repacked into panels for the kernels)";

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
  bool batch_invariant = false;
  SpecFlags spec;
};

inline void add_engine_flags(CLI::App* cmd, EngineFlags& f, bool with_max_model_len = true,
                             bool with_spec_k = true) {
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
                kMmapHelp);
  cmd->add_flag("--batch-invariant", f.batch_invariant,
                "bit-identical logits for a sequence in any batch also on weights as stored (--mmap, Q5_K), "
                "whose prefill then runs 3 tokens a pass (repacked weights are invariant anyway)");
  add_spec_flags(cmd, f.spec, with_spec_k);
}

// Throws Error on a bad --kv-type or --kv-mem. The draft model, if any, is
// loaded by the caller (load_draft) and set in speculation.draft.
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
  o.batch_invariant = f.batch_invariant;
  o.speculation = speculation_options(f.spec, nullptr);
  return o;
}

inline LoadOptions load_options(const EngineFlags& f) {
  return LoadOptions{f.mmap ? FileLoad::kMmap : FileLoad::kCopy};
}

// For the commands on an LLM: the engine, how weights load, and the draft model's path.
inline LlmOptions llm_options(const EngineFlags& f) {
  const bool drafts = spec_method(f.spec) == SpecMethod::kDraft;
  return LlmOptions{engine_options(f), load_options(f), drafts ? f.spec.draft : ""};
}

// Sets OpenMP's thread count (0: every hardware thread) and returns it.
inline int set_threads(int threads) {
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  omp_set_num_threads(n);
  return n;
}

}  // namespace skiff::cli

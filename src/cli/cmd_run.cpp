// skiff run: generate text from a prompt, streaming it to stdout; logs,
// progress and timings go to stderr so the text can be piped. One request on
// the continuous-batching engine, the path batch, serve and the library take.
#include <fmt/core.h>

#include <cstdio>

#include "base/byte_size.h"
#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/sampling_flags.h"
#include "engine/engine.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace skiff::cli {
namespace {

struct RunArgs {
  std::string model;
  std::string prompt;
  int n_predict = 256;
  int ctx_size = 0;  // 0: prompt + n_predict, capped at the model's context
  int threads = 0;   // 0: every core
  SamplingParams sampling = llama_cpp_sampling();  // the flags write straight into it
  int64_t seed = -1;  // -1: random
  bool mmap = false;  // weights used from the file mapping instead of read into memory
  std::string kv_type = "f16";
  std::string kv_mem;   // empty: blocks for exactly the context
  int block_size = 16;
  SpecFlags spec;
  ConstraintFlags constraint;
};

// What one generation took: the prefill is the first step (it samples the
// first token), decode the steps after it.
struct RunStats {
  int prompt_tokens = 0;
  double prefill_seconds = 0;      // the first step's forward pass
  double first_token_seconds = 0;  // from the request to its first token
  int generated_tokens = 0;
  int64_t decode_steps = 0;
  double decode_seconds = 0;
  int peak_blocks = 0;             // KV blocks in use after a step, at most
};

void print_speculation(const EngineMetrics& m) {
  if (m.spec_verifications == 0) return;
  fmt::print(stderr, "speculation     : {} drafted, {} accepted ({:.1f}%), {:.2f} accepted per step of {} verifications\n",
             m.spec_drafted_tokens, m.spec_accepted_tokens, 100 * m.spec_acceptance_rate(),
             m.spec_mean_accepted_length(), m.spec_verifications);
  std::string by_position;
  for (size_t i = 0; i < m.spec_drafted_at.size(); ++i)
    by_position += fmt::format(" {:.0f}%", 100.0 * m.spec_accepted_at[i] / std::max<int64_t>(1, m.spec_drafted_at[i]));
  fmt::print(stderr, "accepted at     :{} (by draft position)\n", by_position);
}

void print_stats(const Engine& engine, double load_seconds, const RunStats& s) {
  const Model& model = engine.model();
  const PagedKvCache& kv = engine.kv_cache();
  const double prefill_tps = s.prompt_tokens / s.prefill_seconds;
  const int decoded = std::max(0, s.generated_tokens - 1);  // the first token comes from the prefill
  const double decode_tps = s.decode_seconds > 0 ? decoded / s.decode_seconds : 0.0;
  const double steps_per_s = s.decode_seconds > 0 ? s.decode_steps / s.decode_seconds : 0.0;
  // Each decode step reads every weight once, plus the K/V cached so far
  // (on average the middle of the decoded range).
  const double weight_bytes = static_cast<double>(model.weights().decode_bytes_per_token(model.config()));
  const double mean_ctx = s.prompt_tokens + decoded / 2.0;
  const double kv_bytes = mean_ctx * static_cast<double>(kv.bytes_per_token());
  const double step_bytes = weight_bytes + kv_bytes;
  fmt::print(stderr, "\n\n");
  fmt::print(stderr, "load time       : {:9.2f} ms\n", load_seconds * 1e3);
  fmt::print(stderr, "prompt          : {:6d} tokens in {:9.2f} ms, {:9.2f} tok/s (prefill)\n",
             s.prompt_tokens, s.prefill_seconds * 1e3, prefill_tps);
  fmt::print(stderr, "first token     : {:9.2f} ms\n", s.first_token_seconds * 1e3);
  fmt::print(stderr, "generated       : {:6d} tokens, {} decode steps in {:9.2f} ms, {:9.2f} tok/s\n",
             s.generated_tokens, s.decode_steps, s.decode_seconds * 1e3, decode_tps);
  print_speculation(engine.metrics());
  const KvShape shape = kv.shape();
  fmt::print(stderr, "KV cache        : {} B/token (2 x {} layers x {} KV heads x {} B per {}-dim {} row)\n",
             kv.bytes_per_token(), shape.n_layers, shape.n_kv_heads, kv.row_bytes(),
             shape.head_dim, kv_type_name(kv.type()));
  fmt::print(stderr, "KV pool         : {:.2f} MiB, {} tokens ({} blocks of {}), {} blocks in use at most\n",
             kv.bytes() / 1048576.0, kv.capacity_tokens(), kv.pool().n_blocks(), kv.block_size(),
             s.peak_blocks);
  fmt::print(stderr, "decode bandwidth: {:.2f} GB/s ({:.2f} MB weights + {:.2f} MB KV per step)\n",
             step_bytes * steps_per_s / 1e9, weight_bytes / 1e6, kv_bytes / 1e6);
}

EngineOptions run_engine_options(const RunArgs& a, const Model& model, int ctx, int n_prompt) {
  EngineOptions o;
  o.scheduler.max_seqs = 1;
  o.scheduler.max_batch_tokens = std::max(o.scheduler.max_batch_tokens, n_prompt);  // one prefill pass
  const auto kv_type = kv_type_from_name(a.kv_type);
  if (!kv_type) fail("--kv-type {} is not one of f32, f16, q8_0", a.kv_type);
  o.kv_type = *kv_type;
  o.block_size = a.block_size;
  const ModelConfig& c = model.config();
  const size_t blocks_for_ctx = (ctx + a.block_size - 1) / a.block_size;
  o.kv_mem_bytes = a.kv_mem.empty() ? blocks_for_ctx * a.block_size *
                                          PagedKvCache::bytes_per_token({c.n_layers, c.n_kv_heads, c.head_dim}, *kv_type)
                                    : parse_byte_size(a.kv_mem);
  if (o.kv_mem_bytes == 0) fail("--kv-mem {}: the KV pool needs more than 0 bytes", a.kv_mem);
  o.max_model_len = ctx;
  o.speculation = speculation_options(a.spec, nullptr);
  return o;
}

// Steps the engine through one request, streaming its tokens to stdout through
// `decoder` (which has seen the prompt, so the text reads as one sequence).
RunStats generate(Engine& engine, std::vector<int32_t> prompt, const SamplingParams& params,
                  StreamDecoder& decoder) {
  RunStats s;
  s.prompt_tokens = static_cast<int>(prompt.size());
  Timer timer;
  engine.add_request(std::move(prompt), params, [&](const StreamDelta& delta) {
    if (s.generated_tokens == 0 && !delta.token_ids.empty()) s.first_token_seconds = timer.seconds();
    s.generated_tokens += static_cast<int>(delta.token_ids.size());
    for (int32_t t : delta.token_ids) std::fputs(decoder.push(t).c_str(), stdout);
    std::fflush(stdout);
  });
  Timer decode_timer;
  for (int64_t steps = 0; engine.has_unfinished(); ++steps) {
    if (steps == 1) decode_timer.reset();
    const int blocks_before = engine.kv_cache().pool().n_used();
    engine.step();
    s.peak_blocks = std::max({s.peak_blocks, blocks_before, engine.kv_cache().pool().n_used()});
    if (steps == 0) s.prefill_seconds = engine.metrics().forward_seconds;
  }
  s.decode_steps = engine.metrics().steps - 1;
  s.decode_seconds = s.decode_steps > 0 ? decode_timer.seconds() : 0.0;
  return s;
}

void run(const RunArgs& a) {
  set_threads(a.threads);
  Timer load_timer;
  const LoadOptions load{a.mmap ? FileLoad::kMmap : FileLoad::kCopy};
  auto model = load_model(a.model, load);
  auto tokenizer = Tokenizer::from_path(a.model);
  const auto draft = load_draft(a.spec, load, *model, *tokenizer);
  const double load_seconds = load_timer.seconds();
  const ModelConfig& c = model->config();
  fmt::print(stderr, "model {}: {} layers, dim {}, {} heads ({} KV), ffn {}, vocab {}, context {}\n",
             a.model, c.n_layers, c.dim, c.n_heads, c.n_kv_heads, c.ffn_dim, c.vocab_size, c.max_ctx);

  std::vector<int32_t> prompt = tokenizer->encode(a.prompt, /*add_special=*/true, /*parse_special=*/true);
  if (prompt.empty()) fail("the prompt encodes to no tokens");
  int ctx = a.ctx_size > 0 ? a.ctx_size : static_cast<int>(prompt.size()) + a.n_predict;
  ctx = std::min(ctx, c.max_ctx);
  if (static_cast<int>(prompt.size()) >= ctx)
    fail("the prompt has {} tokens but the context holds {}, leaving no room for output (see --ctx-size)",
         prompt.size(), ctx);
  EngineOptions options = run_engine_options(a, *model, ctx, static_cast<int>(prompt.size()));
  options.speculation.draft = draft.get();
  Engine engine(*model, *tokenizer, options);

  SamplingParams params = a.sampling;
  params.max_tokens = std::max(1, a.n_predict);
  if (a.seed >= 0) params.seed = static_cast<uint64_t>(a.seed);
  a.constraint.apply(params);

  // Echo the prompt, then stream the output through the same decoder, so the
  // text reads as one detokenized sequence.
  StreamDecoder decoder(*tokenizer);
  for (int32_t t : prompt) std::fputs(decoder.push(t).c_str(), stdout);
  std::fflush(stdout);
  const RunStats stats = a.n_predict > 0 ? generate(engine, prompt, params, decoder) : RunStats{};
  std::fputs(decoder.flush().c_str(), stdout);
  std::fflush(stdout);
  print_stats(engine, load_seconds, stats);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "generate text from a prompt");
  cmd->add_option("-m,--model", args->model, "GGUF file or Hugging Face directory")->required();
  cmd->add_option("-p,--prompt", args->prompt, "prompt text")->default_str("");
  cmd->add_option("-n,--n-predict", args->n_predict, "tokens to generate")
      ->capture_default_str()->check(CLI::Range(0, 1 << 24));
  cmd->add_option("-c,--ctx-size", args->ctx_size, "context size (default: prompt + n, at most the model's)")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("-t,--threads", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  add_sampling_flags(cmd, args->sampling, "");
  cmd->add_option("-s,--seed", args->seed, "random seed (-1: random)")->capture_default_str();
  cmd->add_option("--kv-type", args->kv_type, "KV cache element type: f16, f32, q8_0")->capture_default_str();
  cmd->add_option("--kv-mem", args->kv_mem, "KV pool size: bytes, 512M, 2G or a % of available memory (default: the context)");
  cmd->add_option("--block-size", args->block_size, "tokens per KV block")->capture_default_str()->check(CLI::Range(1, 4096));
  cmd->add_flag("--mmap", args->mmap, kMmapHelp);
  add_spec_flags(cmd, args->spec);
  args->constraint.add_to(cmd);
  cmd->callback([args] { run(*args); });
}

}  // namespace skiff::cli

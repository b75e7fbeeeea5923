// skiff run: generate text from a prompt, streaming it to stdout; logs,
// progress and timings go to stderr so the text can be piped.
#include <fmt/core.h>
#include <omp.h>

#include <cstdio>
#include <thread>

#include "base/byte_size.h"
#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/sampling_flags.h"
#include "engine/generator.h"
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
};

void print_stats(const Model& model, const PagedKvCache& kv, double load_seconds,
                 const GenerationStats& s) {
  const double prefill_tps = s.prompt_tokens / s.prefill_seconds;
  const double decode_tps = s.decode_steps ? s.decode_steps / s.decode_seconds : 0.0;
  // Each decode step reads every weight once, plus the K/V cached so far
  // (on average the middle of the decoded range).
  const double weight_bytes = static_cast<double>(model.weights().decode_bytes_per_token());
  const double mean_ctx = s.prompt_tokens + s.decode_steps / 2.0;
  const double kv_bytes = mean_ctx * static_cast<double>(kv.bytes_per_token());
  const double step_bytes = weight_bytes + kv_bytes;
  fmt::print(stderr, "\n\n");
  fmt::print(stderr, "load time       : {:9.2f} ms\n", load_seconds * 1e3);
  fmt::print(stderr, "prompt          : {:6d} tokens in {:9.2f} ms, {:9.2f} tok/s (prefill)\n",
             s.prompt_tokens, s.prefill_seconds * 1e3, prefill_tps);
  fmt::print(stderr, "first token     : {:9.2f} ms\n", s.first_token_seconds * 1e3);
  fmt::print(stderr, "generated       : {:6d} tokens, {} decode steps in {:9.2f} ms, {:9.2f} tok/s\n",
             s.generated_tokens, s.decode_steps, s.decode_seconds * 1e3, decode_tps);
  const KvShape shape = kv.shape();
  fmt::print(stderr, "KV cache        : {} B/token (2 x {} layers x {} KV heads x {} B per {}-dim {} row)\n",
             kv.bytes_per_token(), shape.n_layers, shape.n_kv_heads, kv.row_bytes(),
             shape.head_dim, kv_type_name(kv.type()));
  fmt::print(stderr, "KV pool         : {:.2f} MiB, {} tokens ({} blocks of {}), {} blocks in use at the end\n",
             kv.bytes() / 1048576.0, kv.capacity_tokens(), kv.pool().n_blocks(), kv.block_size(),
             kv.pool().n_used());
  fmt::print(stderr, "decode bandwidth: {:.2f} GB/s ({:.2f} MB weights + {:.2f} MB KV per step)\n",
             step_bytes * decode_tps / 1e9, weight_bytes / 1e6, kv_bytes / 1e6);
}

void run(const RunArgs& a) {
  omp_set_num_threads(a.threads > 0 ? a.threads : static_cast<int>(std::thread::hardware_concurrency()));
  Timer load_timer;
  auto model = load_model(a.model, LoadOptions{a.mmap ? FileLoad::kMmap : FileLoad::kCopy});
  auto tokenizer = Tokenizer::from_path(a.model);
  const double load_seconds = load_timer.seconds();
  const ModelConfig& c = model->config();
  fmt::print(stderr, "model {}: {} layers, dim {}, {} heads ({} KV), ffn {}, vocab {}, context {}\n",
             a.model, c.n_layers, c.dim, c.n_heads, c.n_kv_heads, c.ffn_dim, c.vocab_size, c.max_ctx);

  std::vector<int32_t> prompt = tokenizer->encode(a.prompt, /*add_special=*/true, /*parse_special=*/true);
  if (prompt.empty()) fail("the prompt encodes to no tokens");
  int ctx = a.ctx_size > 0 ? a.ctx_size : static_cast<int>(prompt.size()) + a.n_predict;
  ctx = std::min(ctx, c.max_ctx);
  model->set_context_length(ctx);
  if (static_cast<int>(prompt.size()) > ctx)
    fail("the prompt has {} tokens but the context holds {} (see --ctx-size)", prompt.size(), ctx);
  const auto kv_type = kv_type_from_name(a.kv_type);
  if (!kv_type) fail("--kv-type {} is not one of f32, f16, q8_0", a.kv_type);
  PagedKvCache kv = a.kv_mem.empty()
                        ? model->make_kv_cache(1, ctx, *kv_type, a.block_size)
                        : PagedKvCache::with_memory({c.n_layers, c.n_kv_heads, c.head_dim}, *kv_type,
                                                    a.block_size, parse_byte_size(a.kv_mem), ctx);
  if (!a.kv_mem.empty()) kv.create_sequence();

  GenerateOptions options;
  options.max_tokens = a.n_predict;
  options.sampling = a.sampling;
  if (a.seed >= 0) options.sampling.seed = static_cast<uint64_t>(a.seed);
  options.is_end_token = [&](int32_t t) { return tokenizer->is_end_of_generation(t); };

  // Echo the prompt, then stream the output through the same decoder, so the
  // text reads as one detokenized sequence.
  StreamDecoder decoder(*tokenizer);
  for (int32_t t : prompt) std::fputs(decoder.push(t).c_str(), stdout);
  std::fflush(stdout);
  const GenerationStats stats = generate(*model, kv, prompt, options, [&](int32_t token) {
    std::fputs(decoder.push(token).c_str(), stdout);
    std::fflush(stdout);
    return true;
  });
  std::fputs(decoder.flush().c_str(), stdout);
  std::fflush(stdout);
  print_stats(*model, kv, load_seconds, stats);
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
  cmd->add_flag("--mmap", args->mmap, "use weights from a file mapping (faster start) instead of reading them into huge-page memory (where, on AVX-512, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q4_K and F16 are also repacked for the kernels)");
  cmd->callback([args] { run(*args); });
}

}  // namespace skiff::cli

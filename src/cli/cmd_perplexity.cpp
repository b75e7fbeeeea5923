// skiff perplexity: a model's perplexity on a text file, as llama-perplexity
// reports it (running figures [1]x,[2]y,..., then "Final estimate: PPL = X +/- Y"),
// with the evaluation speed at the end. How a user checks a quantization.
#include <fmt/core.h>
#include <omp.h>

#include <cstdio>
#include <thread>

#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "engine/perplexity.h"
#include "model/loader.h"
#include "tokenizer/hf_files.h"

namespace skiff::cli {
namespace {

struct PerplexityArgs {
  std::string model;
  std::string file;
  PerplexityOptions options;
  std::string kv_type = "f16";
  int threads = 0;
  bool mmap = false;
};

void run_perplexity(PerplexityArgs a) {
  omp_set_num_threads(a.threads > 0 ? a.threads : static_cast<int>(std::thread::hardware_concurrency()));
  const auto kv_type = kv_type_from_name(a.kv_type);
  if (!kv_type) fail("--kv-type {} is not one of f32, f16, q8_0", a.kv_type);
  a.options.kv_type = *kv_type;
  const std::string text = hf::read_file(a.file);
  Timer load_timer;
  auto model = load_model(a.model, LoadOptions{a.mmap ? FileLoad::kMmap : FileLoad::kCopy});
  auto tokenizer = Tokenizer::from_path(a.model);
  fmt::print(stderr, "perplexity: loaded {} in {:.2f} s; context {}, batch {}\n", a.model, load_timer.seconds(),
             a.options.n_ctx, std::min(a.options.n_batch, a.options.n_ctx));
  const PerplexityResult r = perplexity(*model, *tokenizer, text, a.options, [](int chunk, double ppl) {
    std::printf("[%d]%.4f,", chunk, ppl);  // a comma after each, as llama-perplexity prints them
    std::fflush(stdout);
  });
  std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_error);
  const double evaluated = static_cast<double>(r.n_chunks) * a.options.n_ctx;
  fmt::print(stderr, "perplexity: {} tokens in the text, {} chunks of {}, {} predictions scored; {:.2f} s, {:.1f} tok/s\n",
             r.n_tokens, r.n_chunks, a.options.n_ctx, r.n_scored, r.seconds, evaluated / r.seconds);
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
  auto args = std::make_shared<PerplexityArgs>();
  CLI::App* cmd = app.add_subcommand("perplexity", "perplexity of a model on a text file (as llama-perplexity)");
  cmd->add_option("-m,--model", args->model, "GGUF file or Hugging Face directory")->required();
  cmd->add_option("-f,--file", args->file, "text file")->required();
  cmd->add_option("-c,--ctx-size", args->options.n_ctx, "tokens per chunk")
      ->capture_default_str()->check(CLI::Range(4, 1 << 20));
  cmd->add_option("--chunks", args->options.max_chunks, "chunks to evaluate at most (0: all)")
      ->capture_default_str()->check(CLI::Range(0, 1 << 30));
  cmd->add_option("-b,--batch-size", args->options.n_batch, "tokens per forward pass")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--kv-type", args->kv_type, "KV cache element type: f16, f32, q8_0")->capture_default_str();
  cmd->add_option("-t,--threads", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  cmd->add_flag("--mmap", args->mmap, "use weights from the file mapping instead of reading them into memory");
  cmd->callback([args] { run_perplexity(*args); });
}

}  // namespace skiff::cli

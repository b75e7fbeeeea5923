// skiff chat: an interactive chat in the terminal, as llama-cli's
// conversation mode. Each turn renders the whole conversation through the
// model's chat template and runs it on the engine, whose prefix cache keeps
// the KV of every earlier turn: only the new message and the reply are
// computed. Replies stream to stdout; per-turn figures go to stderr.
#include <fmt/core.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "base/timer.h"
#include "chat/chat_template.h"
#include "cli/chat_template_source.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/sampling_flags.h"
#include "engine/llm.h"

namespace skiff::cli {
namespace {

struct ChatArgs {
  std::string model;
  std::string system;
  std::string chat_template;  // a file; empty: the model's own
  SamplingParams sampling = llama_cpp_sampling();
  int max_tokens = 0;  // 0: the context left
  int64_t seed = -1;
  EngineFlags engine;
};

void chat(const ChatArgs& a) {
  set_threads(a.engine.threads);
  const std::optional<std::string> source = chat_template_source(a.model, a.chat_template);
  if (!source) fail("{} has no chat template: give one with --chat-template FILE", a.model);
  const ChatTemplate chat_template(*source);
  LLM llm(a.model, llm_options(a.engine));
  Engine& engine = llm.engine();
  const Tokenizer& tokenizer = llm.tokenizer();
  ChatTemplateInputs in;
  in.add_generation_prompt = true;
  if (tokenizer.bos_id() >= 0) in.bos_token = tokenizer.token_text(tokenizer.bos_id());
  if (tokenizer.eos_id() >= 0) in.eos_token = tokenizer.token_text(tokenizer.eos_id());
  if (!a.system.empty()) in.messages.push_back({{"role", "system"}, {"content", a.system}});
  const bool tty = isatty(fileno(stdin));
  fmt::print(stderr, "chat: {} loaded; type a message (/reset forgets the conversation, /exit or EOF ends)\n", a.model);

  for (int turn = 0;; ++turn) {
    if (tty) fmt::print(stderr, "> ");
    std::string line;
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line == "/reset") {
      in.messages.erase(in.messages.begin() + (a.system.empty() ? 0 : 1), in.messages.end());
      continue;
    }
    if (line.empty()) continue;
    in.messages.push_back({{"role", "user"}, {"content", line}});
    const std::vector<int32_t> prompt = tokenizer.encode(chat_template.render(in), false, true);
    SamplingParams params = a.sampling;
    const int left = engine.max_model_len() - static_cast<int>(prompt.size());
    if (left < 1) fail("chat: the conversation ({} tokens) fills the context of {}; /reset to start over", prompt.size(), engine.max_model_len());
    params.max_tokens = a.max_tokens > 0 ? std::min(a.max_tokens, left) : left;
    if (a.seed >= 0) params.seed = static_cast<uint64_t>(a.seed) + turn;

    const EngineMetrics before = engine.metrics();
    Timer timer;
    engine.add_request(prompt, params, [](const StreamDelta& d) {
      fmt::print("{}", d.text);
      std::fflush(stdout);
    });
    const std::vector<RequestOutput> out = engine.run_to_completion();
    const CompletionOutput& reply = out.at(0).outputs.at(0);
    fmt::print("\n");
    std::fflush(stdout);
    in.messages.push_back({{"role", "assistant"}, {"content", reply.text}});
    const EngineMetrics after = engine.metrics();
    const double s = timer.seconds();
    fmt::print(stderr, "chat: {} prompt tokens ({} from the cache), {} generated in {:.2f} s ({:.1f} tok/s)\n",
               prompt.size(), after.prefix_cache_hits - before.prefix_cache_hits, reply.token_ids.size(), s,
               s > 0 ? reply.token_ids.size() / s : 0.0);
  }
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto args = std::make_shared<ChatArgs>();
  CLI::App* cmd = app.add_subcommand("chat", "interactive chat in the terminal through the model's chat template");
  cmd->add_option("-m,--model", args->model, "GGUF file or Hugging Face directory")->required();
  cmd->add_option("--system", args->system, "a system message to start the conversation");
  cmd->add_option("--chat-template", args->chat_template, "a Jinja chat template file instead of the model's");
  cmd->add_option("-n,--max-tokens", args->max_tokens, "tokens per reply at most (0: the context left)")
      ->capture_default_str()->check(CLI::Range(0, 1 << 24));
  add_sampling_flags(cmd, args->sampling, "");
  cmd->add_option("-s,--seed", args->seed, "seed of the first reply (the next ones: +1 each; -1: random)")
      ->capture_default_str();
  add_engine_flags(cmd, args->engine);
  cmd->callback([args] { chat(*args); });
}

}  // namespace skiff::cli

// skiff serve: an OpenAI-compatible HTTP server on the continuous-batching
// engine. It listens first (GET /health answers 503 while the model loads),
// then serves until SIGINT or SIGTERM, which cancel what is in flight (the
// clients get finish_reason "abort") and exit cleanly.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <filesystem>
#include <atomic>
#include <memory>
#include <thread>
#include <optional>
#include <string>

#include "base/timer.h"
#include "chat/chat_output.h"
#include "chat/chat_template.h"
#include "cli/chat_template_source.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "engine/llm.h"
#include "server/api_server.h"

namespace skiff::cli {
namespace {

struct ServeArgs {
  std::string model;
  std::string served_model_name;
  std::string chat_template;  // a file; empty: the model's own
  std::string tool_call_parser, reasoning_parser;  // empty: found from the template
  int max_queue = 1024;
  bool special_tokens_in_content = false;
  // A step's target length: a long prompt's chunks are sized to it (StepBudget).
  double step_target_ms = 150;
  ServerOptions server;
  EngineFlags engine;
};

// SIGINT and SIGTERM are blocked in every thread and taken by sigwait in the
// main one; SIGPIPE (a write to a client that left) is ignored, the write fails.
sigset_t block_shutdown_signals() {
  signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);  // wakes the signal thread when the engine stops by itself
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Memory a request frees goes back to the system rather than staying with
// the thread that freed it. malloc_trim gives back free chunks amid every
// arena, but a free top only in the main one, and two things of glibc's left
// a thread's arena a large free top after a burst of 16 MiB bodies (2-17 MiB
// of RSS in 4 of 8 runs, none with these settings over 7; docs/reliability.md):
// - it raises its mmap threshold to the largest block freed (up to 32 MiB)
//   and its trim threshold to twice that; fixed thresholds stop the raising:
//   blocks of 128 KiB or more (a body, a prompt's ids, a logits row: a few
//   per request, none per step) are mapped and unmapped, and a free top past
//   1 MiB is returned when a free reaches it;
// - small blocks freed into fastbins join the top only when malloc_trim
//   consolidates them, after the point where a free would trim it: no
//   fastbins (the per-thread cache still serves small blocks quickly).
void return_freed_memory_promptly() {
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
  mallopt(M_MXFAST, 0);
}

std::string default_model_name(const std::string& path) {
  std::filesystem::path p(path);
  if (p.filename().empty()) p = p.parent_path();  // "dir/"
  return p.filename().string();
}

void serve(ServeArgs& a) {
  return_freed_memory_promptly();
  const sigset_t signals = block_shutdown_signals();
  const int threads = set_threads(a.engine.threads);
  const EngineOptions options = engine_options(a.engine);

  const std::optional<std::string> template_source = chat_template_source(a.model, a.chat_template);
  const std::optional<ChatTemplate> chat_template =
      template_source ? std::optional<ChatTemplate>(ChatTemplate(*template_source)) : std::nullopt;
  if (!chat_template)
    fmt::print(stderr, "serve: {} has no chat template: /v1/chat/completions will answer 400 (--chat-template FILE gives one)\n", a.model);
  // How replies write tool calls and reasoning: named, else read from the template.
  std::unique_ptr<ChatSyntax> syntax;
  if (!a.tool_call_parser.empty() || !a.reasoning_parser.empty()) {
    syntax = chat_syntax_named(a.tool_call_parser, a.reasoning_parser);
    if (!syntax)
      fail("unknown --tool-call-parser '{}' or --reasoning-parser '{}' (tool-call parsers: {}; reasoning parsers: {})",
           a.tool_call_parser, a.reasoning_parser, fmt::join(chat_syntax_names(), ", "),
           fmt::join(chat_reasoning_names(), ", "));
  } else if (template_source) {
    syntax = chat_syntax_for_template(*template_source);
  }
  if (syntax)
    fmt::print(stderr, "serve: replies parsed as tool calls '{}', reasoning '{}'\n", syntax->name(),
               syntax->reasoning_name().empty() ? "none" : syntax->reasoning_name());

  ApiServer server(a.server);
  const int port = server.start();
  fmt::print(stderr, "serve: listening on http://{}:{} (loading {})\n", a.server.host, port, a.model);

  Timer load_timer;
  LlmOptions llm_opts = llm_options(a.engine);
  llm_opts.engine.scheduler.step_target_seconds = a.step_target_ms / 1000;
  LLM llm(a.model, llm_opts);
  ServingEngine engine(llm.engine(), a.max_queue);
  const ServedModel served{{a.served_model_name.empty() ? default_model_name(a.model) : a.served_model_name,
                            llm.tokenizer(), llm.engine().max_model_len(), chat_template ? &*chat_template : nullptr,
                            syntax.get(), a.special_tokens_in_content},
                           engine};
  server.serve(served);
  fmt::print(stderr, "serve: ready in {:.2f} s: model \"{}\", threads {}, max_seqs {}, max_model_len {}, KV pool {} tokens\n",
             load_timer.seconds(), served.name, threads, options.scheduler.max_seqs,
             llm.engine().max_model_len(), llm.engine().kv_cache().capacity_tokens());

  // The engine runs here, on the thread that loaded the model (see
  // ServingEngine); a thread of its own takes SIGINT/SIGTERM.
  std::atomic<bool> signalled = false;
  std::thread signal_thread([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (signal_number != SIGUSR1) {
      signalled = true;
      fmt::print(stderr, "serve: {}: cancelling requests in flight and stopping\n", strsignal(signal_number));
    }
    engine.stop();
  });
  engine.run();
  if (!signalled) pthread_kill(signal_thread.native_handle(), SIGUSR1);  // the engine stopped by itself
  signal_thread.join();
  server.stop();
  const EngineMetrics m = engine.metrics();
  fmt::print(stderr, "serve: served {} requests ({} cancelled): {} prompt tokens, {} generated\n",
             m.requests_finished, m.requests_cancelled, m.prompt_tokens, m.generation_tokens);
}

// What one client may hold and send: connections, time per phase of a
// request, sizes (server/http_server.h).
void add_connection_flags(CLI::App* cmd, ServerOptions& server) {
  HttpLimits& limits = server.limits;
  cmd->add_option("--max-connections,--http-threads", limits.max_connections,
                  "connections open at once; past it a new one gets 503 and is closed")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-connections-per-client", limits.max_connections_per_client,
                  "connections open at once from one address; past it a new one gets 503 and is closed")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--idle-timeout", limits.idle_timeout_s, "seconds a connection may wait idle for its next request")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--header-timeout", limits.header_timeout_s,
                  "seconds for a request's line and headers, from their first byte; past it 408")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--body-timeout", limits.body_timeout_s, "seconds for a request's body, after its headers; past it 408")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--write-timeout", limits.write_timeout_s,
                  "seconds a client may take no bytes of its response; past it the connection closes and the "
                  "request is cancelled")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-header-bytes", limits.max_header_bytes, "request line and headers larger than this get 431")
      ->capture_default_str()->check(CLI::Range(size_t{1024}, size_t{1} << 30));
  cmd->add_option("--max-body", limits.max_body_bytes,
                  "request bodies larger than this many bytes (after chunked decoding) get 413")
      ->capture_default_str();
  cmd->add_option("--max-body-memory", limits.max_body_memory,
                  "bytes of request bodies held at once over all connections; past it a request gets 503")
      ->capture_default_str()->check(CLI::Range(size_t{65536}, size_t{1} << 40));
  cmd->add_option("--max-stream-buffer", limits.max_stream_buffer,
                  "bytes a stream may fall behind its client (past the kernel's buffer); past it the connection "
                  "closes and the request is cancelled")
      ->capture_default_str()->check(CLI::Range(size_t{4096}, size_t{1} << 34));
  cmd->add_option("--max-response-bytes", limits.max_response_bytes,
                  "a response's body at most; a larger one is cut (400, or an error event in a stream)")
      ->capture_default_str()->check(CLI::Range(size_t{4096}, size_t{1} << 40));
  cmd->add_option("--sse-keepalive", limits.sse_keepalive_s,
                  "seconds a stream may send nothing before a comment line keeps proxies from closing it")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--io-threads", server.io_threads, "threads that run every connection's I/O")
      ->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--handler-threads", server.handler_threads,
                  "threads that parse requests and render responses (half of them at most parse bodies of 1 MiB or more)")
      ->capture_default_str()->check(CLI::Range(1, 64));
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server (/v1/completions, /v1/chat/completions, ...)");
  cmd->add_option("-m,--model", args->model, "GGUF file or Hugging Face directory")->required();
  cmd->add_option("--host", args->server.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", args->server.port, "port (0: any free one)")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd->add_option("--api-key", args->server.api_key,
                  "require Authorization: Bearer KEY on the API routes (the chat page at / asks for it)");
  cmd->add_option("--served-model-name", args->served_model_name, "the model's name in the API (default: the file name)");
  cmd->add_option("--chat-template", args->chat_template, "a Jinja chat template file instead of the model's");
  cmd->add_option("--tool-call-parser", args->tool_call_parser,
                  "how replies write tool calls (vLLM's names: hermes, llama3_json, mistral, ...; default: from the template)");
  cmd->add_option("--reasoning-parser", args->reasoning_parser,
                  "how replies mark reasoning (vLLM's names: deepseek_r1, qwen3, ...; default: from the template)");
  cmd->add_option("--max-queue", args->max_queue, "requests waiting at most; past it new ones get 503 (0: unbounded)")
      ->capture_default_str()->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--step-target-ms", args->step_target_ms,
                  "milliseconds an engine step should last: prompt chunks are sized from measured step times so that "
                  "running streams get a token about this often during a long prompt (0: --max-batch-tokens alone)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));
  cmd->add_flag("--special-tokens-in-content", args->special_tokens_in_content,
                "a chat's message contents (and tool results, arguments, kwargs) spelling a control token such as "
                "<|im_start|> become that token; by default they are plain text (for trusted clients only)");
  add_connection_flags(cmd, args->server);
  cmd->add_flag("!--no-log-requests", args->server.log_requests, "do not log each request on stderr");
  cmd->add_flag("!--no-webui", args->server.webui, "do not serve the chat page at / (then / is a 404)");
  add_engine_flags(cmd, args->engine);
  cmd->callback([args] { serve(*args); });
}

}  // namespace skiff::cli

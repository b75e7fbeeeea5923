// The server's endpoints: each a handler over the ServingEngine, parsing an
// OpenAI (or vLLM) request, running it, and writing the response. Handlers
// throw RequestError for what the client must fix; the router answers it.
#pragma once
#include <httplib.h>

#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/generation.h"
#include "server/openai_shapes.h"
#include "server/serving_engine.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

class ChatTemplate;

// What the handlers serve, once the model has loaded.
struct ServedModel {
  std::string name;
  const Tokenizer& tokenizer;
  ServingEngine& engine;
  const ChatTemplate* chat_template = nullptr;  // none: chat requests are refused
};

using Handler = std::function<void(const ServedModel&, const nlohmann::ordered_json& body,
                                   const httplib::Request&, httplib::Response&)>;

void handle_completions(const ServedModel&, const nlohmann::ordered_json& body, const httplib::Request&,
                        httplib::Response&);
void handle_chat_completions(const ServedModel&, const nlohmann::ordered_json& body, const httplib::Request&,
                             httplib::Response&);
void handle_tokenize(const ServedModel&, const nlohmann::ordered_json& body, const httplib::Request&,
                     httplib::Response&);
void handle_detokenize(const ServedModel&, const nlohmann::ordered_json& body, const httplib::Request&,
                       httplib::Response&);

// A /v1/completions request: its prompts as tokens, checked against the
// vocabulary, the sampling fields and the context, before anything runs.
struct CompletionRequest {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::string> prompt_texts;  // what echo repeats
  SamplingParams params;
  StreamFields stream;
  bool echo = false;
};
CompletionRequest parse_completion_request(const ServedModel& served, const nlohmann::ordered_json& body);

// A /v1/chat/completions request: the conversation rendered and tokenized, the
// sampling fields and the context checked.
struct ChatRequest {
  std::vector<int32_t> prompt;
  SamplingParams params;
  std::optional<int> top_logprobs;  // set when logprobs is true
  StreamFields stream;
};
ChatRequest parse_chat_request(const ServedModel& served, const nlohmann::ordered_json& body);

// The conversation of a chat request (its messages, add_generation_prompt,
// tools, chat_template_kwargs) rendered by the model's chat template. Throws
// RequestError 400 when the model has none or the template fails.
std::string render_chat(const ServedModel& served, const nlohmann::ordered_json& body, bool add_generation_prompt);
// The same for any front end (the Python package): chat_template null refuses.
std::string render_chat(const ChatTemplate* chat_template, const Tokenizer& tokenizer,
                        const nlohmann::ordered_json& body, bool add_generation_prompt);

// Prometheus text exposition of the engine's metrics, with vLLM's names.
std::string prometheus_metrics(const EngineMetrics& m, const std::string& model_name, int64_t rejected);

// The client's connection, for noticing that it went away.
ClientSocket client_socket(const httplib::Request& req);

// Streams a generation as server-sent events: `opening` first, each event as
// on_event renders it, then on_end's text and "data: [DONE]". The client
// leaving, or a failed write, cancels the generation.
using EventRenderer = std::function<std::string(const ResponseChannel::Event&)>;
void stream_events(httplib::Response& res, std::shared_ptr<Generation> generation, ClientSocket client,
                   std::string opening, EventRenderer on_event, std::function<std::string()> on_end);

// Checks the request's "model" (absent, or the served name; else 404).
void check_model_name(const ServedModel& served, const nlohmann::ordered_json& body);
// The model's maximum context length exceeded (400, with both counts).
void check_context(const ServedModel& served, size_t prompt_tokens, int max_tokens);

}  // namespace skiff

// The server's endpoints: each a handler over the ServingEngine, parsing an
// OpenAI (vLLM, Anthropic) request, running it, and writing the response. Handlers
// throw RequestError for what the client must fix; the router answers it.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/api_model.h"
#include "api/chat_request.h"
#include "api/completion_request.h"
#include "server/generation.h"
#include "server/http_message.h"
#include "server/openai_shapes.h"
#include "server/serving_engine.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

// What the handlers serve, once the model has loaded: what requests are read
// against, and the engine that runs them.
struct ServedModel : ApiModel {
  ServingEngine& engine;
};

// Whose shapes a route's errors and event streams take: OpenAI's (every
// route but Anthropic's), Anthropic's (/v1/messages and what is under it) or
// OpenAI's Responses (/v1/responses: OpenAI's errors; its streams are named
// events, numbered, with no "data: [DONE]").
enum class ApiDialect { kOpenAI, kAnthropic, kResponses };

using Handler = std::function<void(const ServedModel&, const nlohmann::ordered_json& body,
                                   const HttpRequest&, HttpResponse&)>;

void handle_completions(const ServedModel&, const nlohmann::ordered_json& body, const HttpRequest&,
                        HttpResponse&);
void handle_chat_completions(const ServedModel&, const nlohmann::ordered_json& body, const HttpRequest&,
                             HttpResponse&);
void handle_tokenize(const ServedModel&, const nlohmann::ordered_json& body, const HttpRequest&, HttpResponse&);
void handle_detokenize(const ServedModel&, const nlohmann::ordered_json& body, const HttpRequest&, HttpResponse&);
void handle_messages(const ServedModel&, const nlohmann::ordered_json& body, const HttpRequest&, HttpResponse&);
void handle_count_tokens(const ServedModel&, const nlohmann::ordered_json& body, const HttpRequest&, HttpResponse&);
class ResponseStore;
// POST /v1/responses, previous_response_id read from (and responses kept in) the store.
void handle_responses(const ServedModel&, ResponseStore& store, const nlohmann::ordered_json& body, const HttpRequest&,
                      HttpResponse&);
// GET /v1/responses/ID: a kept response as it was answered (404 where none is).
void handle_stored_response(ResponseStore& store, const std::string& id, HttpResponse&);

// GET /kv/prefix_blocks?limit=N: the prefix cache's block hashes, most
// recently used first (ServingEngine::prefix_cache), the pool's size and block size.
void handle_prefix_blocks(const ServedModel&, const HttpRequest&, HttpResponse&);

// Prometheus text exposition of the engine's metrics, with vLLM's names.
std::string prometheus_metrics(const EngineMetrics& m, const std::string& model_name, int64_t rejected);

// Streams a generation as server-sent events: `opening` first, each event as
// on_event renders it, then its failure if a completion failed (OpenAI:
// {"error": ...}, then on_end's text and "data: [DONE]"; Anthropic and
// Responses: an error event, the stream's end), else on_end's text (and
// OpenAI's "data: [DONE]").
// The client leaving, or a failed write, cancels the generation (the HTTP
// layer drops the response). on_error, where given, renders the stream's
// error event in place of the dialect's (Responses: numbered in its sequence).
using EventRenderer = std::function<std::string(const ResponseChannel::Event&)>;
using StreamErrorRenderer = std::function<std::string(int status, const std::string& message, const std::string& param)>;
void stream_events(HttpResponse& res, std::shared_ptr<Generation> generation, std::string opening,
                   EventRenderer on_event, std::function<std::string()> on_end,
                   ApiDialect dialect = ApiDialect::kOpenAI, StreamErrorRenderer on_error = nullptr);

// Answers once the generation has finished: its failure as an error, else
// what respond writes (which may throw RequestError, answered as an error).
void respond_when_done(HttpResponse& res, std::shared_ptr<Generation> generation,
                       std::function<void(HttpResponse&)> respond, ApiDialect dialect = ApiDialect::kOpenAI);

// Writes an error in the dialect's shape (and status) as the response.
void send_error(HttpResponse& res, int status, const std::string& message, const std::string& param = {},
                ApiDialect dialect = ApiDialect::kOpenAI);

// Runs `answer`; what it throws becomes the error response: a RequestError
// its status and field, another Error a 400, running out of memory a 503.
void answer_or_send_error(HttpResponse& res, const std::function<void()>& answer,
                          ApiDialect dialect = ApiDialect::kOpenAI);

}  // namespace skiff

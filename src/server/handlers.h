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

#include "api/api_model.h"
#include "api/chat_request.h"
#include "api/completion_request.h"
#include "server/generation.h"
#include "server/openai_shapes.h"
#include "server/serving_engine.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

// What the handlers serve, once the model has loaded: what requests are read
// against, and the engine that runs them.
struct ServedModel : ApiModel {
  ServingEngine& engine;
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

// Prometheus text exposition of the engine's metrics, with vLLM's names.
std::string prometheus_metrics(const EngineMetrics& m, const std::string& model_name, int64_t rejected);

// The client's connection, for noticing that it went away.
ClientSocket client_socket(const httplib::Request& req);

// Streams a generation as server-sent events: `opening` first, each event as
// on_event renders it, then its failure if a completion failed ({"error": ...}),
// on_end's text and "data: [DONE]". The client
// leaving, or a failed write, cancels the generation.
using EventRenderer = std::function<std::string(const ResponseChannel::Event&)>;
void stream_events(httplib::Response& res, std::shared_ptr<Generation> generation, ClientSocket client,
                   std::string opening, EventRenderer on_event, std::function<std::string()> on_end);

}  // namespace skiff

#include "server/api_server.h"

#include <fmt/core.h>

#include <algorithm>

#include "api/request_fields.h"
#include "base/json.h"
#include "server/openai_shapes.h"
#include "server/webui.h"

namespace skiff {

namespace {

HttpLimits http_limits(const ServerOptions& options) {
  HttpLimits limits = options.limits;
  limits.log = options.log_requests;
  return limits;
}

// A large body's turn to be parsed and handled, held for a scope.
class LargeBodyTurn {
 public:
  LargeBodyTurn(std::counting_semaphore<>& turns, size_t body_bytes)
      : turns_(body_bytes >= kLargeBodyBytes ? &turns : nullptr) {
    if (turns_) turns_->acquire();
  }
  ~LargeBodyTurn() {
    if (turns_) turns_->release();
  }
  LargeBodyTurn(const LargeBodyTurn&) = delete;
  LargeBodyTurn& operator=(const LargeBodyTurn&) = delete;

 private:
  std::counting_semaphore<>* turns_;
};

// /v1/responses keeps this many responses, of at most this many bytes of JSON in all.
constexpr size_t kKeptResponses = 1024;
constexpr size_t kKeptResponseBytes = size_t{256} << 20;

constexpr const char* kUnauthorized =
    "Unauthorized: a valid API key is needed (Authorization: Bearer KEY, or x-api-key: KEY)";

// Anthropic's routes answer in its shapes, the others in OpenAI's.
ApiDialect dialect_of(const std::string& path) {
  return path.starts_with("/v1/messages") ? ApiDialect::kAnthropic : ApiDialect::kOpenAI;
}

// Compares in time that depends on the lengths only, so that response times
// do not tell an attacker how much of a guessed key was right.
bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

ApiServer::ApiServer(ServerOptions options)
    : options_(std::move(options)),
      large_body_turns_(std::max(1, options_.handler_threads / 2)),
      responses_(kKeptResponses, kKeptResponseBytes),
      http_(std::make_unique<HttpServer>(http_limits(options_), options_.io_threads, options_.handler_threads,
                                         [this](const HttpRequest& req, HttpResponse& res) { route(req, res); },
                                         [](const std::string& path, int status, const std::string& message,
                                            HttpResponse& res) { send_error(res, status, message, {}, dialect_of(path)); })) {}

ApiServer::~ApiServer() { stop(); }

int ApiServer::start() { return http_->start(options_.host, options_.port); }

void ApiServer::stop() { http_->stop(); }

// Either header may carry the key, on every route: OpenAI's clients send
// Authorization: Bearer, Anthropic's x-api-key.
bool ApiServer::authorized(const HttpRequest& req) const {
  if (options_.api_key.empty()) return true;
  const bool bearer = constant_time_equal(req.header("Authorization"), "Bearer " + options_.api_key);
  const bool x_api_key = constant_time_equal(req.header("x-api-key"), options_.api_key);
  return bearer || x_api_key;
}

const ServedModel* ApiServer::ready(HttpResponse& res, ApiDialect dialect) const {
  const ServedModel* model = model_.load();
  if (!model) send_error(res, 503, "the model is still loading", {}, dialect);
  return model;
}

void ApiServer::post(const Handler& handler, const HttpRequest& req, HttpResponse& res, PromptTokenLists token_lists,
                     ApiDialect dialect) const {
  if (!authorized(req)) return send_error(res, 401, kUnauthorized, {}, dialect);
  const ServedModel* model = ready(res, dialect);
  if (!model) return;
  const LargeBodyTurn turn(large_body_turns_, req.body.size());
  answer_or_send_error(
      res,
      [&] {
        const ojson body = parse_request_body(req.body, token_lists);
        check_model_name(*model, body);
        handler(*model, body, req, res);
      },
      dialect);
}

void ApiServer::route(const HttpRequest& req, HttpResponse& res) const {
  const std::string& path = req.path;
  if (req.method == "POST") {
    if (path == "/v1/completions") return post(handle_completions, req, res, PromptTokenLists::kPacked);
    if (path == "/v1/chat/completions") return post(handle_chat_completions, req, res);
    if (path == "/tokenize") return post(handle_tokenize, req, res);
    if (path == "/detokenize") return post(handle_detokenize, req, res);
    // Anthropic's Messages API (its anthropic-version header is accepted, not read).
    if (path == "/v1/messages") return post(handle_messages, req, res, PromptTokenLists::kAsJson, ApiDialect::kAnthropic);
    if (path == "/v1/messages/count_tokens")
      return post(handle_count_tokens, req, res, PromptTokenLists::kAsJson, ApiDialect::kAnthropic);
    if (path == "/v1/responses")
      return post([this](const ServedModel& model, const ojson& body, const HttpRequest& req,
                         HttpResponse& res) { handle_responses(model, responses_, body, req, res); },
                  req, res, PromptTokenLists::kAsJson, ApiDialect::kResponses);
  } else if (req.method == "GET" || req.method == "HEAD") {  // HEAD: the transport drops the body
    if (path == "/health") {
      if (ready(res)) res.set_content("{}", "application/json");
      return;
    }
    if (path == "/v1/models") {
      if (!authorized(req)) return send_error(res, 401, kUnauthorized);
      const ServedModel* model = ready(res);
      if (!model) return;
      const ojson card{{"id", model->name},         {"object", "model"},
                       {"created", unix_seconds()}, {"owned_by", "skiff"},
                       {"root", model->name},       {"max_model_len", model->engine.max_model_len()}};
      return res.set_content(dump_json(ojson{{"object", "list"}, {"data", ojson::array({card})}}), "application/json");
    }
    if (path == "/kv/prefix_blocks") {
      if (!authorized(req)) return send_error(res, 401, kUnauthorized);
      const ServedModel* model = ready(res);
      if (!model) return;
      return answer_or_send_error(res, [&] { handle_prefix_blocks(*model, req, res); });
    }
    if (path.starts_with("/v1/responses/")) {
      if (!authorized(req)) return send_error(res, 401, kUnauthorized);
      return answer_or_send_error(res, [&] { handle_stored_response(responses_, path.substr(14), res); });
    }
    // The chat page, without the key: it holds no secret and asks for the key.
    if (options_.webui && serve_webui(path, res)) return;
    if (path == "/metrics") {
      const ServedModel* model = ready(res);
      if (!model) return;
      return res.set_content(prometheus_metrics(model->engine.metrics(), model->name, model->engine.rejected()),
                             "text/plain; version=0.0.4");
    }
  }
  send_error(res, 404, fmt::format("no route for {} {}", req.method, path), {}, dialect_of(path));
}

}  // namespace skiff

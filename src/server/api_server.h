// The API's front door: OpenAI's routes and Anthropic's Messages over the
// handlers, the API key, and errors in each API's shape for every status, on
// the HttpServer (Beast on Asio). Listening starts before the model has loaded, so that /health says
// 503 until it is ready.
#pragma once
#include <atomic>
#include <memory>
#include <semaphore>
#include <string>

#include "api/request_body.h"
#include "server/handlers.h"
#include "server/http_server.h"
#include "server/response_store.h"

namespace skiff {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;      // 0: any free port
  std::string api_key;  // empty: none asked
  HttpLimits limits;    // connections, timeouts, sizes
  int io_threads = 2;       // run every connection's I/O
  // Run the handlers (parse, tokenize, render); half of them at most take
  // bodies of 1 MiB or more at once (the others wait), so that large bodies
  // neither hold unbounded memory nor every thread.
  int handler_threads = 4;
  bool log_requests = true;  // one line per request on stderr
  bool webui = true;         // the chat page at / (server/webui.h)
};

class ApiServer {
 public:
  explicit ApiServer(ServerOptions options);
  ~ApiServer();  // stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds and starts serving on the I/O threads; returns the port. Throws
  // Error when the address cannot be bound (a port in use among them).
  int start();
  // From now on the routes serve this model (which must outlive the server).
  void serve(const ServedModel& model) { model_.store(&model); }
  // Stops accepting connections and ends the open ones.
  void stop();

 private:
  void route(const HttpRequest& req, HttpResponse& res) const;
  // A POST route taking a JSON body, behind the API key.
  void post(const Handler& handler, const HttpRequest& req, HttpResponse& res,
            PromptTokenLists token_lists = PromptTokenLists::kAsJson, ApiDialect dialect = ApiDialect::kOpenAI) const;
  bool authorized(const HttpRequest& req) const;
  const ServedModel* ready(HttpResponse& res, ApiDialect dialect = ApiDialect::kOpenAI) const;  // null: answered 503

  ServerOptions options_;
  std::atomic<const ServedModel*> model_ = nullptr;
  mutable std::counting_semaphore<> large_body_turns_;  // see handler_threads
  mutable ResponseStore responses_;  // /v1/responses' kept responses (before http_: its streams use it)
  std::unique_ptr<HttpServer> http_;
};

}  // namespace skiff

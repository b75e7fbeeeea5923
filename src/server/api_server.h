// The HTTP front door: cpp-httplib with a bounded pool of connection threads,
// OpenAI's routes over the handlers, the API key, body limits, and errors in
// OpenAI's shape for every status. Listening starts before the model has
// loaded, so that /health says 503 until it is ready.
#pragma once
#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <thread>

#include "server/handlers.h"

namespace skiff {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0: any free port
  std::string api_key;                    // empty: none asked
  size_t max_body_bytes = size_t{16} << 20;
  int http_threads = 128;                 // connections served at once
  bool log_requests = true;               // one line per request on stderr
};

// httplib's Server, with the listen backlog its library was compiled with (5)
// raised: a burst of clients would otherwise find the accept queue full.
class HttpServer : public httplib::Server {
 public:
  void set_listen_backlog(int n);
};

class ApiServer {
 public:
  explicit ApiServer(ServerOptions options);
  ~ApiServer();  // stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds and starts listening on a thread of its own; returns the port.
  // Throws Error when the address cannot be bound.
  int start();
  // From now on the routes serve this model (which must outlive the server).
  void serve(const ServedModel& model) { model_.store(&model); }
  // Stops accepting connections and waits for the open ones to finish.
  void stop();

 private:
  void add_routes();
  // A POST route taking a JSON body, behind the API key.
  void post(const char* path, Handler handler);
  bool authorized(const httplib::Request& req) const;
  const ServedModel* ready(httplib::Response& res) const;  // null: answered 503

  ServerOptions options_;
  HttpServer http_;
  std::atomic<const ServedModel*> model_ = nullptr;
  std::thread listener_;
};

// Writes an OpenAI-shaped error as the response.
void send_error(httplib::Response& res, int status, const std::string& message, const std::string& param = {});

}  // namespace skiff

// The HTTP front door: cpp-httplib with a thread per open connection up to a
// limit, each connection read and written under deadlines and sizes
// (ConnectionStream), OpenAI's routes over the handlers, the API key, and
// errors in OpenAI's shape for every status. Listening starts before the
// model has loaded, so that /health says 503 until it is ready.
#pragma once
#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <thread>

#include "server/connection_stream.h"
#include "server/handlers.h"

namespace skiff {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0: any free port
  std::string api_key;                    // empty: none asked
  int max_connections = 512;              // open at once; past it a new one gets 503
  ConnectionLimits limits;                // timeouts, header and body sizes
  bool log_requests = true;               // one line per request on stderr
};

// httplib's Server, each connection served by process_and_close_socket here
// (a private virtual of httplib's, overridden): a count of open connections
// with a clear refusal past the limit, and the keep-alive loop over a
// ConnectionStream instead of httplib's SocketStream.
class HttpServer : public httplib::Server {
 public:
  HttpServer(const ConnectionLimits& limits, int max_connections);
  // The listen backlog its library was compiled with (5) raised: a burst of
  // clients would otherwise find the accept queue full.
  void set_listen_backlog(int n);

 private:
  bool process_and_close_socket(socket_t sock) override;
  bool stopping() const { return svr_sock_ == INVALID_SOCKET; }

  const ConnectionLimits limits_;
  const int max_connections_;
  std::atomic<int> open_connections_ = 0;
};

class ApiServer {
 public:
  explicit ApiServer(ServerOptions options);
  ~ApiServer();  // stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds and starts listening on a thread of its own; returns the port.
  // Throws Error when the address cannot be bound, or when the process may
  // not open a file for each of max_connections.
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

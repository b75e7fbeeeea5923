// The HTTP/1.1 transport of `skiff serve`: Boost.Beast's parser on Boost.Asio,
// a few I/O threads running one io_context that multiplexes every
// connection (each a coroutine, http_connection.cpp), and a few worker
// threads that run the handlers (parsing, tokenizing, rendering a whole
// response), so that neither a large body nor a slow client holds a thread
// that others need. Everything a client may hold is bounded here:
// connections (in total and per address), each phase of a request in time
// and bytes, what a stream may fall behind, and a response's size.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "server/http_message.h"

namespace skiff {

struct HttpLimits {
  // Every phase of a request has a deadline:
  double idle_timeout_s = 10;    // accept or end of a response → next request's first byte (closed silently)
  double header_timeout_s = 10;  // first byte → end of headers (408)
  double body_timeout_s = 30;    // end of headers → end of body (408); 16 MiB at ~0.5 MB/s
  double write_timeout_s = 10;   // a response's bytes not moving this long: dropped, its request cancelled
  size_t max_header_bytes = size_t{64} << 10;  // request line and headers (431)
  size_t max_body_bytes = size_t{16} << 20;    // the body as decoded of chunked framing (413)
  // Request bodies being read or waiting for their handler, over all
  // connections: past it a request gets 503 (retry later) rather than one
  // more body in memory. Parsing is bounded apart: --handler-threads at once.
  size_t max_body_memory = size_t{256} << 20;
  int max_connections = 4096;                  // open at once; past it a new one gets 503 and is closed
  int max_connections_per_client = 1024;       // from one address, likewise
  // A stream whose client reads slower than it is made: the bytes it may
  // fall behind (beyond the kernel's send buffer) before it is dropped.
  size_t max_stream_buffer = size_t{16} << 20;
  size_t max_response_bytes = size_t{64} << 20;  // a whole response's body, or a stream's bytes in all
  double sse_keepalive_s = 15;  // a comment line on a stream idle this long, for proxies' idle timeouts
  bool log = true;              // a line on stderr per request and per limit that closes a connection
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;
// Writes the transport's own refusal of a request (413, 408, ...) as the
// route at `path` words its errors ("" where the headers were not read).
using HttpErrorWriter = std::function<void(const std::string& path, int status, const std::string& message,
                                           HttpResponse&)>;

class HttpServer {
 public:
  // handler runs on one of worker_threads threads; it may leave a DeferredBody.
  // write_error: null for OpenAI's error shape on every path.
  HttpServer(HttpLimits limits, int io_threads, int worker_threads, HttpHandler handler,
             HttpErrorWriter write_error = nullptr);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (0: any free port) for this process alone (no
  // SO_REUSEPORT: a port in use is an error) and starts serving on the I/O
  // threads; returns the port. Throws Error.
  int start(const std::string& host, int port);
  // Stops accepting, closes idle connections, gives responses in flight a
  // moment to end (the engine has cancelled them), then stops the threads.
  void stop();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace skiff

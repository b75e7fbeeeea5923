// What the handlers see of HTTP: a request read whole, a response to fill
// in, and, for an answer that comes later (a generation), a DeferredBody the
// transport drives from its I/O threads without blocking. No socket and no
// HTTP library shows here (the transport, Boost.Beast on Asio, lives in
// http_server.cpp and http_connection.cpp), so a handler cannot block an I/O
// thread on a client or write past the connection's limits.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skiff {

// Bodies from this size on are large: only a few parsed at once (ApiServer),
// and the memory they took given back to the system once they are freed.
inline constexpr size_t kLargeBodyBytes = size_t{1} << 20;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target before any '?'
  std::string query;   // the target after the '?', as sent (not percent-decoded)
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;    // decoded of its chunked framing, never of a Content-Encoding (refused: 415)
  std::string remote_addr;
  int remote_port = 0;

  // The first header of that name (any case); empty when absent.
  std::string header(std::string_view name) const;
  // The value of the first `name=value` of the query, as sent; nullopt when absent.
  std::optional<std::string> query_param(std::string_view name) const;
};

struct HttpResponse;

// A response made while the client waits: the transport asks it for what is
// ready whenever the producer says there is more (on_ready), and never
// waits inside it. Streamed bodies are sent as their bytes come (chunked);
// whole ones are made by finish() once poll() says the work is done.
class DeferredBody {
 public:
  virtual ~DeferredBody() = default;
  // Called once before the first poll: fn is to be called, from any thread,
  // whenever poll() may have something new.
  virtual void on_ready(std::function<void()> fn) = 0;
  // Without waiting: appends the bytes to send next (streams only) to out.
  // True once nothing more will come.
  virtual bool poll(std::string& out) = 0;
  // A whole response, after poll() returned true: its status and body. May
  // throw RequestError, answered as an error.
  virtual void finish(HttpResponse& res) { (void)res; }
  // Bytes a whole response has grown to so far, roughly (the response cap).
  virtual size_t size_so_far() const { return 0; }
  // The client left or the response was cut: stop the work behind it.
  virtual void cancel() = 0;
  // What a stream sends when it has been idle for --sse-keepalive: an SSE
  // comment (clients skip it, proxies see traffic), or the stream's own event.
  virtual std::string keepalive() const { return ": keep-alive\n\n"; }
  // A stream cut short (response cap, server stopping): the last bytes to
  // send, an error in the stream's own format. Cancels too.
  virtual std::string cut(int status, const std::string& message) {
    (void)status, (void)message;
    cancel();
    return {};
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<DeferredBody> deferred;  // set: the body comes later
  bool streamed = false;                   // deferred's bytes are sent as they come

  void set_content(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
  void set_header(std::string name, std::string value) { headers.emplace_back(std::move(name), std::move(value)); }
  // The body is the deferred's bytes, sent as they come (status 200).
  void stream(std::string type, std::shared_ptr<DeferredBody> body_source) {
    content_type = std::move(type);
    deferred = std::move(body_source);
    streamed = true;
  }
  // The response is made by deferred->finish() once its work is done.
  void defer(std::shared_ptr<DeferredBody> body_source) {
    deferred = std::move(body_source);
    streamed = false;
  }
};

}  // namespace skiff

// One client connection of the HttpServer (internal to it): a coroutine on
// the connection's strand reads requests with Beast's parser under the
// limits, runs the handler on a worker thread and writes its response; a
// second coroutine is the only reader of the socket, so that while a
// response is being made or streamed the connection still notices its
// client: a reset or error cancels the request, and an end of input after a
// whole request only means "no more requests" (a half-closed client, as
// `nc -N` or socat, is still answered in full).
#pragma once
#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "server/http_server.h"

namespace skiff {

class HttpConnection;

// What every connection of a server shares.
struct HttpShared {
  HttpLimits limits;
  HttpHandler handler;
  HttpErrorWriter write_error;  // null: OpenAI's shape
  boost::asio::thread_pool workers;

  HttpShared(HttpLimits l, HttpHandler h, int worker_threads)
      : limits(std::move(l)), handler(std::move(h)), workers(static_cast<size_t>(worker_threads)) {}

  // Counts a new connection from addr; the refusal's message when a limit is full.
  std::string admit(const std::string& addr);
  // Takes n bytes of the body budget (max_body_memory); false when it has not them.
  bool reserve_body(size_t n);
  void release_body(size_t n) { body_bytes -= n; }
  std::atomic<size_t> body_bytes = 0;
  void release(const std::string& addr);
  int open_connections();

  std::mutex mutex;  // guards what follows
  int open = 0;
  std::unordered_map<std::string, int> per_client;
  std::unordered_map<const HttpConnection*, std::weak_ptr<HttpConnection>> live;
  bool stopping = false;
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  using Clock = std::chrono::steady_clock;
  using Socket = boost::asio::ip::tcp::socket;

  // socket's executor is the connection's strand; it was admitted by shared.
  HttpConnection(Socket socket, HttpShared& shared, std::string addr, int port);
  ~HttpConnection();  // releases its place in shared

  void start();
  void stop();  // any thread: ends the connection once its response is done

 private:
  struct Request;
  enum class Read { kRequest, kClose };

  boost::asio::awaitable<void> run();
  boost::asio::awaitable<void> read_loop();
  // Reads the next request whole; kClose when the connection should end
  // (silently, or after an error response it has sent).
  boost::asio::awaitable<Read> read_request(Request& request);
  boost::asio::awaitable<bool> respond(Request& request, HttpResponse& res, bool& keep_alive);
  boost::asio::awaitable<bool> drive_deferred(Request& request, HttpResponse& res, bool& keep_alive);
  // Sends what is queued in pending_ and waits until it is written; false
  // when the write failed or stood still past the write timeout.
  boost::asio::awaitable<bool> flush();
  // Answers with an error and "Connection: close"; the caller then closes.
  // path: the request's, where its headers were read.
  boost::asio::awaitable<void> refuse(int status, const std::string& message, const std::string& path = {});
  boost::asio::awaitable<void> close_gracefully();
  boost::asio::awaitable<void> run_on_worker(const std::function<void()>& job);
  // Waits until something calls wake() or the deadline passes.
  boost::asio::awaitable<void> wait(Clock::time_point deadline);

  void wake();
  void consume(size_t n);
  void start_write();
  bool write_stalled() const;
  bool peer_reset() const;  // the peer answered a write with a reset
  void log_limit(int status, const std::string& message) const;
  Clock::time_point after(double seconds) const;

  Socket socket_;
  HttpShared& shared_;
  const std::string addr_;
  const int port_;
  boost::asio::steady_timer wake_;     // the run coroutine's one wait
  boost::asio::steady_timer resume_;   // the reader's, while the input buffer is full
  boost::beast::flat_buffer in_;       // read, not yet parsed (a pipelined request)
  size_t max_buffered_;
  bool eof_ = false;          // the client sent its last byte (half or fully closed)
  bool read_failed_ = false;  // reset or error
  bool draining_ = false;     // closing: what comes is dropped
  size_t drained_ = 0;
  bool closed_ = false;
  std::atomic<bool> stopping_ = false;
  bool body_ready_ = false;   // the deferred body has news

  std::string pending_;  // to send after what is being written
  std::string out_;      // being written
  size_t out_sent_ = 0;
  bool writing_ = false;
  bool write_failed_ = false;
  Clock::time_point write_progress_;
  Clock::time_point last_write_;
};

// A request being read and answered, and its share of the body budget.
struct HttpConnection::Request {
  explicit Request(HttpShared& s) : shared(s) {}
  ~Request() { release_body(); }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  // Makes the body budget hold at least n bytes for this request.
  bool hold_body(size_t n) {
    if (n <= held) return true;
    const size_t more = std::max(n - held, kBodyStep);
    if (!shared.reserve_body(more)) return false;
    held += more;
    return true;
  }
  void release_body() {
    shared.release_body(held);
    held = 0;
  }

  // Chunked bodies (and POSTs without a length) take the budget this much at a time.
  static constexpr size_t kBodyStep = 64 << 10;
  HttpShared& shared;
  size_t held = 0;
  HttpRequest http;
  unsigned version = 11;
  bool keep_alive = true;
};

// Writes an OpenAI-shaped error as the whole response (replacing res).
void error_response(HttpResponse& res, int status, const std::string& message);

}  // namespace skiff

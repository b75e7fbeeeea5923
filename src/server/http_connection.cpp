// GCC 12 warns that Asio's coroutine frames are freed by a mismatched
// operator delete: a false positive (the frames are allocated and freed by
// Asio's own operator new/delete pair, through its recycling allocator).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include "server/http_connection.h"

#include <fmt/core.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <boost/beast/http.hpp>

#include "base/json.h"
#include "server/openai_shapes.h"

namespace skiff {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using asio::use_awaitable;
using Clock = HttpConnection::Clock;

namespace {

// A write is handed to the kernel in slices this large, so that "no byte
// moved for the write timeout" is measured per slice, not per response.
constexpr size_t kWriteSlice = 64 << 10;
// Bytes a closing connection reads and drops, for at most kDrainTime, so
// that the client reads its error before a reset (closing a socket with
// unread input resets it, and the client may lose what it was sent).
constexpr size_t kMaxDrained = 1 << 20;
constexpr auto kDrainTime = std::chrono::milliseconds(500);
// How often a whole response waiting on its generation looks whether a
// client that stopped sending has gone (a reset answering its probe).
constexpr auto kResetCheck = std::chrono::milliseconds(50);

// The kernel's send buffer of a connection, fixed (Linux doubles it) rather
// than grown up to 4 MiB: how much of a response may wait in the kernel for a
// client that does not read.
constexpr int kSendBufferBytes = 256 << 10;

// TCP keep-alive probes notice a client that vanished without closing (its
// machine or network gone) within about a minute: its socket then fails.
void set_connection_options(int fd) {
  const int on = 1, idle_s = 30, interval_s = 10, probes = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBufferBytes, sizeof kSendBufferBytes);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

void error_response(HttpResponse& res, int status, const std::string& message) {
  res = HttpResponse{};
  res.status = status;
  res.set_content(dump_json(error_body(status, message)), "application/json");
}

std::string str(boost::beast::string_view s) { return std::string(s.data(), s.size()); }

enum class Framing { kLength, kChunked, kUntilClose };

std::string response_head(const HttpResponse& res, bool keep_alive, Framing framing, size_t length) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\n", res.status,
                                 str(http::obsolete_reason(static_cast<http::status>(res.status))),
                                 res.content_type);
  for (const auto& [name, value] : res.headers) head += fmt::format("{}: {}\r\n", name, value);
  if (framing == Framing::kLength) head += fmt::format("Content-Length: {}\r\n", length);
  if (framing == Framing::kChunked) head += "Transfer-Encoding: chunked\r\n";
  head += keep_alive ? "" : "Connection: close\r\n";
  return head + "\r\n";
}

std::string whole_response(const HttpResponse& res, bool keep_alive) {
  return response_head(res, keep_alive, Framing::kLength, res.body.size()) + res.body;
}

// Equal to lowercase `word` in any case, around spaces.
bool is_word(std::string_view value, std::string_view word) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.size() != word.size()) return false;
  for (size_t i = 0; i < value.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(value[i])) != word[i]) return false;
  return true;
}

}  // namespace

std::string HttpShared::admit(const std::string& addr) {
  std::lock_guard lock(mutex);
  if (stopping) return "the server is stopping";
  if (open >= limits.max_connections)
    return fmt::format("the server has {} connections open, its limit (--max-connections); retry later",
                       limits.max_connections);
  int& mine = per_client[addr];
  if (mine >= limits.max_connections_per_client) {
    if (mine == 0) per_client.erase(addr);
    return fmt::format("{} has {} connections open, the limit for one client (--max-connections-per-client); "
                       "retry later",
                       addr, limits.max_connections_per_client);
  }
  ++mine;
  ++open;
  return {};
}

void HttpShared::release(const std::string& addr) {
  std::lock_guard lock(mutex);
  --open;
  if (auto it = per_client.find(addr); it != per_client.end() && --it->second <= 0) per_client.erase(it);
}

bool HttpShared::reserve_body(size_t n) {
  size_t held = body_bytes.load();
  do {
    if (held + n > limits.max_body_memory) return false;
  } while (!body_bytes.compare_exchange_weak(held, held + n));
  return true;
}

int HttpShared::open_connections() {
  std::lock_guard lock(mutex);
  return open;
}

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

HttpConnection::HttpConnection(Socket socket, HttpShared& shared, std::string addr, int port)
    : socket_(std::move(socket)),
      shared_(shared),
      addr_(std::move(addr)),
      port_(port),
      wake_(socket_.get_executor()),
      resume_(socket_.get_executor()),
      // The parser sees a request's headers whole in this buffer, so it must hold the largest.
      max_buffered_(std::max(shared.limits.max_header_bytes + 1024, size_t{64} << 10)) {}

HttpConnection::~HttpConnection() {
  shared_.release(addr_);
  std::lock_guard lock(shared_.mutex);
  shared_.live.erase(this);
}

void HttpConnection::start() {
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  set_connection_options(socket_.native_handle());
  auto self = shared_from_this();
  asio::co_spawn(socket_.get_executor(), [self] { return self->read_loop(); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [self] { return self->run(); }, asio::detached);
}

void HttpConnection::stop() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->stopping_ = true;
    self->wake();
  });
}

void HttpConnection::wake() { wake_.cancel(); }

Clock::time_point HttpConnection::after(double seconds) const {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

awaitable<void> HttpConnection::wait(Clock::time_point deadline) {
  wake_.expires_at(deadline);
  boost::system::error_code ec;
  co_await wake_.async_wait(asio::redirect_error(use_awaitable, ec));
}

void HttpConnection::consume(size_t n) {
  in_.consume(n);
  if (in_.size() < max_buffered_) resume_.cancel();
}

// The one reader of the socket: bytes into in_ (up to max_buffered_, then it
// waits for the parser to take some), the end of input and errors as flags.
// It waits for readability before it takes a buffer, so that an idle
// connection holds none.
awaitable<void> HttpConnection::read_loop() {
  boost::system::error_code ec;
  for (;;) {
    while (!draining_ && !closed_ && in_.size() >= max_buffered_) {
      resume_.expires_at(Clock::time_point::max());
      co_await resume_.async_wait(asio::redirect_error(use_awaitable, ec));
    }
    if (closed_) co_return;
    co_await socket_.async_wait(Socket::wait_read, asio::redirect_error(use_awaitable, ec));
    if (closed_) co_return;
    size_t n = 0;
    if (!ec && draining_) {
      thread_local char scratch[16 << 10];
      n = socket_.read_some(asio::buffer(scratch), ec);
      if (!ec && (drained_ += n) > kMaxDrained) ec = asio::error::connection_aborted;
    } else if (!ec) {
      boost::system::error_code ignored;
      const size_t room = max_buffered_ - in_.size();
      n = socket_.read_some(in_.prepare(std::min(room, std::max<size_t>(socket_.available(ignored), 4096))), ec);
      if (!ec) in_.commit(n);
    }
    if (ec == asio::error::would_block || ec == asio::error::try_again) continue;
    if (ec == asio::error::eof) {
      eof_ = true;
      wake();
      co_return;
    }
    if (ec) {
      read_failed_ = true;
      wake();
      co_return;
    }
    wake();
  }
}

awaitable<void> HttpConnection::run() {
  try {
    for (;;) {
      const auto idle_deadline = after(shared_.limits.idle_timeout_s);
      while (in_.size() == 0 && !eof_ && !read_failed_ && !stopping_ && Clock::now() < idle_deadline)
        co_await wait(idle_deadline);
      if (in_.size() == 0 || stopping_) break;
      Request request(shared_);
      if (co_await read_request(request) == Read::kClose) break;
      HttpResponse res;
      const std::function<void()> handle = [&] {
        try {
          shared_.handler(request.http, res);
        } catch (const std::exception& e) {
          error_response(res, 500, e.what());
        }
      };
      // GET routes (/health, /metrics, /v1/models) are cheap: answered here,
      // so that a health check never waits behind large bodies being parsed.
      if (request.http.method == "GET") handle();
      else co_await run_on_worker(handle);
      std::string().swap(request.http.body);  // parsed: its memory goes back to the budget
      request.release_body();
      bool keep_alive = request.keep_alive && !stopping_;
      const bool ok = co_await respond(request, res, keep_alive);
      if (shared_.limits.log)
        fmt::print(stderr, "serve: {}:{} \"{} {}\" {}\n", addr_, port_, request.http.method, request.http.path,
                   res.status);
      if (!ok) {
        closed_ = true;
        boost::system::error_code ec;
        socket_.close(ec);
        resume_.cancel();
        co_return;
      }
      if (!keep_alive) break;
      if (in_.size() == 0) in_.shrink_to_fit();  // an idle connection holds no buffer
    }
  } catch (const std::exception& e) {
    if (shared_.limits.log) fmt::print(stderr, "serve: {}:{}: {}; closing the connection\n", addr_, port_, e.what());
  }
  co_await close_gracefully();
}

awaitable<HttpConnection::Read> HttpConnection::read_request(Request& request) {
  const HttpLimits& limits = shared_.limits;
  const std::string too_large = fmt::format("the request body is too large (over {} bytes)", limits.max_body_bytes);
  const std::string body_budget_full = fmt::format(
      "the server holds {} bytes of request bodies, its limit (--max-body-memory); retry later",
      limits.max_body_memory);
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(std::min<size_t>(limits.max_header_bytes, UINT32_MAX)));
  parser.body_limit(limits.max_body_bytes);
  bool header_done = false;
  bool until_close = false;  // a POST with no length: its body runs to the end of input
  auto deadline = after(limits.header_timeout_s);
  // The answer when the request is refused. (Set, then sent after the loop:
  // GCC 12 freed twice a temporary string inside a co_await expression.)
  int refusal = 0;
  std::string refusal_message;
  for (;;) {
    boost::beast::error_code ec = http::error::need_more;
    if (in_.size() > 0) consume(parser.put(in_.data(), ec));
    if (ec && ec != http::error::need_more) {
      // Any framing error closes the connection: what follows the error
      // cannot be told from a smuggled request.
      if (ec == http::error::header_limit) {
        refusal = 431;
        refusal_message = fmt::format("the request line and headers are over {} bytes", limits.max_header_bytes);
      } else if (ec == http::error::body_limit) {
        refusal = 413;
        refusal_message = too_large;
      } else {
        refusal = 400;
        refusal_message = fmt::format("malformed HTTP request: {}", ec.message());
      }
      break;
    }
    if (!header_done && parser.is_header_done()) {
      header_done = true;
      const auto& h = parser.get();
      // Compressed bodies are refused, not inflated: a small body could
      // otherwise inflate past any limit, and before the API key is read.
      if (const std::string coding = str(h[http::field::content_encoding]); !coding.empty() && !is_word(coding, "identity")) {
        refusal = 415;
        refusal_message = fmt::format("compressed request bodies are not accepted (Content-Encoding: {}); "
                                      "send the body uncompressed",
                                      coding);
        break;
      }
      if (h.count(http::field::transfer_encoding) && !parser.chunked()) {
        refusal = 400;
        refusal_message = fmt::format("Transfer-Encoding '{}' is not supported: send a Content-Length or chunked body",
                                      str(h[http::field::transfer_encoding]));
        break;
      }
      if (const auto length = parser.content_length(); length && !request.hold_body(*length)) {
        refusal = 503;
        refusal_message = body_budget_full;
        break;
      }
      until_close = !parser.content_length() && !parser.chunked() &&
                    (h.method() == http::verb::post || h.method() == http::verb::put || h.method() == http::verb::patch);
      deadline = after(limits.body_timeout_s);
      parser.eager(true);
      if (is_word(str(h[http::field::expect]), "100-continue") && !parser.is_done() && h.version() >= 11) {
        pending_ += "HTTP/1.1 100 Continue\r\n\r\n";
        if (!co_await flush()) co_return Read::kClose;
      }
    }
    if (header_done && !request.hold_body(parser.get().body().size())) {  // a chunked body as it grows
      refusal = 503;
      refusal_message = body_budget_full;
      break;
    }
    if (parser.is_done()) break;
    if (!ec) continue;  // an element parsed; the rest of the buffer next
    if (read_failed_ || stopping_) co_return Read::kClose;
    if (eof_) {
      refusal = 400;
      refusal_message = "the request ended before it was whole";
      break;
    }
    if (Clock::now() >= deadline) {
      refusal = 408;
      refusal_message = header_done
                            ? fmt::format("the request body did not arrive within {} s", limits.body_timeout_s)
                            : fmt::format("the request headers did not arrive within {} s", limits.header_timeout_s);
      break;
    }
    co_await wait(deadline);
  }
  std::string body;
  if (!refusal) body = std::move(parser.get().body());
  // As HTTP/1.0 and the server before this one read such a body: to the end
  // of input, under the body's size and deadline. The connection ends.
  while (!refusal && until_close) {
    const auto data = in_.data();
    body.append(static_cast<const char*>(data.data()), data.size());
    consume(data.size());
    if (body.size() > limits.max_body_bytes) {
      refusal = 413;
      refusal_message = too_large;
    } else if (!request.hold_body(body.size())) {
      refusal = 503;
      refusal_message = body_budget_full;
    } else if (eof_) {
      break;
    } else if (read_failed_ || stopping_) {
      co_return Read::kClose;
    } else if (Clock::now() >= deadline) {
      refusal = 408;
      refusal_message = fmt::format("the request body did not arrive within {} s", limits.body_timeout_s);
    } else {
      co_await wait(deadline);
    }
  }
  if (refusal) {
    co_await refuse(refusal, refusal_message);
    co_return Read::kClose;
  }
  auto message = parser.release();
  HttpRequest& r = request.http;
  r.method = str(message.method_string());
  const std::string target = str(message.target());
  r.path = target.substr(0, target.find('?'));
  for (const auto& field : message) r.headers.emplace_back(str(field.name_string()), str(field.value()));
  r.body = std::move(body);
  r.remote_addr = addr_;
  r.remote_port = port_;
  request.version = message.version();
  request.keep_alive = message.keep_alive() && !until_close;
  co_return Read::kRequest;
}

awaitable<bool> HttpConnection::respond(Request& request, HttpResponse& res, bool& keep_alive) {
  if (res.deferred) co_return co_await drive_deferred(request, res, keep_alive);
  pending_ += whole_response(res, keep_alive);
  co_return co_await flush();
}

// A response made by a generation. The engine's news wakes this coroutine
// (on_ready, posted to the strand); meanwhile the reader watches the client:
//  - a reset or read error: the client is gone, the request is cancelled;
//  - the end of input: a half-closed client, or one that closed. Only a
//    write tells them apart (a closed socket answers it with a reset), so a
//    whole response sends an interim "100 Continue" (which HTTP/1.1 clients
//    skip) and cancels if the client resets; a stream's own bytes do that;
//  - a stream whose client reads slower than it is made falls behind in
//    pending_: past --max-stream-buffer, or with no byte taken for the write
//    timeout, it is dropped and the request cancelled.
awaitable<bool> HttpConnection::drive_deferred(Request& request, HttpResponse& res, bool& keep_alive) {
  const HttpLimits& limits = shared_.limits;
  // Held here: finish() may replace res, and with it res.deferred, while it runs.
  const std::shared_ptr<DeferredBody> body_owner = res.deferred;
  DeferredBody& body = *body_owner;
  const bool streamed = res.streamed;
  const bool chunked = request.version >= 11;
  std::weak_ptr<HttpConnection> weak = weak_from_this();
  auto notified = std::make_shared<std::atomic<bool>>(false);  // one post in flight at most
  body.on_ready([weak, notified, ex = socket_.get_executor()] {
    if (notified->exchange(true)) return;
    asio::post(ex, [weak, notified] {
      notified->store(false);
      if (auto self = weak.lock()) {
        self->body_ready_ = true;
        self->wake();
      }
    });
  });
  body_ready_ = true;
  const auto chunk = [chunked](std::string_view bytes) {
    return chunked ? fmt::format("{:x}\r\n{}\r\n", bytes.size(), bytes) : std::string(bytes);
  };
  if (streamed) {
    keep_alive = keep_alive && chunked;
    pending_ += response_head(res, keep_alive, chunked ? Framing::kChunked : Framing::kUntilClose, 0);
  }
  const auto keepalive_every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(limits.sse_keepalive_s));
  const std::string too_large = fmt::format(
      "the response is over {} bytes (--max-response-bytes): ask for fewer tokens, completions or logprobs",
      limits.max_response_bytes);
  size_t body_bytes = 0;
  bool done = false, probed = false;
  last_write_ = Clock::now();
  for (;;) {
    if (body_ready_ && !done) {
      body_ready_ = false;
      std::string out;
      done = body.poll(out);
      body_bytes += out.size();
      if (streamed && body_bytes > limits.max_response_bytes) {  // what came is dropped: an error instead
        out = body.cut(400, too_large);
        done = true;
      }
      if (!out.empty()) pending_ += chunk(out);
      if (streamed && done && chunked) pending_ += "0\r\n\r\n";
      if (!streamed && !done && body.size_so_far() > limits.max_response_bytes) {
        body.cut(400, too_large);
        done = true;
      }
    }
    if (streamed && pending_.size() > limits.max_stream_buffer) {
      log_limit(0, fmt::format("the client fell more than {} bytes behind its stream", limits.max_stream_buffer));
      body.cancel();
      co_return false;
    }
    if (!writing_ && !pending_.empty()) start_write();
    if (write_failed_ || read_failed_) {
      body.cancel();
      co_return false;
    }
    if (write_stalled()) {
      log_limit(0, fmt::format("the client took no bytes for {} s", limits.write_timeout_s));
      body.cancel();
      co_return false;
    }
    if (done && !writing_ && pending_.empty()) break;
    const auto now = Clock::now();
    if (!done && eof_ && !streamed && !probed && request.version >= 11) {
      probed = true;
      pending_ += "HTTP/1.1 100 Continue\r\n\r\n";
      continue;
    }
    if (!done && probed && !writing_ && peer_reset()) {
      body.cancel();
      co_return false;
    }
    if (streamed && !done && !writing_ && pending_.empty() && now >= last_write_ + keepalive_every) {
      pending_ += chunk(": keep-alive\n\n");  // an SSE comment: clients skip it, proxies see traffic
      continue;
    }
    auto deadline = Clock::time_point::max();
    if (writing_) deadline = std::min(deadline, write_progress_ + std::chrono::duration_cast<Clock::duration>(
                                                                      std::chrono::duration<double>(limits.write_timeout_s)));
    if (streamed && !done) deadline = std::min(deadline, last_write_ + keepalive_every);
    if (probed && !done) deadline = std::min(deadline, now + kResetCheck);
    co_await wait(deadline);
  }
  if (streamed) co_return true;
  const std::function<void()> finish = [&] { body.finish(res); };
  co_await run_on_worker(finish);
  res.deferred.reset();
  if (res.body.size() > limits.max_response_bytes) error_response(res, 400, too_large);
  pending_ += whole_response(res, keep_alive);
  co_return co_await flush();
}

void HttpConnection::start_write() {
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
    out_.swap(pending_);
  }
  if (out_.empty()) {
    writing_ = false;
    wake();
    return;
  }
  if (!writing_) write_progress_ = Clock::now();
  writing_ = true;
  const size_t n = std::min(kWriteSlice, out_.size() - out_sent_);
  socket_.async_write_some(asio::buffer(out_.data() + out_sent_, n),
                           [self = shared_from_this()](boost::system::error_code ec, size_t written) {
                             if (ec) {
                               self->write_failed_ = true;
                               self->writing_ = false;
                               self->wake();
                               return;
                             }
                             self->out_sent_ += written;
                             self->write_progress_ = self->last_write_ = Clock::now();
                             self->start_write();
                           });
}

bool HttpConnection::write_stalled() const {
  return writing_ && Clock::now() - write_progress_ >= std::chrono::duration_cast<Clock::duration>(
                                                          std::chrono::duration<double>(shared_.limits.write_timeout_s));
}

bool HttpConnection::peer_reset() const {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (getsockopt(const_cast<Socket&>(socket_).native_handle(), IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return true;
  return info.tcpi_state == TCP_CLOSE;
}

awaitable<bool> HttpConnection::flush() {
  for (;;) {
    if (!writing_ && !pending_.empty()) start_write();
    if (write_failed_) co_return false;
    if (!writing_) co_return true;
    if (write_stalled()) {
      log_limit(0, fmt::format("the client took no bytes for {} s", shared_.limits.write_timeout_s));
      co_return false;
    }
    co_await wait(write_progress_ + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(shared_.limits.write_timeout_s)));
  }
}

awaitable<void> HttpConnection::refuse(int status, const std::string& message) {
  log_limit(status, message);
  HttpResponse res;
  error_response(res, status, message);
  if (status == 503) res.set_header("Retry-After", "1");
  pending_ += whole_response(res, /*keep_alive=*/false);
  co_await flush();
}

awaitable<void> HttpConnection::close_gracefully() {
  if (closed_) co_return;
  if (!write_failed_ && (writing_ || !pending_.empty())) co_await flush();
  draining_ = true;
  in_.consume(in_.size());
  resume_.cancel();
  boost::system::error_code ec;
  socket_.shutdown(Socket::shutdown_send, ec);
  const auto deadline = Clock::now() + kDrainTime;
  while (!ec && !eof_ && !read_failed_ && !write_failed_ && Clock::now() < deadline) co_await wait(deadline);
  closed_ = true;
  socket_.close(ec);
  resume_.cancel();
}

// Runs job on a worker thread and resumes this coroutine on its strand. Not
// a coroutine spawned on the pool: GCC 12 destroyed a by-value capture of
// such a lambda twice.
awaitable<void> HttpConnection::run_on_worker(const std::function<void()>& job) {
  co_await asio::async_initiate<decltype(use_awaitable), void()>(
      [this, &job](auto handler) {
        asio::post(shared_.workers, [&job, handler = std::move(handler)]() mutable {
          try {
            job();
          } catch (...) {  // the callers catch what they expect; nothing may unwind a worker
          }
          const auto ex = asio::get_associated_executor(handler);
          asio::dispatch(ex, std::move(handler));
        });
      },
      use_awaitable);
}

void HttpConnection::log_limit(int status, const std::string& message) const {
  if (!shared_.limits.log) return;
  if (status) fmt::print(stderr, "serve: {}:{}: {} ({}); closing the connection\n", addr_, port_, message, status);
  else fmt::print(stderr, "serve: {}:{}: {}; closing the connection\n", addr_, port_, message);
}

}  // namespace skiff

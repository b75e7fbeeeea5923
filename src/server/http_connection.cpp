// GCC 12 warns that Asio's coroutine frames are freed by a mismatched
// operator delete: a false positive (the frames are allocated and freed by
// Asio's own operator new/delete pair, through its recycling allocator).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include "server/http_connection.h"

#include <fmt/core.h>
#include <malloc.h>
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

// Bytes a closing connection reads and drops, for at most kDrainTime, so
// that the client reads its error before a reset (closing a socket with
// unread input resets it, and the client may lose what it was sent).
constexpr size_t kMaxDrained = 1 << 20;
constexpr auto kDrainTime = std::chrono::milliseconds(500);

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

std::string str(boost::beast::string_view s) { return std::string(s.data(), s.size()); }

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
      if (request.http.method == "GET" || request.http.method == "HEAD") handle();
      else co_await run_on_worker(handle);
      const size_t body_bytes = request.http.body.size();
      std::string().swap(request.http.body);  // parsed: its memory goes back to the budget
      request.release_body();
      // A large body and its parse took many times its size, freed by now here
      // and on a worker; glibc keeps a thread's frees in its arena, so a burst
      // of large requests would stay in the RSS. The trim walks every arena:
      // on a worker, not this I/O thread.
      if (body_bytes >= kLargeBodyBytes) boost::asio::post(shared_.workers, [] { malloc_trim(0); });
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
      // "100 Continue" only to a client waiting for it: not where the body
      // (or part of it) came with the headers, nor to one that stopped sending.
      if (is_word(str(h[http::field::expect]), "100-continue") && !parser.is_done() && h.version() >= 11 &&
          in_.size() == 0 && !eof_) {
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
    // The path, where the request line was read (a Content-Length over the
    // limit fails before the headers are done).
    const std::string target = str(parser.get().target());
    const std::string path = target.substr(0, target.find('?'));
    co_await refuse(refusal, refusal_message, path);
    co_return Read::kClose;
  }
  auto message = parser.release();
  HttpRequest& r = request.http;
  r.method = str(message.method_string());
  const std::string target = str(message.target());
  const size_t question = target.find('?');
  r.path = target.substr(0, question);
  if (question != std::string::npos) r.query = target.substr(question + 1);
  for (const auto& field : message) r.headers.emplace_back(str(field.name_string()), str(field.value()));
  r.body = std::move(body);
  r.remote_addr = addr_;
  r.remote_port = port_;
  request.version = message.version();
  request.keep_alive = message.keep_alive() && !until_close;
  co_return Read::kRequest;
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

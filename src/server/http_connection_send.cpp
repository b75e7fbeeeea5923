// The sending half of HttpConnection: responses whole, made later by a
// generation, or streamed as they come, under the write timeout, the stream
// buffer and the response cap; and errors that end a connection.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // see http_connection.cpp

#include <fmt/core.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/beast/http/status.hpp>

#include "base/json.h"
#include "server/http_connection.h"
#include "server/openai_shapes.h"

namespace skiff {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using asio::use_awaitable;
using Clock = HttpConnection::Clock;

void error_response(HttpResponse& res, int status, const std::string& message) {
  res = HttpResponse{};
  res.status = status;
  res.set_content(dump_json(error_body(status, message)), "application/json");
}

namespace {

// A write is handed to the kernel in slices this large, so that "no byte
// moved for the write timeout" is measured per slice, not per response.
constexpr size_t kWriteSlice = 64 << 10;
// How often a whole response waiting on its generation looks whether a
// client that stopped sending has gone (a reset answering its probe).
constexpr auto kResetCheck = std::chrono::milliseconds(50);
// How long a whole response waits after its client stopped sending before
// it probes: an answer ready by then reaches a half-closed client as its one
// response, with no interim one; a departed client's generation runs this
// long at most before the probe's reset cancels it.
constexpr auto kProbeAfter = std::chrono::milliseconds(500);

std::string str(boost::beast::string_view s) { return std::string(s.data(), s.size()); }

enum class Framing { kLength, kChunked, kUntilClose };

// version: the request's (10 for HTTP/1.0, whose clients close unless told to keep alive).
std::string response_head(const HttpResponse& res, bool keep_alive, unsigned version, Framing framing,
                          size_t length) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\n", res.status,
                                 str(http::obsolete_reason(static_cast<http::status>(res.status))),
                                 res.content_type);
  for (const auto& [name, value] : res.headers) head += fmt::format("{}: {}\r\n", name, value);
  if (framing == Framing::kLength) head += fmt::format("Content-Length: {}\r\n", length);
  if (framing == Framing::kChunked) head += "Transfer-Encoding: chunked\r\n";
  head += !keep_alive ? "Connection: close\r\n" : version < 11 ? "Connection: keep-alive\r\n" : "";
  return head + "\r\n";
}

std::string whole_response(const HttpResponse& res, bool keep_alive, unsigned version) {
  return response_head(res, keep_alive, version, Framing::kLength, res.body.size()) + res.body;
}

}  // namespace

awaitable<bool> HttpConnection::respond(Request& request, HttpResponse& res, bool& keep_alive) {
  if (res.deferred) co_return co_await drive_deferred(request, res, keep_alive);
  if (request.http.method == "HEAD")  // the head a GET would have, without its body
    pending_ += response_head(res, keep_alive, request.version, Framing::kLength, res.body.size());
  else
    pending_ += whole_response(res, keep_alive, request.version);
  co_return co_await flush();
}

// A response made by a generation. The engine's news wakes this coroutine
// (on_ready, posted to the strand); meanwhile the reader watches the client:
//  - a reset or read error: the client is gone, the request is cancelled;
//  - the end of input: a half-closed client, or one that closed. Only a
//    write tells them apart (a closed socket answers it with a reset), so a
//    whole response not ready kProbeAfter later sends an interim "100
//    Continue" (which HTTP/1.1 clients skip) and cancels if the client
//    resets; a stream's own bytes do that;
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
    pending_ += response_head(res, keep_alive, request.version, chunked ? Framing::kChunked : Framing::kUntilClose, 0);
  }
  const auto keepalive_every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(limits.sse_keepalive_s));
  const std::string too_large = fmt::format(
      "the response is over {} bytes (--max-response-bytes): ask for fewer tokens, completions or logprobs",
      limits.max_response_bytes);
  size_t body_bytes = 0;
  bool done = false, probed = false;
  auto probe_at = Clock::time_point::max();  // set once the client has stopped sending
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
      if (probe_at == Clock::time_point::max()) probe_at = now + kProbeAfter;
      if (now >= probe_at) {
        probed = true;
        pending_ += "HTTP/1.1 100 Continue\r\n\r\n";
        continue;
      }
    }
    if (!done && probed && !writing_ && peer_reset()) {
      body.cancel();
      co_return false;
    }
    if (streamed && !done && !writing_ && pending_.empty() && now >= last_write_ + keepalive_every) {
      pending_ += chunk(body.keepalive());
      continue;
    }
    auto deadline = Clock::time_point::max();
    if (writing_) deadline = std::min(deadline, write_progress_ + std::chrono::duration_cast<Clock::duration>(
                                                                      std::chrono::duration<double>(limits.write_timeout_s)));
    if (streamed && !done) deadline = std::min(deadline, last_write_ + keepalive_every);
    if (!probed && !done) deadline = std::min(deadline, probe_at);
    if (probed && !done) deadline = std::min(deadline, now + kResetCheck);
    co_await wait(deadline);
  }
  if (streamed) co_return true;
  const std::function<void()> finish = [&] { body.finish(res); };
  co_await run_on_worker(finish);
  res.deferred.reset();
  if (res.body.size() > limits.max_response_bytes) error_response(res, 400, too_large);
  pending_ += whole_response(res, keep_alive, request.version);
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

awaitable<void> HttpConnection::refuse(int status, const std::string& message, const std::string& path) {
  log_limit(status, message);
  HttpResponse res;
  if (shared_.write_error) {
    shared_.write_error(path, status, message, res);
  } else {
    error_response(res, status, message);
    if (status == 503) res.set_header("Retry-After", "1");
  }
  pending_ += whole_response(res, /*keep_alive=*/false, /*version=*/11);
  co_await flush();
}

}  // namespace skiff

#include "server/connection_stream.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <cstring>

#include "server/client_socket.h"
#include "server/openai_shapes.h"

namespace skiff {
namespace {

// Waits are cut into slices this long so that a server shutting down is
// noticed by connections waiting for their clients.
constexpr std::chrono::milliseconds kWaitSlice{100};
constexpr size_t kBufferBytes = 16 << 10;

const char* reason_phrase(int status) {
  switch (status) {
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

// The value of a "Content-Length:" header line (any case), else 0.
size_t content_length(const std::string& line) {
  constexpr std::string_view kName = "content-length:";
  if (line.size() < kName.size()) return 0;
  for (size_t i = 0; i < kName.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != kName[i]) return 0;
  return static_cast<size_t>(std::strtoull(line.c_str() + kName.size(), nullptr, 10));
}

}  // namespace

ConnectionStream::ConnectionStream(int fd, const ConnectionLimits& limits, std::function<bool()> stopping)
    : fd_(fd), limits_(limits), stopping_(std::move(stopping)), buffer_(kBufferBytes) {}

ConnectionStream::Clock::time_point ConnectionStream::deadline_after(double seconds) const {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

ConnectionStream::Wait ConnectionStream::wait_for(short events, Clock::time_point deadline, bool end_on_stop) const {
  for (;;) {
    if (end_on_stop && stopping_()) return Wait::kStopping;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Wait::kTimeout;
    pollfd p{fd_, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min(left, kWaitSlice).count()) + 1);
    if (n > 0) return Wait::kReady;  // hang-ups and errors too: the next recv/send tells
    if (n < 0 && errno != EINTR) return Wait::kReady;
  }
}

bool ConnectionStream::await_request() {
  if (failed_) return false;
  phase_ = Phase::kHeaders;
  phase_bytes_ = 0;
  lines_ = 0;
  line_.clear();
  declared_body_ = 0;
  // A pipelined request may be buffered already.
  if (begin_ == end_ && wait_for(POLLIN, deadline_after(limits_.idle_timeout_s), true) != Wait::kReady) return false;
  deadline_ = deadline_after(limits_.header_timeout_s);
  return true;
}

ssize_t ConnectionStream::receive() {
  for (;;) {
    const ssize_t n = recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n >= 0) {
      begin_ = 0;
      end_ = static_cast<size_t>(n);
      return n;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    switch (wait_for(POLLIN, deadline_, true)) {
      case Wait::kReady: continue;
      case Wait::kStopping: failed_ = true; return -1;
      case Wait::kTimeout:
        refuse(408, phase_ == Phase::kHeaders
                        ? fmt::format("the request headers did not arrive within {} s", limits_.header_timeout_s)
                        : fmt::format("the request body did not arrive within {} s", limits_.body_timeout_s));
        return -1;
    }
  }
}

ssize_t ConnectionStream::take_header_bytes(size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (++phase_bytes_ > limits_.max_header_bytes) {
      refuse(431, fmt::format("the request line and headers are over {} bytes", limits_.max_header_bytes));
      return -1;
    }
    const char byte = buffer_[begin_ + i];
    if (byte != '\n') {
      line_ += byte;
      continue;
    }
    // httplib ends the headers at the first "\r\n" line after the request
    // line (and skips lines that end in a bare '\n'), so this does too.
    if (line_ == "\r" && lines_ > 0) return end_headers() ? static_cast<ssize_t>(i + 1) : -1;
    if (lines_ > 0) declared_body_ = std::max(declared_body_, content_length(line_));
    ++lines_;
    line_.clear();
  }
  return static_cast<ssize_t>(n);
}

bool ConnectionStream::end_headers() {
  // A body declared too large is refused now, not read (httplib would read
  // and drop it all first, or wait for it until the body timeout).
  if (declared_body_ > limits_.max_body_bytes) {
    refuse(413, fmt::format("the request body is too large (over {} bytes)", limits_.max_body_bytes));
    return false;
  }
  phase_ = Phase::kBody;
  phase_bytes_ = 0;
  deadline_ = deadline_after(limits_.body_timeout_s);
  return true;
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (failed_) return -1;
  if (begin_ == end_) {
    const ssize_t got = receive();
    if (got <= 0) return got;
  }
  ssize_t n = static_cast<ssize_t>(std::min(size, end_ - begin_));
  if (phase_ == Phase::kHeaders) {
    n = take_header_bytes(static_cast<size_t>(n));
    if (n < 0) return -1;
  } else if ((phase_bytes_ += static_cast<size_t>(n)) > limits_.max_body_bytes) {
    refuse(413, fmt::format("the request body is too large (over {} bytes)", limits_.max_body_bytes));
    return -1;
  }
  std::memcpy(ptr, buffer_.data() + begin_, static_cast<size_t>(n));
  begin_ += static_cast<size_t>(n);
  return n;
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  for (;;) {
    const ssize_t n = send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return n;  // httplib writes the rest, each part with a new timeout
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // Not ended by a shutdown: the server's last events (finish_reason
      // "abort") still go to clients that read.
      if (wait_for(POLLOUT, deadline_after(limits_.write_timeout_s), false) == Wait::kReady) continue;
      log_limit(0, fmt::format("the client took no bytes for {} s", limits_.write_timeout_s));
    }
    failed_ = true;
    return -1;
  }
}

bool ConnectionStream::is_readable() const {
  return begin_ != end_ || (!failed_ && wait_for(POLLIN, deadline_, true) == Wait::kReady);
}

bool ConnectionStream::is_writable() const {
  return !failed_ && wait_for(POLLOUT, deadline_after(limits_.write_timeout_s), false) == Wait::kReady;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  socket_endpoint(fd_, /*peer=*/true, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  socket_endpoint(fd_, /*peer=*/false, ip, port);
}

bool ConnectionStream::send_all(const std::string& bytes) {
  for (size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = write(bytes.data() + sent, bytes.size() - sent);
    if (n < 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void ConnectionStream::refuse(int status, const std::string& message) {
  if (failed_) return;
  log_limit(status, message);
  const std::string body = dump_json(error_body(status, message));
  send_all(fmt::format("HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
                       "Connection: close\r\n\r\n{}",
                       status, reason_phrase(status), body.size(), body));
  refused_ = true;
  failed_ = true;
}

void ConnectionStream::log_limit(int status, const std::string& message) const {
  if (!limits_.log) return;
  std::string addr = "?";
  int port = 0;
  socket_endpoint(fd_, /*peer=*/true, addr, port);
  if (status) fmt::print(stderr, "serve: {}:{}: {} ({}); closing the connection\n", addr, port, message, status);
  else fmt::print(stderr, "serve: {}:{}: {}; closing the connection\n", addr, port, message);
}

void close_after_refusal(int fd) {
  shutdown(fd, SHUT_WR);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  char sink[4096];
  for (size_t dropped = 0; dropped < (size_t{1} << 20);) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n <= 0) break;
    dropped += static_cast<size_t>(n);
  }
  close(fd);
}

}  // namespace skiff

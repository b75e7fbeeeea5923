// One client connection as cpp-httplib reads and writes it, with the limits
// httplib 0.11 does not have. Its own SocketStream times out each read
// separately (a client sending a byte every few seconds holds its thread for
// ever), lets a request line or header grow without bound before it checks
// the length, and reads a body with no Content-Length until the client stops.
// Here every phase of a request has a deadline and a size:
//   idle     from the end of one response (or the accept) to the first byte
//            of the next request: closed silently when it passes;
//   headers  the request line and headers, from their first byte: 408 when
//            late, 431 when over their size;
//   body     from the end of the headers: 408 when late, 413 when over the
//            body limit (at the headers when their Content-Length says so,
//            else as the raw bytes come, chunked framing counted);
//   writes   a write that moves no byte for the write timeout fails, and the
//            handler's request is cancelled (a client that stopped reading).
// A limit answers with an OpenAI-shaped error and "Connection: close"; the
// stream then fails every further read and write, so httplib's own answer
// (400) goes nowhere.
#pragma once
#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace skiff {

struct ConnectionLimits {
  double idle_timeout_s = 10;    // later than clients' pools keep idle connections (httpx: 5 s)
  double header_timeout_s = 10;
  double body_timeout_s = 30;    // 16 MiB at ~0.5 MB/s
  double write_timeout_s = 10;
  size_t max_header_bytes = size_t{64} << 10;
  size_t max_body_bytes = size_t{16} << 20;
  bool log = true;               // a line on stderr for each limit that closes a connection
};

class ConnectionStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  // fd stays open (the caller closes it); stopping() true: the server is
  // shutting down, so waits for a client's bytes end at once.
  ConnectionStream(int fd, const ConnectionLimits& limits, std::function<bool()> stopping);

  // Waits up to the idle timeout for the next request's first byte and starts
  // its header phase; false: the connection should close.
  bool await_request();
  // Answers status with an OpenAI-shaped error body and "Connection: close";
  // every later read or write fails.
  void refuse(int status, const std::string& message);
  // A limit answered: the client may still be sending, so the caller should
  // drain before it closes (close_after_refusal).
  bool refused() const { return refused_; }
  bool failed() const { return failed_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

 private:
  enum class Phase { kHeaders, kBody };
  enum class Wait { kReady, kTimeout, kStopping };

  Wait wait_for(short events, Clock::time_point deadline, bool end_on_stop) const;
  Clock::time_point deadline_after(double seconds) const;
  ssize_t receive();  // refills the buffer, waiting until the phase's deadline
  // How many of the n buffered bytes the header phase takes (it ends at the
  // blank line); -1 once the headers are over their size.
  ssize_t take_header_bytes(size_t n);
  bool end_headers();  // starts the body phase; false: refused (413)
  bool send_all(const std::string& bytes);
  void log_limit(int status, const std::string& message) const;

  const int fd_;
  const ConnectionLimits& limits_;
  std::function<bool()> stopping_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;  // unread bytes in buffer_

  Phase phase_ = Phase::kHeaders;
  Clock::time_point deadline_;  // of the current phase
  size_t phase_bytes_ = 0;      // read in the current phase
  int lines_ = 0;               // header lines ended so far (the request line first)
  std::string line_;            // the current header line, before its '\n'
  size_t declared_body_ = 0;    // the request's Content-Length, if any
  bool refused_ = false;
  bool failed_ = false;
};

// After a refusal: stops sending, reads and drops what the client still
// sends for a moment (closing with unread bytes would reset the connection
// and could lose the answer at the client), then closes fd.
void close_after_refusal(int fd);

}  // namespace skiff

#include "server/http_server.h"

#include <fmt/core.h>
#include <sys/resource.h>

#include <thread>
#include <vector>

#include "base/error.h"
#include "base/json.h"
#include "server/http_connection.h"
#include "server/openai_shapes.h"

namespace skiff {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

namespace {

// Connections past a limit being answered 503 at once (each a short write
// and a moment's drain); past this many more are closed without a word.
constexpr int kMaxRefusing = 256;
// Files the server needs besides its connections (model, listener, stdio).
constexpr rlim_t kOtherFiles = 64;

// Raises the soft limit on open files to what max_connections needs (up to
// the hard limit); where the hard limit is lower, lowers max_connections to
// fit and says so: past it, accept() would fail and clients would wait.
void fit_file_limit(HttpLimits& limits) {
  const auto needed = [](int connections) { return static_cast<rlim_t>(connections) + kMaxRefusing + kOtherFiles; };
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed(limits.max_connections)) return;
  if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= needed(limits.max_connections)) {
    limit.rlim_cur = needed(limits.max_connections);
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) return;
  }
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  const rlim_t open_files = limit.rlim_cur;
  if (open_files <= needed(1)) fail("serve: this process may open only {} files (ulimit -n)", open_files);
  const int fits = static_cast<int>(open_files - kMaxRefusing - kOtherFiles);
  fmt::print(stderr, "serve: --max-connections {} needs {} open files and this process may open {} (ulimit -n): "
                     "at most {} connections\n",
             limits.max_connections, needed(limits.max_connections), open_files, fits);
  limits.max_connections = fits;
}

}  // namespace

struct HttpServer::State {
  State(HttpLimits limits, HttpHandler handler, int io_threads, int worker_threads)
      : shared(std::move(limits), std::move(handler), std::max(1, worker_threads)), io_threads(std::max(1, io_threads)) {}

  HttpShared shared;  // outlives ioc, whose connections it counts
  asio::io_context ioc;
  asio::strand<asio::io_context::executor_type> accept_strand{ioc.get_executor()};
  tcp::acceptor acceptor{accept_strand};
  std::vector<std::thread> threads;
  const int io_threads;
  std::atomic<int> refusing = 0;
  bool started = false, stopped = false;
};

namespace {

// Answers a connection past a limit with 503 and closes it, without reading
// its request (what it sends is dropped for a moment, so that it gets the
// answer rather than a reset).
awaitable<void> refuse_connection(tcp::socket socket, std::string message, HttpServer::State& state) {
  auto s = std::make_shared<tcp::socket>(std::move(socket));
  asio::steady_timer timer(s->get_executor(), std::chrono::seconds(1));
  timer.async_wait([s](boost::system::error_code ec) {
    if (!ec) s->close(ec);
  });
  const std::string body = dump_json(error_body(503, message));
  const std::string response = fmt::format(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "Retry-After: 1\r\nConnection: close\r\n\r\n{}",
      body.size(), body);
  boost::system::error_code ec;
  co_await asio::async_write(*s, asio::buffer(response), asio::redirect_error(use_awaitable, ec));
  if (!ec) s->shutdown(tcp::socket::shutdown_send, ec);
  char drain[4096];
  for (size_t dropped = 0; !ec && dropped < (size_t{1} << 20);)
    dropped += co_await s->async_read_some(asio::buffer(drain), asio::redirect_error(use_awaitable, ec));
  timer.cancel();
  s->close(ec);
  --state.refusing;
}

awaitable<void> accept_loop(HttpServer::State& state) {
  for (;;) {
    boost::system::error_code ec;
    auto accepted = co_await state.acceptor.async_accept(asio::make_strand(state.ioc),
                                                          asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (!state.acceptor.is_open() || ec == asio::error::operation_aborted) co_return;
      // Out of files, most likely: wait a moment rather than spin.
      if (state.shared.limits.log) fmt::print(stderr, "serve: accept failed: {}\n", ec.message());
      asio::steady_timer pause(state.accept_strand, std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
      continue;
    }
    tcp::socket socket(std::move(accepted));
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) continue;
    const std::string addr = peer.address().to_string();
    if (std::string refusal = state.shared.admit(addr); !refusal.empty()) {
      if (state.refusing.load() >= kMaxRefusing) continue;  // closed at once
      ++state.refusing;
      auto ex = socket.get_executor();
      asio::co_spawn(ex, refuse_connection(std::move(socket), std::move(refusal), state), asio::detached);
      continue;
    }
    auto connection = std::make_shared<HttpConnection>(std::move(socket), state.shared, addr, peer.port());
    {
      std::lock_guard lock(state.shared.mutex);
      state.shared.live[connection.get()] = connection;
    }
    connection->start();
  }
}

}  // namespace

HttpServer::HttpServer(HttpLimits limits, int io_threads, int worker_threads, HttpHandler handler,
                       HttpErrorWriter write_error)
    : state_(std::make_shared<State>(std::move(limits), std::move(handler), io_threads, worker_threads)) {
  state_->shared.write_error = std::move(write_error);
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::start(const std::string& host, int port) {
  State& s = *state_;
  fit_file_limit(s.shared.limits);
  boost::system::error_code ec;
  tcp::endpoint endpoint;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, static_cast<unsigned short>(port));
  } else {
    tcp::resolver resolver(s.ioc);
    const auto found = resolver.resolve(host, std::to_string(port), ec);
    if (ec || found.empty()) fail("serve: cannot resolve --host {}: {}", host, ec.message());
    endpoint = *found.begin();
  }
  s.acceptor.open(endpoint.protocol(), ec);
  if (ec) fail("serve: cannot open a socket for {}:{}: {}", host, port, ec.message());
  // SO_REUSEADDR (a restart may bind while old connections linger in
  // TIME_WAIT), never SO_REUSEPORT: a second server on this port must fail
  // here, not share the traffic.
  s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  s.acceptor.bind(endpoint, ec);
  if (ec) fail("serve: cannot listen on {}:{}: {} (another server on this port?)", host, port, ec.message());
  s.acceptor.listen(1024, ec);
  if (ec) fail("serve: cannot listen on {}:{}: {}", host, port, ec.message());
  const int bound = s.acceptor.local_endpoint().port();
  asio::co_spawn(s.accept_strand, accept_loop(s), asio::detached);
  for (int i = 0; i < s.io_threads; ++i) s.threads.emplace_back([&s] { s.ioc.run(); });
  s.started = true;
  return bound;
}

void HttpServer::stop() {
  State& s = *state_;
  if (!s.started || s.stopped) return;
  s.stopped = true;
  asio::post(s.accept_strand, [&s] {
    boost::system::error_code ec;
    s.acceptor.close(ec);
  });
  std::vector<std::shared_ptr<HttpConnection>> live;
  {
    std::lock_guard lock(s.shared.mutex);
    s.shared.stopping = true;
    for (auto& [key, weak] : s.shared.live)
      if (auto c = weak.lock()) live.push_back(std::move(c));
  }
  for (auto& c : live) c->stop();
  live.clear();
  // Idle connections close at once; responses in flight (cancelled by the
  // engine by now) get a moment to send their last bytes.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(std::min(s.shared.limits.write_timeout_s, 5.0) + 1);
  while (s.shared.open_connections() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  s.ioc.stop();
  for (std::thread& t : s.threads) t.join();
  s.shared.workers.stop();
  s.shared.workers.join();
}

}  // namespace skiff

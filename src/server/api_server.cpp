#include "server/api_server.h"

#include <fmt/core.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "api/request_fields.h"
#include "base/json.h"
#include "server/connection_threads.h"
#include "server/openai_shapes.h"

namespace skiff {

using nlohmann::json;

void send_error(httplib::Response& res, int status, const std::string& message, const std::string& param) {
  res.status = status;
  // Every 503 here passes (a full queue drains, the model loads): a client
  // told when to come back does not retry in a tight loop.
  if (status == 503) res.set_header("Retry-After", "1");
  res.set_content(dump_json(error_body(status, message, param)), "application/json");
}

namespace {

// Threads past max_connections, for answering the connections refused then
// (a short write each) while every connection slot is taken.
constexpr size_t kRefusalThreads = 32;
// Files the server needs besides its connections (model, listener, stdio).
constexpr rlim_t kOtherFiles = 64;

// The kernel's send buffer of a connection, fixed (Linux doubles it) rather
// than grown up to 4 MiB: how much of a response may wait for a client that
// does not read (kernel memory per connection), and how soon its writes stop
// moving and the write timeout drops it.
constexpr int kSendBufferBytes = 256 << 10;

// TCP keep-alive probes notice a client that vanished without closing (its
// machine or network gone) within about a minute while its handler waits for
// the engine: the socket then reports an error and the request is cancelled.
void set_connection_options(int fd) {
  const int on = 1, idle_s = 30, interval_s = 10, probes = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBufferBytes, sizeof kSendBufferBytes);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

// Raises the soft limit on open files to what max_connections needs (up to
// the hard limit), else fails with both figures: past it, accept() would
// fail and new clients would wait unanswered.
void ensure_file_limit(int max_connections) {
  const rlim_t needed = static_cast<rlim_t>(max_connections) + kRefusalThreads + kOtherFiles;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed) return;
  if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= needed) {
    limit.rlim_cur = needed;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) return;
  }
  fail("serve: --max-connections {} needs {} open files, and this process may open {} (ulimit -n); "
       "lower --max-connections or raise the limit",
       max_connections, needed, limit.rlim_max);
}

}  // namespace

HttpServer::HttpServer(const ConnectionLimits& limits, int max_connections)
    : limits_(limits), max_connections_(std::max(1, max_connections)) {
  const size_t threads = static_cast<size_t>(max_connections_) + kRefusalThreads;
  new_task_queue = [threads] { return new ConnectionThreads(threads); };
}

void HttpServer::set_listen_backlog(int n) {
  if (::listen(svr_sock_, n) != 0) fail("serve: cannot set the listen backlog: {}", std::strerror(errno));
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  ConnectionStream stream(sock, limits_, [this] { return stopping(); });
  if (open_connections_.fetch_add(1) >= max_connections_) {
    --open_connections_;
    stream.refuse(503, fmt::format("the server has {} connections open, its limit (--max-connections); retry later",
                                   max_connections_));
    close_after_refusal(sock);
    return false;
  }
  set_connection_options(sock);
  bool keep_open = true;
  while (keep_open && !stopping() && stream.await_request()) {
    bool client_closes = false;
    keep_open = process_request(stream, /*close_connection=*/stopping(), client_closes, nullptr) &&
                !client_closes && !stream.failed();
  }
  if (stream.refused()) {
    close_after_refusal(sock);
  } else {
    shutdown(sock, SHUT_RDWR);
    close(sock);
  }
  --open_connections_;
  return keep_open;
}

namespace {

ConnectionLimits connection_limits(const ServerOptions& options) {
  ConnectionLimits limits = options.limits;
  limits.log = options.log_requests;
  return limits;
}

}  // namespace

ApiServer::ApiServer(ServerOptions options)
    : options_(std::move(options)), http_(connection_limits(options_), options_.max_connections) {
  http_.set_payload_max_length(options_.limits.max_body_bytes);
  // Statuses httplib sets itself (no route, body too large, bad HTTP) get a JSON body too.
  http_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string message =
        res.status == 404 ? fmt::format("no route for {} {}", req.method, req.path)
        : res.status == 413 ? "the request body is too large"
                            : fmt::format("HTTP {}", res.status);
    send_error(res, res.status, message);
  });
  http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
    }
    send_error(res, 500, message);
  });
  if (options_.log_requests)
    http_.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      fmt::print(stderr, "serve: {}:{} \"{} {}\" {}\n", req.remote_addr, req.remote_port, req.method, req.path,
                 res.status);
    });
  add_routes();
}

ApiServer::~ApiServer() { stop(); }

int ApiServer::start() {
  ensure_file_limit(options_.max_connections);
  int port = options_.port;
  if (port == 0) {
    port = http_.bind_to_any_port(options_.host);
    if (port < 0) fail("serve: cannot bind {}: no free port", options_.host);
  } else if (!http_.bind_to_port(options_.host, port)) {
    fail("serve: cannot bind {}:{} (in use, or not an address of this machine)", options_.host, port);
  }
  http_.set_listen_backlog(1024);
  listener_ = std::thread([this] { http_.listen_after_bind(); });
  return port;
}

void ApiServer::stop() {
  http_.stop();
  if (listener_.joinable()) listener_.join();
}

namespace {

constexpr const char* kUnauthorized = "Unauthorized: a valid API key is needed (Authorization: Bearer KEY)";

// Compares in time that depends on the lengths only, so that response times
// do not tell an attacker how much of a guessed key was right.
bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

bool ApiServer::authorized(const httplib::Request& req) const {
  if (options_.api_key.empty()) return true;
  return constant_time_equal(req.get_header_value("Authorization"), "Bearer " + options_.api_key);
}

const ServedModel* ApiServer::ready(httplib::Response& res) const {
  const ServedModel* model = model_.load();
  if (!model) send_error(res, 503, "the model is still loading");
  return model;
}

void ApiServer::post(const char* path, Handler handler) {
  http_.Post(path, [this, handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) return send_error(res, 401, kUnauthorized);
    const ServedModel* model = ready(res);
    if (!model) return;
    try {
      const ojson body = parse_request_body(req.body);
      check_model_name(*model, body);
      handler(*model, body, req, res);
    } catch (const RequestError& e) {
      send_error(res, e.status(), e.what(), e.param());
    } catch (const Error& e) {
      send_error(res, 400, e.what());
    } catch (const std::bad_alloc&) {
      send_error(res, 503, "out of memory");
    }
  });
}

void ApiServer::add_routes() {
  post("/v1/completions", handle_completions);
  post("/v1/chat/completions", handle_chat_completions);
  post("/tokenize", handle_tokenize);
  post("/detokenize", handle_detokenize);
  http_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (ready(res)) res.set_content("{}", "application/json");
  });
  http_.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) return send_error(res, 401, kUnauthorized);
    const ServedModel* model = ready(res);
    if (!model) return;
    const ojson card{{"id", model->name},         {"object", "model"},
                     {"created", unix_seconds()}, {"owned_by", "skiff"},
                     {"root", model->name},       {"max_model_len", model->engine.max_model_len()}};
    res.set_content(dump_json(ojson{{"object", "list"}, {"data", ojson::array({card})}}), "application/json");
  });
  http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const ServedModel* model = ready(res);
    if (!model) return;
    res.set_content(prometheus_metrics(model->engine.metrics(), model->name, model->engine.rejected()),
                    "text/plain; version=0.0.4");
  });
}

}  // namespace skiff

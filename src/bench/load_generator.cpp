#include "bench/load_generator.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "base/timer.h"

namespace skiff {
namespace {

using nlohmann::json;

std::string request_body(const bench::ThroughputRequest& r, const LoadOptions& o) {
  json body{{"prompt", r.prompt},   {"max_tokens", r.output_len}, {"temperature", 0},
            {"ignore_eos", true},   {"stream", true},             {"stream_options", {{"include_usage", true}}}};
  if (!o.model.empty()) body["model"] = o.model;
  return body.dump();
}

// Reads the server-sent events of one streaming completion as they arrive.
class EventTimer {
 public:
  EventTimer(RequestTiming& t, const Timer& clock) : t_(t), clock_(clock), sent_(clock.seconds()) {}

  void feed(const char* data, size_t n) {
    buffer_.append(data, n);
    for (size_t end; (end = buffer_.find("\n\n")) != std::string::npos;) {
      event(buffer_.substr(0, end));
      buffer_.erase(0, end + 2);
    }
  }
  bool done() const { return done_; }

 private:
  void event(const std::string& e) {
    if (e.rfind("data: ", 0) != 0) return;
    const std::string payload = e.substr(6);
    if (payload == "[DONE]") {
      done_ = true;
      t_.latency = clock_.seconds() - sent_;
      return;
    }
    const json j = json::parse(payload, nullptr, false);
    if (j.is_discarded()) return;
    if (j.contains("usage") && j["usage"].is_object())
      t_.output_tokens = j["usage"].value("completion_tokens", int64_t{0});
    if (!j.contains("choices") || j["choices"].empty()) return;
    if (j["choices"][0].value("text", std::string()).empty()) return;
    const double now = clock_.seconds() - sent_;
    if (!seen_text_) t_.ttft = now;
    else t_.itl.push_back(now - last_);
    seen_text_ = true;
    last_ = now;
  }

  RequestTiming& t_;
  const Timer& clock_;
  double sent_;
  std::string buffer_;
  bool seen_text_ = false, done_ = false;
  double last_ = 0;
};

RequestTiming send_one(httplib::Client& client, const bench::ThroughputRequest& r, const LoadOptions& o,
                       const Timer& clock) {
  RequestTiming t;
  t.prompt_tokens = static_cast<int64_t>(r.prompt.size());
  EventTimer events(t, clock);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = request_body(r, o);
  req.set_header("Content-Type", "application/json");
  if (!o.api_key.empty()) req.set_header("Authorization", "Bearer " + o.api_key);
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    events.feed(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client.send(req, res, error)) t.error = "HTTP error: " + httplib::to_string(error);
  else if (res.status != 200) t.error = "HTTP status " + std::to_string(res.status);
  else if (!events.done()) t.error = "the stream ended without [DONE]";
  t.ok = t.error.empty();
  return t;
}

// Arrival times: all at 0 for an infinite rate, else a Poisson process.
std::vector<double> arrival_times(size_t n, double rate, uint64_t seed) {
  std::vector<double> at(n, 0.0);
  if (!std::isfinite(rate)) return at;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  double t = 0;
  for (double& a : at) {
    a = t;
    t += gap(rng);
  }
  return at;
}

}  // namespace

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / v.size();
  const auto at = [&](double q) {  // linear interpolation, as numpy.percentile
    const double pos = q * (v.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
  };
  p.median = at(0.5);
  p.p99 = at(0.99);
  return p;
}

int LoadResult::succeeded() const {
  return static_cast<int>(std::count_if(requests.begin(), requests.end(), [](const auto& r) { return r.ok; }));
}

int64_t LoadResult::prompt_tokens() const {
  int64_t n = 0;
  for (const auto& r : requests) n += r.ok ? r.prompt_tokens : 0;
  return n;
}

int64_t LoadResult::output_tokens() const {
  int64_t n = 0;
  for (const auto& r : requests) n += r.ok ? r.output_tokens : 0;
  return n;
}

namespace {

template <typename F>
Percentiles over_requests(const std::vector<RequestTiming>& requests, F value) {
  std::vector<double> v;
  for (const auto& r : requests)
    if (r.ok) value(r, v);
  return percentiles(std::move(v));
}

}  // namespace

Percentiles LoadResult::ttft() const {
  return over_requests(requests, [](const RequestTiming& r, auto& v) { v.push_back(r.ttft); });
}
Percentiles LoadResult::tpot() const {
  return over_requests(requests, [](const RequestTiming& r, auto& v) {
    if (r.output_tokens > 1) v.push_back((r.latency - r.ttft) / (r.output_tokens - 1));
  });
}
Percentiles LoadResult::itl() const {
  return over_requests(requests, [](const RequestTiming& r, auto& v) { v.insert(v.end(), r.itl.begin(), r.itl.end()); });
}
Percentiles LoadResult::latency() const {
  return over_requests(requests, [](const RequestTiming& r, auto& v) { v.push_back(r.latency); });
}

LoadResult run_load(const bench::Workload& workload, const LoadOptions& options,
                    const std::function<void(int, int)>& on_progress) {
  const size_t n = workload.requests.size();
  LoadResult result;
  result.max_concurrency = options.max_concurrency;
  result.request_rate = options.request_rate;
  result.requests.resize(n);
  const std::vector<double> arrivals = arrival_times(n, options.request_rate, options.seed);
  const size_t workers = options.max_concurrency > 0 ? std::min<size_t>(options.max_concurrency, n) : n;

  Timer clock;
  std::atomic<size_t> next = 0;
  std::atomic<int> finished = 0;
  std::mutex progress_mutex;
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      httplib::Client client(options.host, options.port);
      client.set_read_timeout(3600);
      client.set_write_timeout(60);
      client.set_tcp_nodelay(true);  // headers and body go out as separate writes
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        const double wait = arrivals[i] - clock.seconds();
        if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
        result.requests[i] = send_one(client, workload.requests[i], options, clock);
        const int done = ++finished;
        if (on_progress) {
          std::lock_guard lock(progress_mutex);
          on_progress(done, static_cast<int>(n));
        }
      }
    });
  for (std::thread& t : threads) t.join();
  result.seconds = clock.seconds();
  return result;
}

}  // namespace skiff

// GET /metrics: Prometheus' text format, with vLLM's metric names where one
// exists, so that dashboards made for vLLM read skiff too.
#include <fmt/core.h>

#include "server/handlers.h"

namespace skiff {
namespace {

class Exposition {
 public:
  explicit Exposition(const std::string& model) : labels_(fmt::format("model_name=\"{}\"", escape(model))) {}

  void gauge(const char* name, const char* help, double value) { sample(name, help, "gauge", value); }
  void counter(const char* name, const char* help, double value) { sample(name, help, "counter", value); }
  void histogram(const char* name, const char* help, const Histogram& h) {
    header(name, help, "histogram");
    int64_t cumulative = 0;
    const auto& bounds = h.upper_bounds();
    for (size_t i = 0; i <= bounds.size(); ++i) {
      cumulative += h.bucket_counts()[i];
      const std::string le = i < bounds.size() ? fmt::format("{}", bounds[i]) : "+Inf";
      text_ += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels_, le, cumulative);
    }
    text_ += fmt::format("{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels_, h.sum(), name, labels_, h.count());
  }
  const std::string& text() const { return text_; }

 private:
  static std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\\' || c == '"') out += '\\';
      if (c == '\n') { out += "\\n"; continue; }
      out += c;
    }
    return out;
  }
  void header(const char* name, const char* help, const char* type) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(const char* name, const char* help, const char* type, double value) {
    header(name, help, type);
    text_ += fmt::format("{}{{{}}} {}\n", name, labels_, value);
  }

  std::string labels_;
  std::string text_;
};

}  // namespace

std::string prometheus_metrics(const EngineMetrics& m, const std::string& model_name, int64_t rejected) {
  Exposition e(model_name);
  e.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", m.requests_running);
  e.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", m.requests_waiting);
  e.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
          m.kv_blocks_total ? static_cast<double>(m.kv_blocks_used) / m.kv_blocks_total : 0.0);
  e.gauge("skiff:kv_cache_blocks_used", "KV blocks held by running sequences.", m.kv_blocks_used);
  e.gauge("skiff:kv_cache_blocks_total", "KV blocks in the pool.", m.kv_blocks_total);
  e.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", static_cast<double>(m.prompt_tokens));
  e.counter("vllm:generation_tokens_total", "Number of generation tokens processed.",
            static_cast<double>(m.generation_tokens));
  e.counter("vllm:request_success_total", "Count of finished requests (cancelled ones included).",
            static_cast<double>(m.requests_finished));
  e.counter("skiff:requests_cancelled_total", "Requests cancelled before they finished (clients gone, shutdown).",
            static_cast<double>(m.requests_cancelled));
  e.counter("skiff:requests_rejected_total", "Requests refused because the waiting queue was full.",
            static_cast<double>(rejected));
  e.counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.",
            static_cast<double>(m.prefix_cache_queries));
  e.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
            static_cast<double>(m.prefix_cache_hits));
  e.counter("vllm:num_preemptions_total", "Cumulative number of preemptions from the engine.",
            static_cast<double>(m.preemptions));
  e.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              m.time_to_first_token);
  e.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
              m.time_per_output_token);
  return e.text();
}

}  // namespace skiff

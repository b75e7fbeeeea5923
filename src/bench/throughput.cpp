#include "bench/throughput.h"

#include <unordered_map>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "base/error.h"
#include "base/json.h"
#include "base/timer.h"

namespace skiff::bench {
namespace {

constexpr double kProgressInterval = 0.25;  // seconds between progress calls

// Uniform in [lo, hi] from a 64-bit generator (the modulo bias is below 2^-40
// for any range used here), the same on every standard library.
int uniform_int(std::mt19937_64& rng, int lo, int hi) {
  return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

int output_len_field(const nlohmann::json& line, int default_output_len, const std::string& where) {
  if (!line.contains("output_len")) {
    if (default_output_len <= 0) fail("{}: no \"output_len\"", where);
    return default_output_len;
  }
  const nlohmann::json& v = line["output_len"];
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 24))
    fail("{}: output_len must be an integer in [1, {}], got {}", where, 1 << 24, json_excerpt(v));
  return v.get<int>();
}

}  // namespace

int64_t Workload::prompt_tokens() const {
  int64_t n = 0;
  for (const ThroughputRequest& r : requests) n += static_cast<int64_t>(r.prompt.size());
  return n;
}

int64_t Workload::output_tokens() const {
  int64_t n = 0;
  for (const ThroughputRequest& r : requests) n += r.output_len;
  return n;
}

int Workload::max_total_len() const {
  int n = 0;
  for (const ThroughputRequest& r : requests) n = std::max(n, static_cast<int>(r.prompt.size()) + r.output_len);
  return n;
}

std::vector<int32_t> random_prompt_ids(const Tokenizer& tokenizer) {
  const Vocab& vocab = tokenizer.vocab();
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    const bool typed = !vocab.types.empty();
    const TokenType type = typed ? vocab.types[id] : TokenType::Normal;
    if (type != TokenType::Normal && type != TokenType::Byte) continue;
    if (!typed && id < 3) continue;
    if (id == tokenizer.bos_id() || id == tokenizer.eos_id() || tokenizer.is_end_of_generation(id)) continue;
    ids.push_back(id);
  }
  if (ids.empty()) fail("the tokenizer has no normal text tokens to draw random prompts from");
  return ids;
}

Workload random_workload(int n, int input_len, int output_min, int output_max, uint64_t seed,
                         const std::vector<int32_t>& ids) {
  if (n < 1) fail("the number of prompts must be >= 1, got {}", n);
  if (input_len < 1) fail("the input length must be >= 1, got {}", input_len);
  if (output_min < 1 || output_max < output_min)
    fail("output lengths must satisfy 1 <= min <= max, got [{}, {}]", output_min, output_max);
  if (ids.empty()) fail("no token ids to draw random prompts from");
  std::mt19937_64 rng(seed);
  Workload w;
  w.requests.resize(n);
  for (ThroughputRequest& r : w.requests) {
    r.prompt.resize(input_len);
    for (int32_t& t : r.prompt) t = ids[uniform_int(rng, 0, static_cast<int>(ids.size()) - 1)];
    r.output_len = uniform_int(rng, output_min, output_max);
  }
  return w;
}

Workload load_dataset(const std::string& path, const Tokenizer& tokenizer, int default_output_len,
                      int max_requests) {
  std::ifstream in(path);
  if (!in) fail("cannot read dataset {}", path);
  Workload w;
  int line_no = 0;
  for (std::string text; std::getline(in, text);) {
    ++line_no;
    if (text.find_first_not_of(" \t\r\f\v") == std::string::npos) continue;
    if (max_requests > 0 && static_cast<int>(w.requests.size()) >= max_requests) break;
    const std::string where = fmt::format("{} line {}", path, line_no);
    nlohmann::json line;
    try {
      line = parse_json(text);
    } catch (const Error& e) {
      fail("{}: {}", where, e.what());
    }
    if (!line.is_object()) fail("{}: not a JSON object", where);
    ThroughputRequest r;
    if (line.contains("prompt_token_ids")) {
      const nlohmann::json& ids = line["prompt_token_ids"];
      if (!ids.is_array()) fail("{}: prompt_token_ids must be a list of token ids", where);
      for (const nlohmann::json& t : ids) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= tokenizer.n_vocab())
          fail("{}: prompt_token_ids entry {} is not a token id in [0, {})", where, json_excerpt(t), tokenizer.n_vocab());
        r.prompt.push_back(t.get<int32_t>());
      }
    } else if (line.contains("prompt")) {
      if (!line["prompt"].is_string()) fail("{}: prompt must be a string", where);
      r.prompt = tokenizer.encode(line["prompt"].get<std::string>(), /*add_special=*/true, /*parse_special=*/true);
    } else {
      fail("{}: needs \"prompt\" or \"prompt_token_ids\"", where);
    }
    if (r.prompt.empty()) fail("{}: the prompt has no tokens", where);
    r.output_len = output_len_field(line, default_output_len, where);
    w.requests.push_back(std::move(r));
  }
  if (in.bad()) fail("cannot read dataset {}: read error", path);
  if (w.requests.empty()) fail("dataset {} has no requests", path);
  return w;
}

const char* serve_mode_name(ServeMode mode) {
  switch (mode) {
    case ServeMode::kContinuous: return "continuous";
    case ServeMode::kOneAtATime: return "one-at-a-time";
    case ServeMode::kStatic: return "static";
  }
  return "?";
}

ModeResult serve(Model& model, const Tokenizer& tokenizer, const EngineOptions& options,
                 const Workload& workload, ServeMode mode, const ProgressCallback& on_progress,
                 const StructuredOutputs* constraint) {
  Engine engine(model, tokenizer, options);
  engine.commit_kv_memory();
  for (const ThroughputRequest& r : workload.requests)
    if (static_cast<int>(r.prompt.size()) + r.output_len > engine.max_model_len())
      fail("a request of {} prompt + {} output tokens exceeds max_model_len {}", r.prompt.size(),
           r.output_len, engine.max_model_len());

  ModeResult result;
  result.mode = mode;
  result.requests = static_cast<int>(workload.requests.size());
  const int total = result.requests;
  int done = 0;
  Timer progress_clock;
  double last_progress = -kProgressInterval;
  std::unordered_map<RequestId, size_t> index_of;
  result.output_lens.assign(workload.requests.size(), 0);
  auto add = [&](size_t i) {
    const ThroughputRequest& r = workload.requests[i];
    SamplingParams p;
    p.temperature = 0;
    p.ignore_eos = constraint == nullptr;
    p.max_tokens = r.output_len;
    if (constraint) p.structured_outputs = *constraint;
    index_of[engine.add_request(r.prompt, p)] = i;
  };
  // Steps until the engine is idle, counting what finishes.
  auto drain = [&] {
    while (engine.has_unfinished()) {
      for (const RequestOutput& out : engine.step()) {
        ++done;
        result.prompt_tokens += static_cast<int64_t>(out.prompt_token_ids.size());
        for (const CompletionOutput& c : out.outputs) {
          if (c.finish_reason == FinishReason::kError) fail("a request failed: {}", c.error);
          result.output_tokens += static_cast<int64_t>(c.token_ids.size());
          result.output_lens[index_of.at(out.request_id)] += static_cast<int>(c.token_ids.size());
        }
      }
      if (on_progress && progress_clock.seconds() - last_progress >= kProgressInterval) {
        last_progress = progress_clock.seconds();
        on_progress(done, total);
      }
    }
  };

  const size_t group = mode == ServeMode::kContinuous ? workload.requests.size()
                       : mode == ServeMode::kOneAtATime ? 1
                                                        : static_cast<size_t>(options.scheduler.max_seqs);
  Timer timer;
  for (size_t first = 0; first < workload.requests.size(); first += group) {
    const size_t last = std::min(workload.requests.size(), first + group);
    for (size_t i = first; i < last; ++i) add(i);
    drain();
  }
  result.seconds = timer.seconds();
  result.metrics = engine.metrics();
  if (on_progress) on_progress(done, total);
  return result;
}

void warm_up(Model& model, const Tokenizer& tokenizer, const EngineOptions& options,
             const Workload& workload) {
  constexpr int kWarmUpOutput = 4;
  Workload head;
  const size_t n = std::min(workload.requests.size(), static_cast<size_t>(options.scheduler.max_seqs));
  for (size_t i = 0; i < n; ++i) {
    ThroughputRequest r = workload.requests[i];
    r.output_len = std::min(r.output_len, kWarmUpOutput);
    head.requests.push_back(std::move(r));
  }
  serve(model, tokenizer, options, head, ServeMode::kContinuous);
}

double forward_flops(const Model& model, const EngineMetrics& metrics, int64_t sampled_rows) {
  const ModelConfig& c = model.config();
  const Matrix& head = model.weights().output;
  const double head_params = static_cast<double>(head.rows) * static_cast<double>(head.cols);
  return 2.0 * model.weights().layer_params(c) * static_cast<double>(metrics.step_tokens) +
         2.0 * head_params * static_cast<double>(sampled_rows) +
         4.0 * c.n_layers * static_cast<double>(c.q_dim()) * static_cast<double>(metrics.attended_positions);
}

}  // namespace skiff::bench

// skiff batch: offline batch inference, as vLLM's LLM.generate over a JSONL
// file. Every request is queued on the continuous-batching engine at once; each
// result is written (and flushed) the moment its request finishes, so the work
// done survives an interruption. A bad line becomes an error object in the
// output and the others proceed. Progress and the summary go to stderr.
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/request_fields.h"
#include "base/error.h"
#include "base/json.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/sampling_flags.h"
#include "engine/llm.h"

namespace skiff::cli {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

// skiff run's (llama.cpp's) sampling defaults, for the fields a line omits.
SamplingParams default_sampling() {
  SamplingParams p = llama_cpp_sampling();
  p.max_tokens = 256;
  return p;
}

struct BatchArgs {
  std::string model;
  std::string input;
  std::string output = "-";
  SamplingParams sampling = default_sampling();  // the flags write straight into it
  int64_t seed = -1;                             // -1: every request random
  int logprobs = -1;                             // -1: none
  EngineFlags engine;
};

// One line of the input, ready to queue.
struct Job {
  int index = 0;
  std::optional<json> id;
  std::string prompt;
  std::vector<int32_t> tokens;
  SamplingParams params;
};

constexpr const char* kKnownFields =
    "prompt, id, max_tokens, temperature, top_p, top_k, min_p, seed, stop, stop_token_ids, n, "
    "logprobs, ignore_eos, repetition_penalty, frequency_penalty, presence_penalty, min_tokens, "
    "skip_special_tokens";

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Fills a job from one parsed line; throws Error naming what is wrong.
void parse_request(const ojson& line, Job& job, const SamplingParams& defaults, int64_t base_seed,
                   const Tokenizer& tokenizer, int max_model_len) {
  if (!line.is_object()) fail("a line must be a JSON object, got {}", line.type_name());
  if (line.contains("id")) job.id = line["id"];
  SamplingParams& p = job.params;
  p = defaults;
  if (base_seed >= 0) p.seed = splitmix64(static_cast<uint64_t>(base_seed) ^ splitmix64(job.index));
  bool has_prompt = false;
  read_sampling_object(line, {tokenizer.n_vocab(), max_model_len}, p, [&](const std::string& key, const ojson& v) {
    if (key == "id") return;
    if (key != "prompt") fail("unknown field '{}' (known: {})", key, kKnownFields);
    if (!v.is_string()) fail("prompt must be a string, got {}", v.type_name());
    job.prompt = v.get<std::string>();
    has_prompt = true;
  });
  if (!has_prompt) fail("the line has no \"prompt\"");
  job.tokens = tokenizer.encode(job.prompt, /*add_special=*/true, /*parse_special=*/true);
}

// Writes one JSON object as a line and flushes it.
class Writer {
 public:
  explicit Writer(const std::string& path) : path_(path) {
    if (path == "-") {
      file_ = stdout;
    } else {
      file_ = std::fopen(path.c_str(), "w");
      if (!file_) fail("cannot write --output {}: {}", path, std::strerror(errno));
    }
  }
  ~Writer() {
    if (file_ && file_ != stdout) std::fclose(file_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void write(const ojson& j) {
    const std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
      fail("cannot write --output {}: {}", path_, std::strerror(errno));
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

ojson error_line(int index, const std::optional<json>& id, const std::string& message) {
  ojson j;
  j["index"] = index;
  if (id) j["id"] = *id;
  j["error"] = message;
  return j;
}

ojson result_line(const Job& job, const RequestOutput& out) {
  ojson j;
  j["index"] = job.index;
  if (job.id) j["id"] = *job.id;
  j["prompt"] = job.prompt;
  j["prompt_tokens"] = out.prompt_token_ids.size();
  ojson outputs = ojson::array();
  for (const CompletionOutput& c : out.outputs) {
    ojson o;
    o["index"] = c.index;
    o["text"] = c.text;
    o["token_ids"] = c.token_ids;
    o["finish_reason"] = c.finish_reason ? finish_reason_name(*c.finish_reason) : nullptr;
    if (!c.stop_reason.empty()) o["stop_reason"] = c.stop_reason;
    if (c.stop_token) o["stop_reason"] = *c.stop_token;  // vLLM: the token id
    if (!c.error.empty()) o["error"] = c.error;
    if (job.params.logprobs) {
      ojson lps = ojson::array();
      for (const TokenLogprob& lp : c.logprobs) {
        ojson top = ojson::array();
        for (const auto& [token, logprob] : lp.top) top.push_back({token, logprob});
        lps.push_back({{"token", lp.token}, {"logprob", lp.logprob}, {"top", std::move(top)}});
      }
      o["logprobs"] = std::move(lps);
    }
    outputs.push_back(std::move(o));
  }
  j["outputs"] = std::move(outputs);
  return j;
}

// The input's non-empty lines (a line of only spaces counts as empty).
std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail("cannot read --input {}: it is a directory", path);
    file.open(path);
    if (!file) fail("cannot read --input {}: {}", path, std::strerror(errno));
    in = &file;
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(*in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t\r\f\v") == std::string::npos) continue;
    lines.push_back(std::move(line));
  }
  if (in->bad()) fail("cannot read --input {}: read error", path);
  return lines;
}

// Progress on stderr at most a few times a second: in place on a terminal,
// one line a second otherwise (logs).
class Progress {
 public:
  explicit Progress(int total) : total_(total), tty_(isatty(fileno(stderr))) {}
  void update(int done, int64_t tokens, bool force = false) {
    const double t = clock_.seconds();
    if (!force && t - last_ < (tty_ ? 0.25 : 1.0)) return;
    last_ = t;
    const std::string line = fmt::format("batch: {}/{} requests, {} tokens generated, {:.1f} tok/s",
                                         done, total_, tokens, t > 0 ? tokens / t : 0.0);
    if (tty_) fmt::print(stderr, "\r{}\033[K", line);
    else fmt::print(stderr, "{}\n", line);
    shown_ = true;
  }
  void end() {
    if (tty_ && shown_) fmt::print(stderr, "\n");
  }
  double seconds() const { return clock_.seconds(); }

 private:
  int total_;
  bool tty_;
  bool shown_ = false;
  Timer clock_;
  double last_ = -1;
};

void batch(const BatchArgs& a) {
  const int threads = set_threads(a.engine.threads);
  const EngineOptions options = engine_options(a.engine);
  SamplingParams defaults = a.sampling;
  if (a.logprobs >= 0) defaults.logprobs = a.logprobs;
  defaults.validate();

  const std::vector<std::string> lines = read_lines(a.input);
  Writer writer(a.output);

  Timer load_timer;
  LLM llm(a.model, llm_options(a.engine));
  Engine& engine = llm.engine();
  const Tokenizer& tokenizer = llm.tokenizer();
  fmt::print(stderr, "batch: loaded {} in {:.2f} s; {} requests; threads {}, max_seqs {}, max_model_len {}, "
             "KV pool {} tokens ({:.1f} MiB {})\n",
             a.model, load_timer.seconds(), lines.size(), threads, options.scheduler.max_seqs,
             engine.max_model_len(), engine.kv_cache().capacity_tokens(),
             engine.kv_cache().bytes() / 1048576.0, kv_type_name(engine.kv_cache().type()));

  // Queue every good line; a bad one is answered at once.
  Progress progress(static_cast<int>(lines.size()));
  std::unordered_map<RequestId, Job> queued;
  int done = 0, failed = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    Job job;
    job.index = static_cast<int>(i);
    try {
      const ojson line = parse_ordered_json(lines[i]);
      parse_request(line, job, defaults, a.seed, tokenizer, engine.max_model_len());
      const RequestId id = engine.add_request(job.tokens, job.params);
      queued.emplace(id, std::move(job));
    } catch (const std::exception& e) {  // skiff::Error, or anything else this line caused
      writer.write(error_line(job.index, job.id, e.what()));
      ++done;
      ++failed;
    }
  }

  while (engine.has_unfinished()) {
    for (const RequestOutput& out : engine.step()) {
      const auto it = queued.find(out.request_id);
      if (it == queued.end()) continue;
      writer.write(result_line(it->second, out));
      queued.erase(it);
      ++done;
    }
    progress.update(done, engine.metrics().generation_tokens);
  }
  const EngineMetrics m = engine.metrics();
  progress.update(done, m.generation_tokens, /*force=*/true);
  progress.end();

  const double wall = progress.seconds();
  fmt::print(stderr,
             "batch: {} requests ({} failed) in {:.2f} s: {:.2f} requests/s; {} prompt tokens, {} output "
             "tokens, {:.1f} output tok/s; prefix cache hit rate {:.1f}%, {} preemptions, {} forward passes\n",
             lines.size(), failed, wall, wall > 0 ? (done - failed) / wall : 0.0, m.prompt_tokens,
             m.generation_tokens, wall > 0 ? m.generation_tokens / wall : 0.0, m.prefix_cache_hit_rate() * 100,
             m.preemptions, m.steps);
}

}  // namespace

void add_batch_command(CLI::App& app) {
  auto args = std::make_shared<BatchArgs>();
  CLI::App* cmd = app.add_subcommand("batch", "offline batch inference over a JSONL file of prompts");
  cmd->add_option("-m,--model", args->model, "GGUF file or Hugging Face directory")->required();
  cmd->add_option("-i,--input", args->input,
                  "JSONL file, one request a line: {\"prompt\": ..., \"id\": ..., sampling fields} (-: stdin)")
      ->required();
  cmd->add_option("-o,--output", args->output, "JSONL results, one line per request as it finishes (-: stdout)")
      ->capture_default_str();
  SamplingParams& s = args->sampling;
  cmd->add_option("-n,--max-tokens", s.max_tokens, "default max_tokens: output tokens per completion at most")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  add_sampling_flags(cmd, s, "default ");
  cmd->add_option("-s,--seed", args->seed,
                  "seeds every request without its own seed, from this and its index (-1: random)")
      ->capture_default_str()->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--stop", s.stop, "default stop string (repeatable)");
  cmd->add_option("--logprobs", args->logprobs, "default logprobs: top alternatives per token (-1: none)")
      ->capture_default_str()->check(CLI::Range(-1, 20));
  cmd->add_flag("--ignore-eos", s.ignore_eos, "default ignore_eos: keep generating past EOS");
  add_engine_flags(cmd, args->engine);
  cmd->callback([args] { batch(*args); });
}

}  // namespace skiff::cli

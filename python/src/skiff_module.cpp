// skiff._skiff: the thin nanobind layer under the Python package (python/skiff).
// It converts nothing but values: sampling fields arrive as JSON and go through
// api/'s read_sampling_field (the server's checks and messages), outputs leave
// as dicts the Python side wraps in vLLM's classes. The engine always steps
// with the GIL released; between steps the GIL is taken back to notice Ctrl-C.
// Any Python thread may step (generate, streams, a stream's worker thread,
// a garbage-collected stream's close): steps take turns, and each finished
// request's output is filed for its owner, since one caller's step finishes
// every caller's requests.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "api/chat_request.h"
#include "api/request_fields.h"
#include "chat/chat_template.h"
#include "engine/llm.h"
#include "request_prompts.h"

namespace nb = nanobind;
using nlohmann::ordered_json;

namespace skiff::python {
namespace {

// SamplingParams from the Python dataclass's fields as a JSON object, read as
// skiff batch reads a line's (api/request_fields.h).
SamplingParams sampling_params_from_json(const std::string& text, int32_t vocab_size, int32_t context_left) {
  SamplingParams p;
  read_sampling_object(parse_request_body(text), {vocab_size, context_left}, p,
                       [](const std::string& key, const nlohmann::json&) {
                         bad_field(key, "unknown sampling field " + key);
                       });
  return p;
}

// vLLM's speculative_config: {"method": "ngram" | "suffix" | "draft_model"
// (the default with "model"), "model": the draft's path,
// "num_speculative_tokens": k, "prompt_lookup_max" / "prompt_lookup_min":
// the n-gram lengths looked up}.
void read_speculative_config(const nlohmann::json& config, LlmOptions& options) {
  if (!config.is_object()) bad_field("speculative_config", "speculative_config must be a dict");
  SpeculationOptions& spec = options.engine.speculation;
  std::string method = config.contains("model") ? "draft_model" : "";
  for (const auto& [key, v] : config.items()) {
    if (key == "method" || key == "model") {
      if (!v.is_string()) bad_field(key, "speculative_config " + key + " must be a string");
      (key == "method" ? method : options.draft_model) = v.get<std::string>();
    } else if (key == "num_speculative_tokens") {
      spec.k = static_cast<int>(integer_field(v, key, 1, 64));
    } else if (key == "prompt_lookup_max") {
      spec.ngram_max = static_cast<int>(integer_field(v, key, 1, 64));
    } else if (key == "prompt_lookup_min") {
      spec.ngram_min = static_cast<int>(integer_field(v, key, 1, 64));
    } else {
      bad_field(key, "unknown speculative_config field " + key +
                         " (known: method, model, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min)");
    }
  }
  if (method == "draft_model" || method == "draft") {
    if (options.draft_model.empty()) bad_field("model", "speculative_config method draft_model needs a model");
    spec.method = SpecMethod::kDraft;
  } else if (method == "ngram" || method == "suffix") {
    if (!options.draft_model.empty()) bad_field("model", "speculative_config method " + method + " takes no model");
    spec.method = method == "ngram" ? SpecMethod::kNgram : SpecMethod::kSuffix;
  } else {
    bad_field("method", "speculative_config method must be ngram, suffix or draft_model, not '" + method + "'");
  }
  if (spec.ngram_min > spec.ngram_max)
    bad_field("prompt_lookup_min", "speculative_config prompt_lookup_min must be <= prompt_lookup_max");
}

nb::list logprobs_to_python(const std::vector<TokenLogprob>& logprobs) {
  nb::list out;
  for (const TokenLogprob& lp : logprobs) {
    nb::list top;
    for (const auto& [token, value] : lp.top) top.append(nb::make_tuple(token, value));
    out.append(nb::make_tuple(lp.token, lp.logprob, top));
  }
  return out;
}

nb::object finish_reason_to_python(const std::optional<FinishReason>& reason) {
  if (!reason) return nb::none();
  return nb::str(finish_reason_name(*reason));
}

nb::dict completion_to_python(const CompletionOutput& c) {
  nb::dict d;
  d["index"] = c.index;
  d["text"] = c.text;
  d["token_ids"] = c.token_ids;
  d["logprobs"] = logprobs_to_python(c.logprobs);
  d["finish_reason"] = finish_reason_to_python(c.finish_reason);
  if (c.stop_token) d["stop_reason"] = *c.stop_token;
  else if (!c.stop_reason.empty()) d["stop_reason"] = c.stop_reason;
  else d["stop_reason"] = nb::none();
  d["error"] = c.error;
  return d;
}

nb::dict request_to_python(const RequestOutput& r) {
  nb::dict d;
  d["request_id"] = r.request_id;
  d["prompt_token_ids"] = r.prompt_token_ids;
  nb::list outputs;
  for (const CompletionOutput& c : r.outputs) outputs.append(completion_to_python(c));
  d["outputs"] = outputs;
  return d;
}

nb::dict delta_to_python(const StreamDelta& delta) {
  nb::dict d;
  d["request_id"] = delta.request_id;
  d["index"] = delta.index;
  d["text"] = delta.text;
  d["token_ids"] = delta.token_ids;
  d["logprobs"] = logprobs_to_python(delta.logprobs);
  d["finish_reason"] = finish_reason_to_python(delta.finish_reason);
  return d;
}

// The model, its engine and chat template; every call runs on the caller's thread.
class PyEngine {
 public:
  PyEngine(const std::string& model, const std::string& options_json) {
    const nlohmann::json o = nlohmann::json::parse(options_json);
    LlmOptions options;
    options.engine.scheduler.max_seqs = o.value("max_num_seqs", 64);
    options.engine.scheduler.max_batch_tokens = o.value("max_num_batched_tokens", 2048);
    options.engine.scheduler.prefix_caching = o.value("enable_prefix_caching", true);
    options.engine.max_model_len = o.value("max_model_len", 0);
    options.engine.kv_mem_bytes = o.value("kv_cache_memory_bytes", size_t{0});
    const std::string kv_dtype = o.value("kv_cache_dtype", std::string("f16"));
    const auto kv_type = kv_type_from_name(kv_dtype);
    if (!kv_type) bad_field("kv_cache_dtype", "kv_cache_dtype must be f32, f16 or q8_0, not " + kv_dtype);
    options.engine.kv_type = *kv_type;
    if (o.contains("speculative_config") && !o["speculative_config"].is_null())
      read_speculative_config(o["speculative_config"], options);
    nb::gil_scoped_release release;
    llm_ = std::make_unique<LLM>(model, options);
    if (auto source = find_chat_template(model)) chat_template_.emplace(std::move(*source));
  }

  // Queues every prompt, all or nothing; returns their ids in prompt order.
  std::vector<RequestId> add(const std::vector<std::vector<int32_t>>& prompts,
                             const std::vector<std::string>& params, const StreamCallback& on_delta) {
    if (params.size() != prompts.size())
      bad_field("sampling_params", fmt::format("{} prompts but {} SamplingParams", prompts.size(), params.size()));
    std::vector<SamplingParams> parsed;
    for (size_t i = 0; i < prompts.size(); ++i) {
      const int32_t left = engine().max_model_len() - static_cast<int32_t>(prompts[i].size());
      parsed.push_back(sampling_params_from_json(params[i], llm_->tokenizer().n_vocab(), left));
    }
    std::vector<RequestId> ids;
    try {
      for (size_t i = 0; i < prompts.size(); ++i) ids.push_back(engine().add_request(prompts[i], parsed[i], on_delta));
    } catch (const Error&) {
      cancel_all(ids);
      throw;
    }
    return ids;
  }

  // Moves the outputs of those of `running` that finished to sink and drops
  // them from running; returns how many.
  size_t collect(std::vector<RequestId>& running, const std::function<void(RequestOutput&&)>& sink) {
    std::vector<RequestOutput> taken;
    {
      std::lock_guard lock(done_mutex_);
      std::erase_if(running, [&](RequestId id) {
        const auto it = done_.find(id);
        if (it == done_.end()) return false;
        taken.push_back(std::move(it->second));
        done_.erase(it);
        return true;
      });
    }
    for (RequestOutput& out : taken) sink(std::move(out));
    return taken.size();
  }

  // One engine step without the GIL; then Ctrl-C, if pressed, cancels `running`.
  void step_interruptible(std::vector<RequestId>& running) {
    step_once();
    if (PyErr_CheckSignals() != 0) {
      cancel_all(running);
      throw nb::python_error();
    }
  }

  // Withdraws requests and steps until they are gone (their blocks freed).
  void cancel_all(std::vector<RequestId>& running) {
    for (RequestId id : running) engine().cancel(id);
    while (collect(running, [](RequestOutput&&) {}), !running.empty()) step_once();
  }

  // Runs the prompts to the end; on_finished(count) after each step that finished some.
  nb::list generate(const std::vector<std::vector<int32_t>>& prompts, const std::vector<std::string>& params,
                    nb::object on_finished) {
    const std::vector<RequestId> ids = add(prompts, params, {});
    std::unordered_map<RequestId, size_t> order;
    for (size_t i = 0; i < ids.size(); ++i) order[ids[i]] = i;
    std::vector<RequestOutput> outputs(ids.size());
    std::vector<RequestId> running = ids;
    for (;;) {
      const size_t n = collect(running, [&](RequestOutput&& out) { outputs[order.at(out.request_id)] = std::move(out); });
      if (n > 0 && !on_finished.is_none()) {
        try {
          on_finished(n);
        } catch (...) {  // the progress callback raised: withdraw the rest
          cancel_all(running);
          throw;
        }
      }
      if (running.empty()) break;
      step_interruptible(running);
    }
    nb::list result;
    for (const RequestOutput& out : outputs) result.append(request_to_python(out));
    return result;
  }

  std::vector<int32_t> encode(const std::string& text, bool add_special) const {
    return llm_->tokenizer().encode(text, add_special, /*parse_special=*/true);
  }
  std::string decode(const std::vector<int32_t>& ids, bool skip_special) const {
    return llm_->tokenizer().decode(ids, /*render_control=*/!skip_special);
  }
  // A chat request's body (messages, add_generation_prompt, tools,
  // chat_template_kwargs) rendered as the server renders it.
  std::string render_chat(const std::string& body_json) const { return rendered_chat(body_json).text; }
  // Its token ids, the messages' own text tokenized as plain text (no control
  // token from a spelling), as the server tokenizes it.
  std::vector<int32_t> encode_chat(const std::string& body_json) const {
    const skiff::MarkedPrompt prompt = rendered_chat(body_json);
    return llm_->tokenizer().encode(prompt.text, /*add_special=*/false, /*parse_special=*/true, prompt.plain);
  }
  skiff::MarkedPrompt rendered_chat(const std::string& body_json) const {
    return skiff::render_chat(chat_template_ ? &*chat_template_ : nullptr, llm_->tokenizer(),
                              parse_request_body(body_json), true);
  }
  int kv_blocks_used() {
    nb::gil_scoped_release release;
    std::lock_guard lock(step_mutex_);
    return engine().metrics().kv_blocks_used;
  }
  int max_model_len() { return engine().max_model_len(); }
  int64_t spec_drafted_tokens() {
    nb::gil_scoped_release release;
    std::lock_guard lock(step_mutex_);
    return engine().metrics().spec_drafted_tokens;
  }
  int32_t eos_id() const { return llm_->tokenizer().eos_id(); }
  int32_t vocab_size() const { return llm_->tokenizer().n_vocab(); }

  Engine& engine() { return llm_->engine(); }

 private:
  // Steps once, one thread at a time, and files the finished outputs.
  void step_once() {
    nb::gil_scoped_release release;
    std::lock_guard step_lock(step_mutex_);
    std::vector<RequestOutput> finished = engine().step();
    std::lock_guard lock(done_mutex_);
    for (RequestOutput& out : finished) done_.emplace(out.request_id, std::move(out));
  }

  std::unique_ptr<LLM> llm_;
  std::optional<ChatTemplate> chat_template_;
  std::mutex step_mutex_;  // held (without the GIL) while the engine steps
  std::mutex done_mutex_;  // guards done_; held briefly
  std::unordered_map<RequestId, RequestOutput> done_;  // finished, not yet taken by their caller
};

// Requests whose deltas the consumer pulls: each next() steps the engine until
// some arrive. close() (and the destructor) cancels what is still running,
// so no callback can reach a stream that is gone.
class PyStream {
 public:
  PyStream(PyEngine& engine, const std::vector<std::vector<int32_t>>& prompts,
           const std::vector<std::string>& params)
      : engine_(engine) {
    ids_ = engine_.add(prompts, params, [this](const StreamDelta& d) {
      std::lock_guard lock(mutex_);
      deltas_.push_back(d);
    });
    running_ = ids_;
  }
  ~PyStream() {
    try {
      close();
    } catch (...) {  // a Ctrl-C or engine error while cancelling: the requests are withdrawn anyway
    }
  }

  const std::vector<RequestId>& ids() const { return ids_; }

  // The next deltas, or None once every request has finished. A request's
  // last delta comes before its output is filed, so once none is running
  // every delta is here.
  nb::object next() {
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (!deltas_.empty()) {
          nb::list out;
          for (const StreamDelta& d : deltas_) out.append(delta_to_python(d));
          deltas_.clear();
          return out;
        }
      }
      if (closed_) return nb::none();
      engine_.collect(running_, [](RequestOutput&&) {});
      if (running_.empty()) {
        std::lock_guard lock(mutex_);
        if (deltas_.empty()) return nb::none();
        continue;
      }
      engine_.step_interruptible(running_);
    }
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    engine_.cancel_all(running_);
    std::lock_guard lock(mutex_);
    deltas_.clear();
  }

 private:
  PyEngine& engine_;
  std::vector<RequestId> ids_;
  std::vector<RequestId> running_;  // not finished as far as this stream has seen
  std::mutex mutex_;  // the callback runs on whichever thread steps; held briefly
  std::vector<StreamDelta> deltas_;
  bool closed_ = false;
};

}  // namespace
}  // namespace skiff::python

NB_MODULE(_skiff, m) {
  using namespace skiff::python;
  // skiff::Error (a RequestError among them) is the caller's mistake: ValueError.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const skiff::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  nb::class_<PyEngine>(m, "Engine")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("model"), nb::arg("options_json"))
      .def("generate", &PyEngine::generate, nb::arg("prompts"), nb::arg("params_json"), nb::arg("on_finished").none())
      .def("encode", &PyEngine::encode, nb::arg("text"), nb::arg("add_special_tokens") = true)
      .def("decode", &PyEngine::decode, nb::arg("token_ids"), nb::arg("skip_special_tokens") = true)
      .def("render_chat", &PyEngine::render_chat, nb::arg("body_json"))
      .def("encode_chat", &PyEngine::encode_chat, nb::arg("body_json"))
      .def("kv_blocks_used", &PyEngine::kv_blocks_used)
      .def("max_model_len", &PyEngine::max_model_len)
      .def("spec_drafted_tokens", &PyEngine::spec_drafted_tokens)
      .def("eos_id", &PyEngine::eos_id)
      .def("vocab_size", &PyEngine::vocab_size);
  nb::class_<PyStream>(m, "Stream")
      .def(nb::init<PyEngine&, const std::vector<std::vector<int32_t>>&, const std::vector<std::string>&>(),
           nb::keep_alive<1, 2>())
      .def("next", &PyStream::next)
      .def("close", &PyStream::close)
      .def_prop_ro("request_ids", &PyStream::ids);
  bind_request_prompts(m);
}

// POST /v1/completions: OpenAI's legacy completions, with vLLM's extensions
// (top_k, min_p, repetition_penalty, stop_token_ids, ignore_eos).
#include <limits>

#include "base/json.h"
#include "server/handlers.h"
#include "server/openai_shapes.h"
#include "server/request_fields.h"

namespace skiff {
namespace {

using nlohmann::json;

bool is_token_list(const json& v) {
  return v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const json& t) { return t.is_number_integer(); });
}

std::vector<int32_t> token_ids(const json& v, int32_t vocab) {
  std::vector<int32_t> ids;
  for (const json& t : v) ids.push_back(static_cast<int32_t>(integer_field(t, "prompt", 0, vocab - 1)));
  return ids;
}

// prompt: a string, a list of strings, a list of token ids, or a list of those.
void read_prompts(const json& v, const Tokenizer& tokenizer, CompletionRequest& r) {
  const auto add_text = [&](const std::string& text) {
    r.prompts.push_back(tokenizer.encode(text, /*add_special=*/true, /*parse_special=*/true));
    r.prompt_texts.push_back(text);
  };
  const auto add_ids = [&](const json& list) {
    r.prompts.push_back(token_ids(list, tokenizer.n_vocab()));
    r.prompt_texts.push_back(tokenizer.decode(r.prompts.back()));
  };
  if (v.is_string()) {
    add_text(v.get<std::string>());
  } else if (is_token_list(v)) {
    add_ids(v);
  } else if (v.is_array() && !v.empty()) {
    for (const json& p : v) {
      if (p.is_string()) add_text(p.get<std::string>());
      else if (is_token_list(p)) add_ids(p);
      else bad_field("prompt", "prompt must be a string, a list of strings, a list of token ids or a list of those");
    }
  } else {
    bad_field("prompt", "prompt must be a non-empty string, list of strings, list of token ids or list of those");
  }
  for (const auto& p : r.prompts)
    if (p.empty()) bad_field("prompt", "a prompt is empty (no tokens)");
}

}  // namespace

CompletionRequest parse_completion_request(const ServedModel& served, const ojson& body) {
  CompletionRequest r;
  const auto prompt = body.find("prompt");
  if (prompt == body.end()) bad_field("prompt", "the request has no prompt");
  read_prompts(*prompt, served.tokenizer, r);
  size_t longest = 0;
  for (const auto& p : r.prompts) longest = std::max(longest, p.size());
  const SamplingFieldLimits limits{served.tokenizer.n_vocab(),
                                   served.engine.max_model_len() - static_cast<int32_t>(longest)};
  for (const auto& [key, v] : body.items()) {
    if (key == "logprobs") {
      if (!v.is_null()) r.params.logprobs = static_cast<int32_t>(integer_field(v, key, 0, 20));
    } else if (key == "echo") {
      r.echo = !v.is_null() && boolean_field(v, key);
    } else if (read_stream_field(key, v, r.stream)) {
    } else if (key == "suffix") {
      if (!v.is_null()) bad_field(key, "suffix is not supported");
    } else if (key == "best_of") {
      if (!v.is_null() && integer_field(v, key, 1, 1) != 1) bad_field(key, "best_of is not supported");
    } else if (key == "logit_bias") {
      if (!v.is_null() && !(v.is_object() && v.empty())) bad_field(key, "logit_bias is not supported");
    } else {
      read_sampling_field(key, v, r.params, limits);  // other fields are ignored, as vLLM does
    }
  }
  validate_sampling(r.params);
  if (r.echo && r.params.logprobs) bad_field("echo", "echo with logprobs (prompt log-probabilities) is not supported");
  for (const auto& p : r.prompts) check_context(served, p.size(), r.params.max_tokens);
  return r;
}

namespace {

ojson choice_json(const Tokenizer& tokenizer, const CompletionRequest& r, int index, const std::string& prefix,
                  const CompletionOutput& c) {
  ojson choice;
  choice["index"] = index;
  choice["text"] = prefix + c.text;
  choice["logprobs"] = r.params.logprobs ? completion_logprobs(tokenizer, c.logprobs, prefix.size()) : ojson(nullptr);
  choice["finish_reason"] = finish_reason_json(c.finish_reason);
  choice["stop_reason"] = stop_reason_json(c);
  return choice;
}

void respond_whole(const ServedModel& served, const CompletionRequest& r, Generation& gen, httplib::Response& res) {
  ojson body = response_head("text_completion", "cmpl-", served.name);
  ojson choices = ojson::array();
  int64_t prompt_tokens = 0, completion_tokens = 0;
  for (int p = 0; p < gen.n_prompts(); ++p) {
    const RequestOutput& out = gen.output(p);
    prompt_tokens += static_cast<int64_t>(r.prompts[p].size());
    for (const CompletionOutput& c : out.outputs) {
      choices.push_back(choice_json(served.tokenizer, r, p * r.params.n + c.index, r.echo ? r.prompt_texts[p] : "", c));
      completion_tokens += static_cast<int64_t>(c.token_ids.size());
    }
  }
  body["choices"] = std::move(choices);
  body["usage"] = usage_json(prompt_tokens, completion_tokens);
  res.set_content(dump_json(body), "application/json");
}

// The text and tokens streamed so far, per choice, for offsets and usage.
struct StreamState {
  std::vector<size_t> text_offset;
  int64_t completion_tokens = 0;
};

void respond_streaming(const ServedModel& served, std::shared_ptr<CompletionRequest> r,
                       std::shared_ptr<Generation> gen, const httplib::Request& req, httplib::Response& res) {
  const ojson head = response_head("text_completion", "cmpl-", served.name);
  const int n = r->params.n;
  auto state = std::make_shared<StreamState>();
  state->text_offset.assign(r->prompts.size() * n, 0);
  std::string opening;
  if (r->echo)
    for (size_t p = 0; p < r->prompts.size(); ++p)
      for (int i = 0; i < n; ++i) {
        opening += sse_choice(head, {{"index", p * n + i}, {"text", r->prompt_texts[p]}, {"logprobs", nullptr}, {"finish_reason", nullptr}});
        state->text_offset[p * n + i] = r->prompt_texts[p].size();
      }
  const Tokenizer& tokenizer = served.tokenizer;
  auto on_event = [r, state, head, &tokenizer, n](const ResponseChannel::Event& e) -> std::string {
    const StreamDelta& d = e.delta;
    if (d.text.empty() && d.token_ids.empty() && !d.finish_reason) return {};
    const size_t index = static_cast<size_t>(e.prompt) * n + d.index;
    ojson choice{{"index", index}, {"text", d.text}};
    choice["logprobs"] = r->params.logprobs ? completion_logprobs(tokenizer, d.logprobs, state->text_offset[index]) : ojson(nullptr);
    choice["finish_reason"] = finish_reason_json(d.finish_reason);
    state->text_offset[index] += d.text.size();
    state->completion_tokens += static_cast<int64_t>(d.token_ids.size());
    return sse_choice(head, std::move(choice));
  };
  auto on_end = [r, state, head]() -> std::string {
    if (!r->stream.include_usage) return {};
    int64_t prompt_tokens = 0;
    for (const auto& p : r->prompts) prompt_tokens += static_cast<int64_t>(p.size());
    return sse_usage(head, prompt_tokens, state->completion_tokens);
  };
  stream_events(res, std::move(gen), client_socket(req), std::move(opening), std::move(on_event), std::move(on_end));
}

}  // namespace

void handle_completions(const ServedModel& served, const ojson& body, const httplib::Request& req,
                        httplib::Response& res) {
  auto r = std::make_shared<CompletionRequest>(parse_completion_request(served, body));
  auto gen = std::make_shared<Generation>(served.engine, r->prompts, r->params);
  if (r->stream.stream) return respond_streaming(served, r, std::move(gen), req, res);
  if (!gen->wait_all(client_socket(req))) return;  // the client left: nobody to answer
  respond_whole(served, *r, *gen, res);
}

}  // namespace skiff

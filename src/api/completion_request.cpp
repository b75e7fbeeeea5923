#include "api/completion_request.h"

#include "api/constraint_fields.h"

#include <fmt/core.h>

#include <algorithm>

namespace skiff {
namespace {

// A list of token ids: as parse_request_body packed it, or as JSON.
bool is_token_list(const ojson& v) {
  return v.is_binary() ||
         (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const ojson& t) { return t.is_number_integer(); }));
}

size_t token_list_size(const ojson& v) { return v.is_binary() ? v.get_binary().size() / sizeof(int32_t) : v.size(); }

std::vector<int32_t> token_ids(const ojson& v, int32_t vocab) {
  if (!v.is_binary()) {
    std::vector<int32_t> ids;
    for (const ojson& t : v) ids.push_back(static_cast<int32_t>(integer_field(t, "prompt", 0, vocab - 1)));
    return ids;
  }
  std::vector<int32_t> ids = packed_token_ids(v);
  for (int32_t id : ids)
    if (id < 0 || id >= vocab) bad_field("prompt", fmt::format("prompt must be in [0, {}], got {}", vocab - 1, id));
  return ids;
}

// prompt: a string, a list of strings, a list of token ids, or a list of those.
// Each is refused as soon as it alone overflows the context; a list of ids
// keeps its text only for echo.
void read_prompts(const ojson& v, const ApiModel& model, CompletionRequest& r) {
  const Tokenizer& tokenizer = model.tokenizer;
  const auto add_text = [&](const std::string& text) {
    r.prompts.push_back(tokenizer.encode(text, /*add_special=*/true, /*parse_special=*/true));
    check_context(model, r.prompts.back().size(), 0);
    r.prompt_texts.push_back(text);
  };
  const auto add_ids = [&](const ojson& list) {
    check_context(model, token_list_size(list), 0);
    r.prompts.push_back(token_ids(list, tokenizer.n_vocab()));
    r.prompt_texts.push_back(r.echo ? tokenizer.decode(r.prompts.back()) : std::string());
  };
  if (v.is_string()) {
    add_text(v.get<std::string>());
  } else if (is_token_list(v)) {
    add_ids(v);
  } else if (v.is_array() && !v.empty()) {
    for (const ojson& p : v) {
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

CompletionRequest parse_completion_request(const ApiModel& model, const nlohmann::ordered_json& body) {
  CompletionRequest r;
  const auto prompt = body.find("prompt");
  if (prompt == body.end()) bad_field("prompt", "the request has no prompt");
  const auto echo = body.find("echo");  // first: it decides what the prompts keep
  r.echo = echo != body.end() && !echo->is_null() && boolean_field(*echo, "echo");
  read_prompts(*prompt, model, r);
  size_t longest = 0;
  for (const auto& p : r.prompts) longest = std::max(longest, p.size());
  const SamplingFieldLimits limits{model.tokenizer.n_vocab(),
                                   model.max_model_len - static_cast<int32_t>(longest)};
  for (const auto& [key, v] : body.items()) {
    if (key == "logprobs") {
      if (!v.is_null()) r.params.logprobs = static_cast<int32_t>(integer_field(v, key, 0, kMaxLogprobs));
    } else if (key == "echo") {  // read above
    } else if (key == "return_tokens_as_token_ids") {
      r.tokens_as_ids = !v.is_null() && boolean_field(v, key);
    } else if (read_stream_field(key, v, r.stream)) {
    } else if (key == "suffix") {
      if (!v.is_null()) bad_field(key, "suffix is not supported");
    } else if (key == "best_of") {
      if (!v.is_null() && integer_field(v, key, 1, 1) != 1) bad_field(key, "best_of is not supported");
    } else if (read_constraint_field(key, v, r.params)) {
    } else {
      read_sampling_field(key, v, r.params, limits);  // other fields are ignored, as vLLM does
    }
  }
  validate_sampling(r.params);
  if (r.echo && r.params.logprobs) bad_field("echo", "echo with logprobs (prompt log-probabilities) is not supported");
  for (const auto& p : r.prompts) check_context(model, p.size(), r.params.max_tokens);
  return r;
}

}  // namespace skiff

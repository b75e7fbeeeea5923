#include "server/openai_shapes.h"

#include <chrono>
#include <random>

#include <fmt/core.h>

#include "api/request_fields.h"

namespace skiff {

namespace {

const char* error_type(int status) {
  switch (status) {
    case 400: return "BadRequestError";
    case 401: return "AuthenticationError";
    case 404: return "NotFoundError";
    case 405: return "MethodNotAllowed";
    case 413: return "RequestTooLarge";
    case 503: return "ServiceUnavailableError";
    default: return status >= 500 ? "InternalServerError" : "BadRequestError";
  }
}

ojson token_bytes(const std::string& piece) {
  ojson bytes = ojson::array();
  for (unsigned char b : piece) bytes.push_back(b);
  return bytes;
}

}  // namespace

ojson error_body(int status, const std::string& message, const std::string& param) {
  ojson e;
  e["message"] = message;
  e["type"] = error_type(status);
  e["param"] = param.empty() ? ojson(nullptr) : ojson(param);
  e["code"] = status;
  return ojson{{"error", std::move(e)}};
}

std::string response_id(const char* prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}{:016x}", prefix, rng(), rng());
}

int64_t unix_seconds() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

ojson usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return ojson{{"prompt_tokens", prompt_tokens},
               {"total_tokens", prompt_tokens + completion_tokens},
               {"completion_tokens", completion_tokens}};
}

ojson response_head(const char* object, const char* id_prefix, const std::string& model) {
  return ojson{{"id", response_id(id_prefix)}, {"object", object}, {"created", unix_seconds()}, {"model", model}};
}

std::string sse_choice(const ojson& head, ojson choice) {
  ojson j = head;
  j["choices"] = ojson::array({std::move(choice)});
  return sse_event(j);
}

std::string sse_usage(const ojson& head, int64_t prompt_tokens, int64_t completion_tokens) {
  ojson j = head;
  j["choices"] = ojson::array();
  j["usage"] = usage_json(prompt_tokens, completion_tokens);
  return sse_event(j);
}

ojson finish_reason_json(const std::optional<FinishReason>& reason) {
  return reason ? ojson(finish_reason_name(*reason)) : ojson(nullptr);
}

ojson stop_reason_json(const CompletionOutput& c) {
  if (!c.stop_reason.empty()) return c.stop_reason;
  if (c.stop_token) return *c.stop_token;
  return nullptr;
}

ojson completion_logprobs(const Tokenizer& tokenizer, const std::vector<TokenLogprob>& logprobs,
                          size_t text_offset, bool tokens_as_ids) {
  ojson tokens = ojson::array(), token_logprobs = ojson::array(), top = ojson::array(),
        offsets = ojson::array();
  auto name = [&](int32_t token) {
    return tokens_as_ids ? "token_id:" + std::to_string(token) : tokenizer.token_to_piece(token);
  };
  for (const TokenLogprob& lp : logprobs) {
    const std::string piece = tokenizer.token_to_piece(lp.token);
    tokens.push_back(name(lp.token));
    token_logprobs.push_back(lp.logprob);
    ojson alternatives = ojson::object();
    for (const auto& [token, logprob] : lp.top) alternatives[name(token)] = logprob;
    top.push_back(std::move(alternatives));
    offsets.push_back(text_offset);
    text_offset += piece.size();
  }
  return ojson{{"text_offset", std::move(offsets)},
               {"token_logprobs", std::move(token_logprobs)},
               {"tokens", std::move(tokens)},
               {"top_logprobs", std::move(top)}};
}

ojson chat_logprobs(const Tokenizer& tokenizer, const std::vector<TokenLogprob>& logprobs, int top) {
  ojson content = ojson::array();
  for (const TokenLogprob& lp : logprobs) {
    const std::string piece = tokenizer.token_to_piece(lp.token);
    ojson alternatives = ojson::array();
    for (size_t i = 0; i < lp.top.size() && static_cast<int>(i) < top; ++i) {
      const std::string alt = tokenizer.token_to_piece(lp.top[i].first);
      alternatives.push_back({{"token", alt}, {"logprob", lp.top[i].second}, {"bytes", token_bytes(alt)}});
    }
    content.push_back({{"token", piece},
                       {"logprob", lp.logprob},
                       {"bytes", token_bytes(piece)},
                       {"top_logprobs", std::move(alternatives)}});
  }
  return ojson{{"content", std::move(content)}};
}

std::string dump_json(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

std::string sse_event(const ojson& j) { return "data: " + dump_json(j) + "\n\n"; }

}  // namespace skiff

// POST /tokenize (a prompt or a chat's messages) and /detokenize, in vLLM's shapes.
#include "api/request_fields.h"
#include "server/handlers.h"
#include "server/openai_shapes.h"

namespace skiff {

using nlohmann::json;

void handle_tokenize(const ServedModel& served, const ojson& body, const HttpRequest&,
                     HttpResponse& res) {
  // A prompt, or a conversation rendered by the chat template (whose text
  // carries its special tokens: none are added by default; the client's text
  // in it is plain text, as the chat endpoint reads it).
  const bool chat = body.contains("messages");
  const auto prompt = body.find("prompt");
  if (!chat && prompt == body.end()) bad_field("prompt", "the request has no prompt (or messages)");
  const MarkedPrompt text = chat ? render_chat(served.chat_template, served.tokenizer, body, true,
                                               served.special_tokens_in_content)
                                 : MarkedPrompt{text_field(*prompt, "prompt"), {}};
  const bool add_special = body.contains("add_special_tokens") && !body["add_special_tokens"].is_null()
                               ? boolean_field(body["add_special_tokens"], "add_special_tokens")
                               : !chat;
  const bool token_strs = body.contains("return_token_strs") && !body["return_token_strs"].is_null() &&
                          boolean_field(body["return_token_strs"], "return_token_strs");
  const std::vector<int32_t> tokens = served.tokenizer.encode(text.text, add_special, /*parse_special=*/true, text.plain);
  ojson out{{"count", tokens.size()}, {"max_model_len", served.max_model_len}, {"tokens", tokens}};
  if (token_strs) {
    ojson strs = ojson::array();
    for (int32_t t : tokens) strs.push_back(served.tokenizer.token_to_piece(t, /*render_control=*/true));
    out["token_strs"] = std::move(strs);
  } else {
    out["token_strs"] = nullptr;
  }
  res.set_content(dump_json(out), "application/json");
}

void handle_detokenize(const ServedModel& served, const ojson& body, const HttpRequest&,
                       HttpResponse& res) {
  const auto tokens = body.find("tokens");
  if (tokens == body.end() || !tokens->is_array()) bad_field("tokens", "tokens must be a list of token ids");
  std::vector<int32_t> ids;
  for (const json t : *tokens)  // a copy: the body is an ordered_json
    ids.push_back(static_cast<int32_t>(integer_field(t, "tokens", 0, served.tokenizer.n_vocab() - 1)));
  // Special tokens as text, as vLLM (its tokenizer.decode keeps them).
  res.set_content(dump_json(ojson{{"prompt", served.tokenizer.decode(ids, /*render_control=*/true)}}), "application/json");
}

}  // namespace skiff

// POST /v1/chat/completions: OpenAI's chat completions, the conversation
// rendered through the model's own chat template (or --chat-template).
#include "api/request_fields.h"
#include "chat/chat_template.h"
#include "server/handlers.h"
#include "server/openai_shapes.h"

namespace skiff {
namespace {

void respond_whole(const ServedModel& served, const ChatRequest& r, Generation& gen, httplib::Response& res) {
  ojson body = response_head("chat.completion", "chatcmpl-", served.name);
  ojson choices = ojson::array();
  int64_t completion_tokens = 0;
  for (const CompletionOutput& c : gen.output(0).outputs) {
    ojson choice;
    choice["index"] = c.index;
    choice["message"] = ojson{{"role", "assistant"}, {"content", c.text}};
    choice["logprobs"] = r.top_logprobs ? chat_logprobs(served.tokenizer, c.logprobs, *r.top_logprobs) : ojson(nullptr);
    choice["finish_reason"] = finish_reason_json(c.finish_reason);
    choice["stop_reason"] = stop_reason_json(c);
    choices.push_back(std::move(choice));
    completion_tokens += static_cast<int64_t>(c.token_ids.size());
  }
  body["choices"] = std::move(choices);
  body["usage"] = usage_json(static_cast<int64_t>(r.prompt.size()), completion_tokens);
  res.set_content(dump_json(body), "application/json");
}

void respond_streaming(const ServedModel& served, std::shared_ptr<ChatRequest> r, std::shared_ptr<Generation> gen,
                       const httplib::Request& req, httplib::Response& res) {
  const ojson head = response_head("chat.completion.chunk", "chatcmpl-", served.name);
  std::string opening;  // the role first, for every choice, as OpenAI sends it
  for (int i = 0; i < r->params.n; ++i)
    opening += sse_choice(head, {{"index", i}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr},
                      {"finish_reason", nullptr}});
  auto completion_tokens = std::make_shared<int64_t>(0);
  const Tokenizer& tokenizer = served.tokenizer;
  auto on_event = [r, head, completion_tokens, &tokenizer](const ResponseChannel::Event& e) -> std::string {
    const StreamDelta& d = e.delta;
    if (d.text.empty() && d.token_ids.empty() && !d.finish_reason) return {};
    *completion_tokens += static_cast<int64_t>(d.token_ids.size());
    ojson delta = d.text.empty() ? ojson::object() : ojson{{"content", d.text}};
    return sse_choice(head, {{"index", d.index},
                  {"delta", std::move(delta)},
                  {"logprobs", r->top_logprobs ? chat_logprobs(tokenizer, d.logprobs, *r->top_logprobs) : ojson(nullptr)},
                  {"finish_reason", finish_reason_json(d.finish_reason)}});
  };
  auto on_end = [r, head, completion_tokens]() -> std::string {
    if (!r->stream.include_usage) return {};
    return sse_usage(head, static_cast<int64_t>(r->prompt.size()), *completion_tokens);
  };
  stream_events(res, std::move(gen), client_socket(req), std::move(opening), std::move(on_event), std::move(on_end));
}

}  // namespace

void handle_chat_completions(const ServedModel& served, const ojson& body, const httplib::Request& req,
                             httplib::Response& res) {
  auto r = std::make_shared<ChatRequest>(parse_chat_request(served, body));
  auto gen = std::make_shared<Generation>(served.engine, std::vector<std::vector<int32_t>>{r->prompt}, r->params);
  if (r->stream.stream) return respond_streaming(served, r, std::move(gen), req, res);
  if (!gen->wait_all(client_socket(req))) return;
  respond_whole(served, *r, *gen, res);
}

}  // namespace skiff

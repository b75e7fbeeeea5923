// POST /v1/chat/completions: OpenAI's chat completions, the conversation
// rendered through the model's own chat template (or --chat-template), the
// reply parsed into reasoning_content, content and tool_calls by the model's
// chat syntax (api/chat_reply_stream.h), streamed as OpenAI's deltas.
#include "api/chat_reply_stream.h"
#include "api/request_fields.h"
#include "chat/chat_template.h"
#include "server/handlers.h"
#include "server/openai_shapes.h"

namespace skiff {
namespace {

ojson tool_call_json(const std::string& id, const ToolCall& call) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

// finish_reason "tool_calls" when a reply that stopped by itself made calls.
ojson chat_finish_reason(const std::optional<FinishReason>& reason, bool has_calls) {
  if (reason == FinishReason::kStop && has_calls) return "tool_calls";
  return finish_reason_json(reason);
}

// The reply's message: content null where the reply is only calls, as OpenAI writes it.
ojson message_json(const ChatReplyStream& stream) {
  const ChatReply& reply = stream.reply();
  ojson message{{"role", "assistant"}};
  message["content"] = reply.content.empty() && !reply.tool_calls.empty() ? ojson(nullptr) : ojson(reply.content);
  if (!reply.reasoning.empty()) message["reasoning_content"] = reply.reasoning;
  if (!reply.tool_calls.empty()) {
    ojson calls = ojson::array();
    for (size_t i = 0; i < reply.tool_calls.size(); ++i) calls.push_back(tool_call_json(stream.call_id(i), reply.tool_calls[i]));
    message["tool_calls"] = std::move(calls);
  }
  return message;
}

ojson delta_json(const ReplyDelta& d) {
  ojson delta = ojson::object();
  if (!d.reasoning.empty()) delta["reasoning_content"] = d.reasoning;
  if (!d.content.empty()) delta["content"] = d.content;
  if (!d.tool_calls.empty()) {
    ojson calls = ojson::array();
    for (const ToolCallDelta& c : d.tool_calls) {
      ojson call{{"index", c.index}};
      ojson function = ojson::object();
      if (!c.id.empty()) call["id"] = c.id, call["type"] = "function", function["name"] = c.name;
      function["arguments"] = c.arguments;
      call["function"] = std::move(function);
      calls.push_back(std::move(call));
    }
    delta["tool_calls"] = std::move(calls);
  }
  return delta;
}

void respond_whole(const ServedModel& served, const ChatRequest& r, Generation& gen, HttpResponse& res) {
  ojson body = response_head("chat.completion", "chatcmpl-", served.name);
  ojson choices = ojson::array();
  int64_t completion_tokens = 0;
  for (const CompletionOutput& c : gen.output(0).outputs) {
    ChatReplyStream stream(r.syntax.get(), response_id("call_") + "_");
    stream.push(c.text);
    stream.finish();
    ojson choice;
    choice["index"] = c.index;
    choice["message"] = message_json(stream);
    choice["logprobs"] = r.top_logprobs ? chat_logprobs(served.tokenizer, c.logprobs, *r.top_logprobs) : ojson(nullptr);
    choice["finish_reason"] = chat_finish_reason(c.finish_reason, !stream.reply().tool_calls.empty());
    choice["stop_reason"] = stop_reason_json(c);
    choices.push_back(std::move(choice));
    completion_tokens += static_cast<int64_t>(c.token_ids.size());
  }
  body["choices"] = std::move(choices);
  body["usage"] = usage_json(gen.prompt_tokens(), completion_tokens);
  res.set_content(dump_json(body), "application/json");
}

void respond_streaming(const ServedModel& served, std::shared_ptr<ChatRequest> r, std::shared_ptr<Generation> gen,
                       HttpResponse& res) {
  const ojson head = response_head("chat.completion.chunk", "chatcmpl-", served.name);
  std::string opening;  // the role first, for every choice, as OpenAI sends it
  for (int i = 0; i < r->params.n; ++i)
    opening += sse_choice(head, {{"index", i}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr},
                      {"finish_reason", nullptr}});
  auto completion_tokens = std::make_shared<int64_t>(0);
  auto streams = std::make_shared<std::vector<ChatReplyStream>>();
  for (int i = 0; i < r->params.n; ++i) streams->emplace_back(r->syntax.get(), response_id("call_") + "_");
  const Tokenizer& tokenizer = served.tokenizer;
  auto on_event = [r, head, completion_tokens, streams, &tokenizer](const ResponseChannel::Event& e) -> std::string {
    const StreamDelta& d = e.delta;
    if (d.text.empty() && d.token_ids.empty() && !d.finish_reason) return {};
    *completion_tokens += static_cast<int64_t>(d.token_ids.size());
    ChatReplyStream& stream = (*streams)[d.index];
    ReplyDelta reply = stream.push(d.text);
    if (d.finish_reason) {
      ReplyDelta rest = stream.finish();
      reply.reasoning += rest.reasoning;
      reply.content += rest.content;
      reply.tool_calls.insert(reply.tool_calls.end(), rest.tool_calls.begin(), rest.tool_calls.end());
    }
    ojson logprobs = r->top_logprobs ? chat_logprobs(tokenizer, d.logprobs, *r->top_logprobs) : ojson(nullptr);
    if (reply.empty() && !d.finish_reason && logprobs.is_null()) return {};
    return sse_choice(head, {{"index", d.index},
                  {"delta", delta_json(reply)},
                  {"logprobs", std::move(logprobs)},
                  {"finish_reason", chat_finish_reason(d.finish_reason, !stream.reply().tool_calls.empty())}});
  };
  auto on_end = [r, head, completion_tokens, prompt_tokens = gen->prompt_tokens()]() -> std::string {
    if (!r->stream.include_usage) return {};
    return sse_usage(head, prompt_tokens, *completion_tokens);
  };
  stream_events(res, std::move(gen), std::move(opening), std::move(on_event), std::move(on_end));
}

}  // namespace

void handle_chat_completions(const ServedModel& served, const ojson& body, const HttpRequest&,
                             HttpResponse& res) {
  auto r = std::make_shared<ChatRequest>(parse_chat_request(served, body));
  std::vector<std::vector<int32_t>> prompts;
  prompts.push_back(std::move(r->prompt));  // the engine's now (an initializer list would copy it)
  auto gen = std::make_shared<Generation>(served.engine, std::move(prompts), r->params);
  if (r->stream.stream) return respond_streaming(served, r, std::move(gen), res);
  respond_when_done(res, gen, [&served, r, gen](HttpResponse& res) { respond_whole(served, *r, *gen, res); });
}

}  // namespace skiff

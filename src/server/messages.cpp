// POST /v1/messages: Anthropic's Messages API over the same engine and chat
// pipeline as /v1/chat/completions (api/messages_request.h translates the
// request), the reply parsed by the model's chat syntax into thinking, text
// and tool_use blocks, whole or streamed as Anthropic's events. And
// POST /v1/messages/count_tokens.
#include "api/chat_reply_stream.h"
#include "api/messages_request.h"
#include "server/anthropic_shapes.h"
#include "server/handlers.h"

namespace skiff {
namespace {

// Tool-use ids as Anthropic writes them: "toolu_" and a random suffix.
ChatReplyStream reply_stream(const ChatRequest& r) {
  return ChatReplyStream(r.syntax.get(), response_id("toolu_") + "_");
}

ojson message_head(const std::string& model) {
  return ojson{{"id", response_id("msg_")}, {"type", "message"}, {"role", "assistant"}, {"model", model}};
}

void respond_whole(const ServedModel& served, const ChatRequest& r, Generation& gen, HttpResponse& res) {
  const CompletionOutput& c = gen.output(0).outputs.at(0);
  ChatReplyStream stream = reply_stream(r);
  stream.push(c.text);
  stream.finish();
  const MessageStop stop = message_stop(c, !stream.reply().tool_calls.empty());
  ojson body = message_head(served.name);
  body["content"] = content_blocks(stream);
  body["stop_reason"] = stop.reason;
  body["stop_sequence"] = stop.sequence;
  body["usage"] = {{"input_tokens", gen.prompt_tokens()}, {"output_tokens", c.token_ids.size()}};
  res.set_content(dump_json(body), "application/json");
}

// The state of one streamed message: the reply parsed as it grows, its blocks
// as events, the tokens so far.
struct MessageStream {
  ChatReplyStream reply;
  ContentBlockEvents blocks;
  int64_t output_tokens = 0;
};

void respond_streaming(const ServedModel& served, std::shared_ptr<ChatRequest> r, std::shared_ptr<Generation> gen,
                       HttpResponse& res) {
  ojson message = message_head(served.name);
  message["content"] = ojson::array();
  message["stop_reason"] = nullptr;
  message["stop_sequence"] = nullptr;
  message["usage"] = {{"input_tokens", gen->prompt_tokens()}, {"output_tokens", 0}};
  // A ping after the start, as Anthropic sends one (and another whenever the
  // stream is idle for --sse-keepalive).
  std::string opening = anthropic_event("message_start", {{"type", "message_start"}, {"message", std::move(message)}}) +
                        anthropic_event("ping", {{"type", "ping"}});
  auto state = std::make_shared<MessageStream>(MessageStream{reply_stream(*r), {}, 0});
  // r holds the syntax the reply is parsed with: it lives as long as the stream.
  auto on_event = [r, state](const ResponseChannel::Event& e) -> std::string {
    const StreamDelta& d = e.delta;
    state->output_tokens += static_cast<int64_t>(d.token_ids.size());
    std::string out = state->blocks.push(state->reply.push(d.text));
    if (d.finish_reason) {
      out += state->blocks.push(state->reply.finish());
      out += state->blocks.close();
    }
    return out;
  };
  // The stream owns the generation, so it is alive whenever this is called.
  auto on_end = [state, g = gen.get()]() -> std::string {
    const MessageStop stop = message_stop(g->output(0).outputs.at(0), !state->reply.reply().tool_calls.empty());
    return anthropic_event("message_delta", {{"type", "message_delta"},
                                             {"delta", {{"stop_reason", stop.reason}, {"stop_sequence", stop.sequence}}},
                                             {"usage", {{"output_tokens", state->output_tokens}}}}) +
           anthropic_event("message_stop", {{"type", "message_stop"}});
  };
  stream_events(res, std::move(gen), std::move(opening), std::move(on_event), std::move(on_end),
                ApiDialect::kAnthropic);
}

}  // namespace

void handle_messages(const ServedModel& served, const ojson& body, const HttpRequest&, HttpResponse& res) {
  auto r = std::make_shared<ChatRequest>(parse_messages_request(served, body));
  std::vector<std::vector<int32_t>> prompts;
  prompts.push_back(std::move(r->prompt));  // the engine's now (an initializer list would copy it)
  auto gen = std::make_shared<Generation>(served.engine, std::move(prompts), r->params);
  if (r->stream.stream) return respond_streaming(served, r, std::move(gen), res);
  respond_when_done(
      res, gen, [&served, r, gen](HttpResponse& res) { respond_whole(served, *r, *gen, res); }, ApiDialect::kAnthropic);
}

void handle_count_tokens(const ServedModel& served, const ojson& body, const HttpRequest&, HttpResponse& res) {
  res.set_content(dump_json(ojson{{"input_tokens", count_message_tokens(served, body)}}), "application/json");
}

}  // namespace skiff

// POST /v1/responses: OpenAI's Responses API over the same engine and chat
// pipeline as /v1/chat/completions (api/responses_request.h translates the
// request), the reply parsed by the model's chat syntax into reasoning,
// message and function_call items, whole or streamed as the Responses events;
// each response kept (unless store: false) for a next turn's
// previous_response_id.
#include <fmt/core.h>

#include "api/chat_reply_stream.h"
#include "api/responses_request.h"
#include "server/handlers.h"
#include "server/response_store.h"
#include "server/responses_shapes.h"

namespace skiff {
namespace {

// One response as it is made: the reply parsed as it grows, its items and events.
struct ResponseState {
  ResponseState(const ServedModel& served, const ResponsesRequest& r, const ojson& body)
      : id(response_id("resp_")),
        reply(r.chat.syntax.get(), response_id("call_") + "_"),
        events(response_skeleton(id, served.name, body), r.chat.stream.stream) {}

  std::string id;
  ChatReplyStream reply;
  ResponseEvents events;
};

// The reply's text so far (all of it where `last`) as items and events.
std::string advance(ResponseState& s, std::string_view text, bool last) {
  std::string out = s.events.push(s.reply.push(text));
  if (last) out += s.events.push(s.reply.finish());
  return out;
}

// The response's end: its status and usage, and the response kept (with the
// conversation's items and its output) where the request stores it.
std::string finish(ResponseState& s, const ResponsesRequest& r, const Generation& gen, ResponseStore& store) {
  const CompletionOutput& c = gen.output(0).outputs.at(0);
  std::string out = s.events.finish(c.finish_reason == FinishReason::kLength, gen.prompt_tokens(),
                                    static_cast<int64_t>(c.token_ids.size()));
  if (r.store) {
    StoredResponse kept{r.items, s.events.response()};
    for (const ojson& item : s.events.response()["output"]) kept.items.push_back(item);
    store.put(s.id, std::move(kept));
  }
  return out;
}

void respond_streaming(std::shared_ptr<ResponsesRequest> r, std::shared_ptr<ResponseState> state,
                       std::shared_ptr<Generation> gen, ResponseStore& store, HttpResponse& res) {
  std::string opening = state->events.start();
  // r holds the syntax the reply is parsed with: it lives as long as the stream.
  auto on_event = [r, state](const ResponseChannel::Event& e) {
    return advance(*state, e.delta.text, e.delta.finish_reason.has_value());
  };
  // The stream owns the generation, so it is alive whenever this is called.
  auto on_end = [r, state, g = gen.get(), &store] { return finish(*state, *r, *g, store); };
  auto on_error = [state](int status, const std::string& message, const std::string& param) {
    return state->events.error(status, message, param);
  };
  stream_events(res, std::move(gen), std::move(opening), std::move(on_event), std::move(on_end),
                ApiDialect::kResponses, std::move(on_error));
}

}  // namespace

void handle_responses(const ServedModel& served, ResponseStore& store, const ojson& body, const HttpRequest&,
                      HttpResponse& res) {
  std::shared_ptr<const StoredResponse> previous;
  if (const std::optional<std::string> id = previous_response_id(body)) {
    previous = store.find(*id);
    if (!previous)
      throw RequestError(404,
                         fmt::format("no response '{}' is kept (responses stored: false, and the oldest beyond "
                                     "the server's bound, are not)",
                                     *id),
                         "previous_response_id");
  }
  auto r = std::make_shared<ResponsesRequest>(parse_responses_request(served, body, previous ? &previous->items : nullptr));
  auto state = std::make_shared<ResponseState>(served, *r, body);
  std::vector<std::vector<int32_t>> prompts;
  prompts.push_back(std::move(r->chat.prompt));  // the engine's now (an initializer list would copy it)
  auto gen = std::make_shared<Generation>(served.engine, std::move(prompts), r->chat.params);
  if (r->chat.stream.stream) return respond_streaming(r, state, std::move(gen), store, res);
  respond_when_done(
      res, gen,
      [r, state, gen, &store](HttpResponse& res) {
        advance(*state, gen->output(0).outputs.at(0).text, true);
        finish(*state, *r, *gen, store);
        res.set_content(dump_json(state->events.response()), "application/json");
      },
      ApiDialect::kResponses);
}

void handle_stored_response(ResponseStore& store, const std::string& id, HttpResponse& res) {
  const std::shared_ptr<const StoredResponse> kept = store.find(id);
  if (!kept) throw RequestError(404, fmt::format("no response '{}' is kept", id), "response_id");
  res.set_content(dump_json(kept->response), "application/json");
}

}  // namespace skiff

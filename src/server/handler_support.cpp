// What every handler shares: its client's socket, streaming a generation as
// server-sent events, and the checks of the model name and the context.
#include "server/handlers.h"

#include "server/openai_shapes.h"
#include "server/request_fields.h"

namespace skiff {

ClientSocket client_socket(const httplib::Request& req) {
  return ClientSocket(req.remote_addr, req.remote_port, req.local_addr, req.local_port);
}

void stream_events(httplib::Response& res, std::shared_ptr<Generation> generation, ClientSocket client,
                   std::string opening, EventRenderer on_event, std::function<std::string()> on_end) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [generation, client, opening = std::move(opening), on_event = std::move(on_event),
       on_end = std::move(on_end)](size_t, httplib::DataSink& sink) {
        const auto send = [&](const std::string& s) { return s.empty() || sink.write(s.data(), s.size()); };
        if (!send(opening)) return false;  // the releaser cancels
        std::vector<ResponseChannel::Event> events;
        for (bool done = false; !done;) {
          events.clear();
          done = generation->poll(events);
          std::string out;
          for (const ResponseChannel::Event& e : events) out += on_event(e);
          // A write to a closed socket succeeds once: ask the socket too.
          if (!send(out) || client.disconnected()) return false;
        }
        if (!send(on_end() + kSseDone)) return false;
        sink.done();
        return true;
      },
      [generation](bool success) {
        if (!success) generation->cancel();
      });
}

void check_model_name(const ServedModel& served, const nlohmann::ordered_json& body) {
  const auto it = body.find("model");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_string()) bad_field("model", "model must be a string");
  if (it->get<std::string>() != served.name)
    throw RequestError(404, fmt::format("The model `{}` does not exist.", it->get<std::string>()), "model");
}

void check_context(const ServedModel& served, size_t prompt_tokens, int max_tokens) {
  const int64_t limit = served.engine.max_model_len();
  if (static_cast<int64_t>(prompt_tokens) >= limit)
    throw RequestError(400, fmt::format("This model's maximum context length is {} tokens. However, your request "
                                        "has {} input tokens. Please reduce the length of the input messages.",
                                        limit, prompt_tokens));
  if (static_cast<int64_t>(prompt_tokens) + max_tokens > limit)
    throw RequestError(400, fmt::format("This model's maximum context length is {} tokens. However, you requested "
                                        "{} tokens ({} in the messages, {} in the completion). Please reduce the "
                                        "length of the messages or completion.",
                                        limit, prompt_tokens + max_tokens, prompt_tokens, max_tokens),
                       "max_tokens");
}

}  // namespace skiff

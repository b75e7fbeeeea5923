// What every handler shares: its client's socket, streaming a generation as
// server-sent events.
#include "server/handlers.h"

#include "api/request_fields.h"
#include "server/openai_shapes.h"

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
        // A failed completion: its error as an event of its own, as vLLM streams one.
        if (std::optional<RequestError> failed = generation->failure())
          if (!send(sse_event(error_body(failed->status(), failed->what(), failed->param())))) return false;
        if (!send(on_end() + kSseDone)) return false;
        sink.done();
        return true;
      },
      [generation](bool success) {
        if (!success) generation->cancel();
      });
}

}  // namespace skiff

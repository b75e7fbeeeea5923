// What every handler shares: a generation's answer as a DeferredBody the HTTP
// layer drives, streamed as server-sent events or made whole at the end.
#include <fmt/core.h>

#include "api/request_fields.h"
#include "base/json.h"
#include "server/anthropic_shapes.h"
#include "server/handlers.h"
#include "server/openai_shapes.h"

namespace skiff {

void send_error(HttpResponse& res, int status, const std::string& message, const std::string& param,
                ApiDialect dialect) {
  const bool anthropic = dialect == ApiDialect::kAnthropic;
  res.status = anthropic ? anthropic_status(status) : status;
  res.deferred.reset();
  res.streamed = false;
  res.set_content(dump_json(anthropic ? anthropic_error_body(status, message, param) : error_body(status, message, param)),
                  "application/json");
  if (status == 503) res.set_header("Retry-After", "1");  // loading, a full queue: temporary
}

void answer_or_send_error(HttpResponse& res, const std::function<void()>& answer, ApiDialect dialect) {
  try {
    answer();
  } catch (const RequestError& e) {
    send_error(res, e.status(), e.what(), e.param(), dialect);
  } catch (const Error& e) {
    send_error(res, 400, e.what(), {}, dialect);
  } catch (const std::bad_alloc&) {
    send_error(res, 503, "out of memory", {}, dialect);
  }
}

namespace {

// An error inside a stream, and the stream's last bytes after it.
std::string stream_error(ApiDialect dialect, int status, const std::string& message, const std::string& param) {
  if (dialect == ApiDialect::kAnthropic) return anthropic_event("error", anthropic_error_body(status, message, param));
  return sse_event(error_body(status, message, param));
}

const char* stream_end(ApiDialect dialect) { return dialect == ApiDialect::kOpenAI ? kSseDone : ""; }

// Roughly the bytes a delta adds to a whole JSON response: its text, and per
// token an id and, with logprobs, an entry per alternative.
size_t response_bytes(const StreamDelta& d) {
  size_t bytes = d.text.size() + 8 * d.token_ids.size();
  for (const TokenLogprob& t : d.logprobs) bytes += 48 * (1 + t.top.size());
  return bytes;
}

class EventStream final : public DeferredBody {
 public:
  EventStream(std::shared_ptr<Generation> generation, std::string opening, EventRenderer on_event,
              std::function<std::string()> on_end, ApiDialect dialect, StreamErrorRenderer on_error)
      : generation_(std::move(generation)), opening_(std::move(opening)), on_event_(std::move(on_event)),
        on_end_(std::move(on_end)), dialect_(dialect), on_error_(std::move(on_error)) {}

  void on_ready(std::function<void()> fn) override { generation_->on_ready(std::move(fn)); }

  bool poll(std::string& out) override {
    if (ended_) return true;
    out += std::exchange(opening_, {});
    events_.clear();
    const bool done = generation_->take(events_);
    for (const ResponseChannel::Event& e : events_) out += on_event_(e);
    if (!done) return false;
    // A failed completion: its error as an event of its own, as vLLM streams
    // one; an Anthropic or Responses stream ends there (no stop reason to tell).
    const std::optional<RequestError> failed = generation_->failure();
    if (failed) out += error(failed->status(), failed->what(), failed->param());
    if (!failed || dialect_ == ApiDialect::kOpenAI) out += on_end_();
    out += stream_end(dialect_);
    ended_ = true;
    return true;
  }

  void cancel() override { generation_->cancel(); }

  // Anthropic's clients expect a ping event on an idle stream (a long prefill).
  std::string keepalive() const override {
    if (dialect_ == ApiDialect::kAnthropic) return anthropic_event("ping", {{"type", "ping"}});
    return DeferredBody::keepalive();
  }

  std::string cut(int status, const std::string& message) override {
    cancel();
    ended_ = true;
    return error(status, message, {}) + stream_end(dialect_);
  }

 private:
  std::string error(int status, const std::string& message, const std::string& param) const {
    return on_error_ ? on_error_(status, message, param) : stream_error(dialect_, status, message, param);
  }

  std::shared_ptr<Generation> generation_;
  std::string opening_;
  EventRenderer on_event_;
  std::function<std::string()> on_end_;
  ApiDialect dialect_;
  StreamErrorRenderer on_error_;
  std::vector<ResponseChannel::Event> events_;
  bool ended_ = false;
};

class WholeResponse final : public DeferredBody {
 public:
  WholeResponse(std::shared_ptr<Generation> generation, std::function<void(HttpResponse&)> respond,
                ApiDialect dialect)
      : generation_(std::move(generation)), respond_(std::move(respond)), dialect_(dialect) {}

  void on_ready(std::function<void()> fn) override { generation_->on_ready(std::move(fn)); }

  bool poll(std::string&) override {
    events_.clear();
    const bool done = generation_->take(events_);  // the outputs hold it all: the deltas only count
    for (const ResponseChannel::Event& e : events_) size_ += response_bytes(e.delta);
    return done;
  }

  size_t size_so_far() const override { return size_; }

  void finish(HttpResponse& res) override {
    if (cut_status_) return send_error(res, cut_status_, cut_message_, {}, dialect_);
    answer_or_send_error(
        res,
        [&] {
          if (std::optional<RequestError> failed = generation_->failure()) throw *failed;
          respond_(res);
        },
        dialect_);
  }

  void cancel() override { generation_->cancel(); }

  std::string cut(int status, const std::string& message) override {
    cancel();
    cut_status_ = status;
    cut_message_ = message;
    return {};
  }

 private:
  std::shared_ptr<Generation> generation_;
  std::function<void(HttpResponse&)> respond_;
  ApiDialect dialect_;
  int cut_status_ = 0;  // cut: finish() answers this error
  std::string cut_message_;
  std::vector<ResponseChannel::Event> events_;
  size_t size_ = 0;
};

}  // namespace

void stream_events(HttpResponse& res, std::shared_ptr<Generation> generation, std::string opening,
                   EventRenderer on_event, std::function<std::string()> on_end, ApiDialect dialect,
                   StreamErrorRenderer on_error) {
  res.set_header("Cache-Control", "no-cache");
  res.stream("text/event-stream",
             std::make_shared<EventStream>(std::move(generation), std::move(opening), std::move(on_event),
                                           std::move(on_end), dialect, std::move(on_error)));
}

void respond_when_done(HttpResponse& res, std::shared_ptr<Generation> generation,
                       std::function<void(HttpResponse&)> respond, ApiDialect dialect) {
  res.defer(std::make_shared<WholeResponse>(std::move(generation), std::move(respond), dialect));
}

}  // namespace skiff

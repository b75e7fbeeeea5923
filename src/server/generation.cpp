#include "server/generation.h"

#include "api/request_fields.h"

namespace skiff {
namespace {

// How long poll() waits for news.
constexpr std::chrono::milliseconds kPollInterval{10};

}  // namespace

Generation::Generation(ServingEngine& engine, std::vector<std::vector<int32_t>> prompts,
                       const SamplingParams& params)
    : engine_(engine),
      channel_(std::make_shared<ResponseChannel>(static_cast<int>(prompts.size()))),
      constraint_field_(params.structured_outputs.field) {
  // Past the queue's bound a request could never be admitted, however long
  // its client waited: its own error, not a 503's "retry later".
  const int bound = engine.max_waiting();
  if (bound > 0 && prompts.size() > static_cast<size_t>(bound))
    throw RequestError(400, fmt::format("{} prompts in one request exceed the queue's {} (--max-queue)",
                                        prompts.size(), bound), "prompt");
  try {
    for (size_t i = 0; i < prompts.size(); ++i) {
      prompt_tokens_ += static_cast<int64_t>(prompts[i].size());
      ids_.push_back(engine_.submit(std::move(prompts[i]), params, channel_, static_cast<int>(i)));
    }
  } catch (const QueueFull& e) {
    cancel();
    throw RequestError(503, e.what());
  } catch (const RequestError&) {
    cancel();
    throw;
  } catch (const FieldError& e) {
    cancel();
    throw RequestError(400, e.what(), e.field());
  } catch (const Error& e) {
    cancel();
    throw RequestError(400, e.what());
  }
}

Generation::~Generation() {
  // The channel may outlive this (the engine holds it until the cancel is
  // taken in): its listener must not reach a response that is gone.
  channel_->set_listener(nullptr);
  if (!finished_) cancel();
}

bool Generation::poll(std::vector<ResponseChannel::Event>& events) {
  finished_ = channel_->wait(events, kPollInterval);
  return finished_;
}

bool Generation::take(std::vector<ResponseChannel::Event>& events) {
  finished_ = channel_->wait(events, std::chrono::milliseconds(0));
  return finished_;
}

std::optional<RequestError> Generation::failure() const {
  for (int p = 0; p < n_prompts(); ++p)
    for (const CompletionOutput& c : output(p).outputs) {
      if (c.finish_reason != FinishReason::kError) continue;
      const std::string error = c.error.empty() ? "the generation failed" : c.error;
      if (constraint_field_.empty()) return RequestError(500, error);
      return RequestError(400, fmt::format("{}: {}", constraint_field_, error), constraint_field_);
    }
  return std::nullopt;
}

void Generation::cancel() {
  for (RequestId id : ids_) engine_.cancel(id);
}

}  // namespace skiff

// One HTTP request's generation on the ServingEngine: its prompts submitted
// together, waited for (or streamed) while the client stays, cancelled when
// it leaves or the response is dropped. The HTTP layer never blocks on it:
// it is told when there is news (on_ready) and takes what is there (take).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/request_fields.h"
#include <functional>
#include "server/serving_engine.h"

namespace skiff {

class Generation {
 public:
  // Submits every prompt with params, moved into the engine (the one copy
  // while they wait). Throws RequestError (400: the engine refused the
  // request, or it has more prompts than the queue ever holds; 503: the
  // queue is full now), cancelling any prompt already submitted.
  Generation(ServingEngine& engine, std::vector<std::vector<int32_t>> prompts, const SamplingParams& params);
  ~Generation();  // cancels what has not finished
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // Moves new deltas into events, waiting at most one poll interval; true
  // once every prompt has finished.
  bool poll(std::vector<ResponseChannel::Event>& events);
  // As poll, without waiting.
  bool take(std::vector<ResponseChannel::Event>& events);
  // fn is called on the engine thread after each new delta or output (see
  // ResponseChannel::set_listener); cleared when the generation ends.
  void on_ready(std::function<void()> fn) { channel_->set_listener(std::move(fn)); }
  void cancel();

  int n_prompts() const { return static_cast<int>(ids_.size()); }
  int64_t prompt_tokens() const { return prompt_tokens_; }  // over every prompt
  const RequestOutput& output(int prompt) const { return channel_->output(prompt); }
  // Once finished: the first completion's error where one ended in one
  // (finish_reason "error"), as the request's answer: 400 naming the
  // constraint where the request has one (its grammar could not be
  // completed), else 500. A failed request is an error, never a 200 with part
  // of an output.
  std::optional<RequestError> failure() const;

 private:
  ServingEngine& engine_;
  std::shared_ptr<ResponseChannel> channel_;
  std::vector<RequestId> ids_;
  int64_t prompt_tokens_ = 0;
  bool finished_ = false;
  std::string constraint_field_;  // the structured output's request field, if any
};

}  // namespace skiff

// One completion as the scheduler sees it: its tokens, how many of them have
// K/V in the cache, and where that cache lives. A sequence moves waiting →
// running → finished, or running → waiting again when preempted (its KV is
// freed and recomputed on its return, mostly from the prefix cache).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/request.h"

namespace skiff {

enum class SequenceStatus { kWaiting, kRunning, kFinished };

struct Sequence {
  RequestId request_id = 0;
  int index = 0;                 // which of the request's n completions
  std::vector<int32_t> tokens;   // the prompt, then the generated tokens
  int n_prompt = 0;
  int n_computed = 0;            // leading tokens whose K/V is in the cache
  int kv_seq = -1;               // its PagedKvCache sequence; -1 while it holds none
  SequenceStatus status = SequenceStatus::kWaiting;
  // Running slots it needs when admitted: 1, or n for the first completion of
  // a request with n > 1, whose siblings fork from it once the prompt is in
  // (each fork takes one of them over).
  int slots = 1;

  // Tokens still to run through the model: the prompt (or a chunk of it), or
  // the last sampled token; all of them again after a preemption.
  int n_uncomputed() const { return static_cast<int>(tokens.size()) - n_computed; }
  std::span<const int32_t> prompt() const { return {tokens.data(), static_cast<size_t>(n_prompt)}; }
  std::span<const int32_t> output() const {
    return std::span<const int32_t>(tokens).subspan(static_cast<size_t>(n_prompt));
  }
};

}  // namespace skiff

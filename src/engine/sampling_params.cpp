#include "engine/sampling_params.h"

#include <cmath>

#include "base/error.h"

namespace skiff {
namespace {

// vLLM's threshold: dividing by a smaller temperature could overflow the logits.
constexpr float kGreedyTemperatureBelow = 1e-5f;

}  // namespace

bool SamplingParams::is_greedy() const { return temperature < kGreedyTemperatureBelow; }

void SamplingParams::validate() const {
  if (!(temperature >= 0 && std::isfinite(temperature)))
    fail("sampling: temperature must be finite and >= 0, got {}", temperature);
  if (top_k < -1) fail("sampling: top_k must be >= 1, or 0 or -1 for off; got {}", top_k);
  if (!(top_p > 0 && top_p <= 1)) fail("sampling: top_p must be in (0, 1], got {}", top_p);
  if (!(min_p >= 0 && min_p <= 1)) fail("sampling: min_p must be in [0, 1], got {}", min_p);
  if (!(repetition_penalty > 0 && std::isfinite(repetition_penalty)))
    fail("sampling: repetition_penalty must be finite and > 0, got {}", repetition_penalty);
  if (!(frequency_penalty >= -2 && frequency_penalty <= 2))
    fail("sampling: frequency_penalty must be in [-2, 2], got {}", frequency_penalty);
  if (!(presence_penalty >= -2 && presence_penalty <= 2))
    fail("sampling: presence_penalty must be in [-2, 2], got {}", presence_penalty);
  if (n < 1) fail("sampling: n must be >= 1, got {}", n);
  if (max_tokens < 1) fail("sampling: max_tokens must be >= 1, got {}", max_tokens);
  if (min_tokens < 0 || min_tokens > max_tokens)
    fail("sampling: min_tokens must be in [0, max_tokens = {}], got {}", max_tokens, min_tokens);
  for (const std::string& s : stop)
    if (s.empty()) fail("sampling: a stop string is empty");
  if (logprobs && (*logprobs < 0 || *logprobs > kMaxLogprobs))
    fail("sampling: logprobs must be in [0, {}], got {}", kMaxLogprobs, *logprobs);
  for (auto [token, bias] : logit_bias)
    if (!(bias >= -100 && bias <= 100)) fail("sampling: logit_bias for token {} must be in [-100, 100], got {}", token, bias);
  for (const std::string& w : bad_words)
    if (w.empty()) fail("sampling: a bad word is empty");
  if (structured_outputs.count() > 1)
    fail("sampling: structured outputs take one of json, json_object, regex, choice and grammar, got {}",
         structured_outputs.count());
  for (const std::string& c : structured_outputs.choice)
    if (c.empty()) fail("sampling: a structured-output choice is empty");
  if (speculative_tokens < -1)
    fail("sampling: speculative_tokens must be >= 0, or -1 for the engine's; got {}", speculative_tokens);
}

}  // namespace skiff

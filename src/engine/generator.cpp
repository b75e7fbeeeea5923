#include "engine/generator.h"

#include <vector>

#include "base/error.h"
#include "base/timer.h"

namespace skiff {

GenerationStats generate(Model& model, PagedKvCache& kv, std::span<const int32_t> prompt,
                         const GenerateOptions& options,
                         const std::function<bool(int32_t)>& on_token) {
  if (prompt.empty()) fail("the prompt is empty (no tokens)");
  if (static_cast<int>(prompt.size()) > kv.max_seq_len())
    fail("the prompt has {} tokens but the context holds {}", prompt.size(), kv.max_seq_len());
  if (kv.length(0) != 0) fail("generate: KV sequence 0 is not empty");
  Sampler sampler(options.sampling, model.config().vocab_size);
  GenerationStats stats;
  stats.prompt_tokens = static_cast<int>(prompt.size());
  std::vector<int32_t> output;

  Timer timer;
  std::vector<float> logits = model.prefill(kv, 0, prompt);
  stats.prefill_seconds = timer.seconds();
  Timer decode_timer;
  while (static_cast<int>(output.size()) < options.max_tokens) {
    const int32_t token = sampler.sample(logits, prompt, output);
    if (output.empty()) stats.first_token_seconds = timer.seconds();
    if (options.is_end_token && options.is_end_token(token)) {
      stats.stopped_at_end_token = true;
      break;
    }
    output.push_back(token);
    if (!on_token(token)) break;
    if (static_cast<int>(output.size()) == options.max_tokens || kv.length(0) == kv.max_seq_len()) break;
    if (stats.decode_steps == 0) decode_timer.reset();
    logits = model.decode(kv, 0, token);
    ++stats.decode_steps;
  }
  stats.decode_seconds = stats.decode_steps ? decode_timer.seconds() : 0.0;
  stats.generated_tokens = static_cast<int>(output.size());
  return stats;
}

}  // namespace skiff

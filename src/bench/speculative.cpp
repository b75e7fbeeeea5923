#include "bench/speculative.h"

#include <algorithm>

#include "base/timer.h"

namespace skiff::bench {

SpecResult run_greedy(Model& target, const Tokenizer& tokenizer, const EngineOptions& options,
                      const std::vector<int32_t>& prompt, int n_tokens) {
  Engine engine(target, tokenizer, options);
  engine.commit_kv_memory();
  SamplingParams params;
  params.temperature = 0;
  params.max_tokens = n_tokens;
  params.ignore_eos = true;
  engine.add_request(prompt, params);
  engine.step();  // prefill and the first token
  Timer timer;
  std::vector<RequestOutput> outs = engine.run_to_completion();
  SpecResult r;
  r.k = options.speculation.method == SpecMethod::kNone ? 0 : options.speculation.k;
  r.decode_seconds = timer.seconds();
  r.metrics = engine.metrics();
  r.tokens = outs.at(0).outputs.at(0).token_ids;
  r.generated = static_cast<int>(r.tokens.size());
  return r;
}

double forward_seconds(Model& target, const std::vector<int32_t>& prompt, int n_new, int repeats) {
  const int n_prompt = static_cast<int>(prompt.size());
  PagedKvCache kv = target.make_kv_cache(1, n_prompt + n_new, KvType::kF16);
  target.prefill(kv, 0, prompt);
  Batch batch;
  batch.tokens.assign(n_new, prompt.back());
  batch.seqs.push_back({0, n_prompt, n_new, n_new});
  std::vector<float> logits(static_cast<size_t>(n_new) * target.config().vocab_size);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    Timer timer;
    target.forward_and_append(batch, kv, logits.data());
    times.push_back(timer.seconds());
    kv.truncate(0, n_prompt);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace skiff::bench

#include "engine/perplexity.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/timer.h"

namespace skiff {
namespace {

// -log softmax(logits)[token], in double.
double negative_log_prob(const float* logits, int vocab, int token) {
  const float max = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int i = 0; i < vocab; ++i) sum += std::exp(double(logits[i]) - max);
  return std::log(sum) - (double(logits[token]) - max);
}

}  // namespace

PerplexityResult perplexity(Model& model, const Tokenizer& tokenizer, const std::string& text,
                            const PerplexityOptions& o, const ChunkCallback& on_chunk) {
  if (o.n_ctx < 4) fail("perplexity: the context must be at least 4 tokens, got {}", o.n_ctx);
  if (o.n_ctx > model.config().max_ctx)
    fail("perplexity: a context of {} exceeds the model's {}", o.n_ctx, model.config().max_ctx);
  if (o.n_batch < 1 || o.max_chunks < 0) fail("perplexity: batch size and chunk count must be positive");
  const std::vector<int32_t> tokens = tokenizer.encode(text, /*add_special=*/true, /*parse_special=*/false);
  PerplexityResult r;
  r.n_tokens = static_cast<int>(tokens.size());
  r.n_chunks = r.n_tokens / o.n_ctx;
  if (o.max_chunks > 0) r.n_chunks = std::min(r.n_chunks, o.max_chunks);
  if (r.n_chunks == 0)
    fail("perplexity: the text has {} tokens, fewer than one chunk of {} (give -c a smaller context)",
         r.n_tokens, o.n_ctx);

  const int vocab = model.config().vocab_size;
  const int n_batch = std::min(o.n_batch, o.n_ctx);
  const int first_scored = o.n_ctx / 2;
  const bool bos = tokenizer.add_bos() && tokenizer.bos_id() >= 0;
  model.set_context_length(o.n_ctx);
  PagedKvCache kv = model.make_kv_cache(1, o.n_ctx, o.kv_type);
  std::vector<float> logits(static_cast<size_t>(n_batch) * vocab);
  double nll = 0, nll2 = 0;
  Timer timer;
  for (int chunk = 0; chunk < r.n_chunks; ++chunk) {
    std::vector<int32_t> ids(tokens.begin() + chunk * o.n_ctx, tokens.begin() + (chunk + 1) * o.n_ctx);
    if (bos) ids[0] = tokenizer.bos_id();
    kv.truncate(0, 0);
    for (int b0 = 0; b0 < o.n_ctx; b0 += n_batch) {
      const int n = std::min(n_batch, o.n_ctx - b0);
      // Logits only for the batch's rows that are scored (and all after the first).
      const int first_logit = std::max(b0, first_scored);
      const int n_logits = std::max(0, b0 + n - first_logit);
      Batch batch{std::vector<int32_t>(ids.begin() + b0, ids.begin() + b0 + n), {{0, b0, n, n_logits}}};
      model.forward_and_append(batch, kv, logits.data());
      for (int j = 0; j < n_logits; ++j) {
        const int pos = first_logit + j;
        if (pos + 1 >= o.n_ctx) break;
        const double v = negative_log_prob(&logits[static_cast<size_t>(j) * vocab], vocab, ids[pos + 1]);
        nll += v;
        nll2 += v * v;
        ++r.n_scored;
      }
    }
    if (on_chunk) on_chunk(chunk + 1, std::exp(nll / r.n_scored));
  }
  r.seconds = timer.seconds();
  const double mean = nll / r.n_scored;
  r.ppl = std::exp(mean);
  const double variance = nll2 / r.n_scored - mean * mean;
  r.ppl_error = variance > 0 && r.n_scored > 1 ? r.ppl * std::sqrt(variance / (r.n_scored - 1)) : 0;
  return r;
}

}  // namespace skiff

#include "engine/speculative.h"

#include <algorithm>

namespace skiff {
namespace {

// q_i(token): the drafter's probability of its token at position i.
float draft_probability(const Draft& draft, int i, size_t vocab) {
  if (draft.probs.empty()) return 1.0f;  // chosen deterministically: q one-hot
  return draft.probs[i * vocab + draft.tokens[i]];
}

// norm(max(0, p - q)) into scratch.residual, unnormalized (draw_from normalizes).
void residual_distribution(const Draft& draft, int i, VerifyScratch& s) {
  const size_t vocab = s.p.size();
  s.residual.assign(s.p.begin(), s.p.end());
  if (draft.probs.empty()) {
    s.residual[draft.tokens[i]] = 0.0f;
  } else {
    const float* q = draft.probs.data() + i * vocab;
    for (size_t v = 0; v < vocab; ++v) s.residual[v] = std::max(0.0f, s.p[v] - q[v]);
  }
  // p ≤ q everywhere only when they are equal (up to rounding), and then a
  // rejection has probability 0: fall back to p itself.
  if (std::ranges::all_of(s.residual, [](float r) { return r <= 0.0f; })) s.residual = s.p;
}

// Rows in order until a draft token is rejected; the processors are left
// past the accepted drafts.
int verify_rows(Sampler& sampler, const float* logits, const Draft& draft, VerifyScratch& s,
                LogitsProcessors* processors, std::vector<int32_t>& out) {
  const Sequence& seq = *draft.seq;
  const size_t vocab = sampler.vocab_size();
  const int n_draft = static_cast<int>(draft.tokens.size());
  s.context.assign(seq.tokens.begin(), seq.tokens.end());
  out.clear();
  for (int i = 0; i <= n_draft; ++i) {
    std::span<const float> row(logits + i * vocab, vocab);
    const std::span<const int32_t> prompt(s.context.data(), seq.n_prompt);
    const std::span<const int32_t> output = std::span<const int32_t>(s.context).subspan(seq.n_prompt);
    if (processors) {
      s.row.assign(row.begin(), row.end());
      processors->apply(s.row, output);
      row = s.row;
    }
    bool accepted;
    if (i == n_draft || sampler.params().is_greedy()) {
      // The bonus token, or greedy: exactly what plain decoding would output here.
      const int32_t token = sampler.sample(row, prompt, output);
      accepted = i < n_draft && token == draft.tokens[i];
      if (!accepted) {
        out.push_back(token);
        return i;
      }
    } else {
      s.p.resize(vocab);
      sampler.probabilities(row, prompt, output, s.p);
      const int32_t token = draft.tokens[i];
      const float q = draft_probability(draft, i, vocab);
      // u < p/q, as u·q < p (q > 0: the drafter drew the token from q).
      accepted = sampler.uniform() * q < s.p[token];
      if (!accepted) {
        residual_distribution(draft, i, s);
        out.push_back(sampler.draw_from(s.residual));
        return i;
      }
    }
    out.push_back(draft.tokens[i]);
    s.context.push_back(draft.tokens[i]);
    if (processors) processors->accept(draft.tokens[i]);
  }
  return n_draft;  // not reached: the bonus row (i == n_draft) always returns
}

}  // namespace

int verify_draft(Sampler& sampler, const float* logits, const Draft& draft, VerifyScratch& s,
                 LogitsProcessors* processors, std::vector<int32_t>& out) {
  int n_accepted = verify_rows(sampler, logits, draft, s, processors, out);
  if (processors) processors->rollback(n_accepted);
  return n_accepted;
}

}  // namespace skiff

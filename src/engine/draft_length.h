// How many tokens each speculating sequence drafts in a step. Two rules
// (measured in docs/benchmarks.md, "Adaptive k"):
// - per sequence, k follows its recent acceptance, as transformers' assisted
//   generation does: +2 after a step that accepted every draft, -1 (down to 1)
//   after one that rejected some, never above the request's k;
// - per step, drafts fill the step up to max(kSpecStepTokens, k + 1) tokens
//   in all. A forward pass of up to ~8 tokens reads each weight once and costs about one decode step; past that
//   every row costs compute, so a batch of 8 or more decodes drafts nothing
//   and speculation never makes a large batch slower.
#pragma once
#include <span>
#include <vector>

namespace skiff {

constexpr int kSpecStepTokens = 8;

// The next draft length after a step that drafted `drafted` tokens of
// `length` allowed and accepted `accepted` of them.
int adapt_draft_length(int length, int drafted, int accepted, int k_max);

// Draft tokens a step may add to its `step_tokens` scheduled ones, when
// requests draft at most k_max each and a step holds at most max(limit,
// k_max + 1) tokens (limit 0: no limit).
int step_draft_budget(int step_tokens, int k_max, int limit);

// Each sequence's draft length for this step: a token at a time round the
// sequences (equal shares, the remainder to the first), none beyond what
// each wants, `budget` in all.
std::vector<int> share_draft_budget(std::span<const int> wanted, int budget);

}  // namespace skiff

#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace skiff {
namespace {

// Top-p narrows the nucleus edge by quickselect down to a range this small, then sorts it.
constexpr ptrdiff_t kNucleusSortBelow = 64;
constexpr float kMaskedLogit = -std::numeric_limits<float>::infinity();

// A uniform double in [0, 1) from the top 53 bits of one output: fixed by the
// standard, unlike std::uniform_real_distribution.
double uniform_unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

uint64_t random_seed() {
  std::random_device device;
  uint64_t high = device();
  return (high << 32) | device();
}

template <typename Candidate>
bool ranks_higher(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

template <typename Candidate>
bool lower_id(const Candidate& a, const Candidate& b) {
  return a.id < b.id;
}

// The middle-ranked of three distinct candidates.
template <typename Candidate>
Candidate median_of_three(Candidate a, Candidate b, Candidate c) {
  if (ranks_higher(b, a)) std::swap(a, b);
  if (ranks_higher(c, b)) std::swap(b, c);
  if (ranks_higher(b, a)) std::swap(a, b);
  return b;
}

template <typename Candidates>
double sum_weights(const Candidates& candidates) {
  double total = 0;
  for (const auto& c : candidates) total += c.weight;
  return total;
}

}  // namespace

Sampler::Sampler(const SamplingParams& params, int32_t vocab_size, std::span<const int32_t> end_tokens)
    : params_(params),
      vocab_size_(vocab_size),
      seed_(params.seed ? *params.seed : random_seed()),
      rng_(seed_) {
  params_.validate();
  if (vocab_size <= 0) fail("sampler: vocabulary size must be positive, got {}", vocab_size);
  if (params_.min_tokens == 0) return;
  if (!params_.ignore_eos) ends_.assign(end_tokens.begin(), end_tokens.end());
  ends_.insert(ends_.end(), params_.stop_token_ids.begin(), params_.stop_token_ids.end());
  check_tokens(ends_);
  std::sort(ends_.begin(), ends_.end());
  ends_.erase(std::unique(ends_.begin(), ends_.end()), ends_.end());
}

void Sampler::allocate_scratch() {
  if (!candidates_.empty()) return;
  penalized_.resize(vocab_size_);
  output_counts_.resize(vocab_size_);
  seen_.resize(vocab_size_);
  candidates_.resize(vocab_size_);
}

void Sampler::release_scratch() {
  std::vector<float>().swap(penalized_);
  std::vector<int32_t>().swap(output_counts_);
  std::vector<uint8_t>().swap(seen_);
  std::vector<Candidate>().swap(candidates_);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> prompt_tokens,
                        std::span<const int32_t> output_tokens) {
  std::span<const float> scores = penalized_logits(logits, prompt_tokens, output_tokens);
  if (params_.is_greedy()) return argmax(scores);
  return draw(filter(scores));
}

void Sampler::probabilities(std::span<const float> logits, std::span<const int32_t> prompt_tokens,
                            std::span<const int32_t> output_tokens, std::span<float> probs) {
  if (probs.size() != static_cast<size_t>(vocab_size_))
    fail("sampler: probability buffer has {} entries for a vocabulary of {}", probs.size(),
         vocab_size_);
  std::span<const float> scores = penalized_logits(logits, prompt_tokens, output_tokens);
  std::fill(probs.begin(), probs.end(), 0.0f);
  if (params_.is_greedy()) {
    probs[argmax(scores)] = 1.0f;
    return;
  }
  std::span<const Candidate> kept = filter(scores);
  double total = sum_weights(kept);
  for (const Candidate& c : kept) probs[c.id] = static_cast<float>(c.weight / total);
}

double Sampler::uniform() { return uniform_unit(rng_); }

int32_t Sampler::draw_from(std::span<const float> weights) {
  if (weights.size() != static_cast<size_t>(vocab_size_))
    fail("sampler: {} weights for a vocabulary of {}", weights.size(), vocab_size_);
  double total = 0;
  for (float w : weights) total += w;
  if (!(total > 0)) fail("sampler: no token has any weight to draw");
  const double target = uniform_unit(rng_) * total;
  double cumulative = 0;
  int32_t last = -1;
  for (int32_t id = 0; id < vocab_size_; ++id) {
    if (weights[id] <= 0) continue;
    cumulative += weights[id];
    last = id;
    if (target < cumulative) return id;
  }
  return last;  // rounding put the target at the total
}

std::span<const float> Sampler::penalized_logits(std::span<const float> logits,
                                                 std::span<const int32_t> prompt_tokens,
                                                 std::span<const int32_t> output_tokens) {
  if (logits.size() != static_cast<size_t>(vocab_size_))
    fail("sampler: got {} logits for a vocabulary of {}", logits.size(), vocab_size_);
  // min_tokens holds the ends back only while something else may come: where
  // a constraint allows nothing but an end (a complete grammar), it ends there.
  const bool mask_ends = masks_ends(output_tokens) && !only_ends_possible(logits);
  if (!has_penalties() && !mask_ends) return logits;
  allocate_scratch();
  // Checked before any change, so a bad id cannot leave the scratch dirty.
  check_tokens(output_tokens);
  if (params_.repetition_penalty != 1.0f) check_tokens(prompt_tokens);

  std::copy(logits.begin(), logits.end(), penalized_.begin());
  if (params_.repetition_penalty != 1.0f) apply_repetition_penalty(prompt_tokens, output_tokens);
  apply_frequency_presence_penalties(output_tokens);
  if (mask_ends)
    for (int32_t id : ends_) penalized_[id] = -std::numeric_limits<float>::infinity();
  return penalized_;
}

bool Sampler::has_penalties() const {
  return params_.repetition_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
         params_.presence_penalty != 0.0f;
}

bool Sampler::only_ends_possible(std::span<const float> logits) const {
  // Stops at the first possible token that is no end: at once for a row no constraint masked.
  for (size_t id = 0; id < logits.size(); ++id)
    if (logits[id] != -std::numeric_limits<float>::infinity() &&
        !std::binary_search(ends_.begin(), ends_.end(), static_cast<int32_t>(id)))
      return false;
  return true;
}

bool Sampler::masks_ends(std::span<const int32_t> output_tokens) const {
  return !ends_.empty() && output_tokens.size() < static_cast<size_t>(params_.min_tokens);
}

void Sampler::check_tokens(std::span<const int32_t> tokens) const {
  for (int32_t token : tokens)
    if (token < 0 || token >= vocab_size_)
      fail("sampler: token id {} outside the vocabulary of {}", token, vocab_size_);
}

void Sampler::apply_repetition_penalty(std::span<const int32_t> prompt_tokens,
                                       std::span<const int32_t> output_tokens) {
  const float penalty = params_.repetition_penalty;
  // seen_ penalizes each distinct token once, however often it occurs.
  auto penalize_once = [&](int32_t token) {
    if (seen_[token]) return;
    seen_[token] = 1;
    float& logit = penalized_[token];
    logit = logit > 0 ? logit / penalty : logit * penalty;
  };
  for (int32_t token : prompt_tokens) penalize_once(token);
  for (int32_t token : output_tokens) penalize_once(token);
  for (int32_t token : prompt_tokens) seen_[token] = 0;
  for (int32_t token : output_tokens) seen_[token] = 0;
}

void Sampler::apply_frequency_presence_penalties(std::span<const int32_t> output_tokens) {
  for (int32_t token : output_tokens) ++output_counts_[token];
  // A token is penalized at its first occurrence, which also zeroes its count
  // for the next call.
  for (int32_t token : output_tokens) {
    int32_t count = output_counts_[token];
    if (count == 0) continue;
    penalized_[token] -= params_.frequency_penalty * static_cast<float>(count);
    penalized_[token] -= params_.presence_penalty;
    output_counts_[token] = 0;
  }
}

int32_t Sampler::argmax(std::span<const float> scores) const {
  // The first of equal maxima (the lowest id); NaN compares false, so it is never chosen.
  int32_t best = -1;
  float best_score = kMaskedLogit;
  for (int32_t id = 0; id < vocab_size_; ++id)
    if (scores[id] > best_score) best_score = scores[best = id];
  if (best < 0) fail("sampler: no logit is finite or +inf (all NaN or -inf): no token can be chosen");
  return best;
}

std::span<Sampler::Candidate> Sampler::filter(std::span<const float> scores) {
  const float max_score = scores[argmax(scores)];
  allocate_scratch();
  // NaN ranks as masked, so the orderings below stay strict weak orders.
  for (int32_t id = 0; id < vocab_size_; ++id)
    candidates_[id] = {std::isnan(scores[id]) ? kMaskedLogit : scores[id], 0.0f, id};
  std::span<Candidate> candidates(candidates_);

  if (params_.top_k > 0 && params_.top_k < vocab_size_) {
    auto kth = candidates.begin() + params_.top_k;
    std::nth_element(candidates.begin(), kth, candidates.end(), ranks_higher<Candidate>);
    candidates = candidates.first(params_.top_k);
  }
  const float inverse_temperature = 1.0f / params_.temperature;
  // The best scores weigh exactly 1, also when they are +inf (inf - inf would
  // be NaN): +inf logits share the draw and everything finite gets weight 0.
  for (Candidate& c : candidates)
    c.weight = c.logit == max_score ? 1.0f : std::exp((c.logit - max_score) * inverse_temperature);

  if (params_.top_p < 1.0f) candidates = keep_nucleus(candidates, sum_weights(candidates));
  if (params_.min_p > 0.0f) candidates = drop_below_min_p(candidates);
  return candidates;
}

// Moves the nucleus, unordered, to the front: the highest-ranked candidates
// up to the first whose cumulative weight reaches top_p of the total. A
// quickselect on weight, O(n) expected: nucleus sizes run into the tens of
// thousands on flat distributions, too many to sort.
std::span<Sampler::Candidate> Sampler::keep_nucleus(std::span<Candidate> candidates,
                                                    double total_weight) const {
  const double threshold = params_.top_p * total_weight;
  // All of [begin, low) is in the nucleus, holding weight_above < threshold;
  // the edge lies in [low, high).
  auto low = candidates.begin(), high = candidates.end();
  double weight_above = 0;
  while (high - low >= kNucleusSortBelow) {
    const Candidate pivot = median_of_three(*low, low[(high - low) / 2], high[-1]);
    // The upper part holds the pivot but not the lowest of the three: both parts
    // are non-empty, so the range shrinks.
    auto upper_end = std::partition(low, high, [&](const Candidate& c) { return !ranks_higher(pivot, c); });
    const double upper_weight = sum_weights(std::span(low, upper_end));
    if (weight_above + upper_weight >= threshold) {
      high = upper_end;
    } else {
      weight_above += upper_weight;
      low = upper_end;
    }
  }
  std::sort(low, high, ranks_higher<Candidate>);
  for (auto it = low; it != high; ++it) {
    weight_above += it->weight;
    if (weight_above >= threshold) return candidates.first(it + 1 - candidates.begin());
  }
  // Summed in another order, the weights fell short by a rounding: keep the range.
  return candidates.first(high - candidates.begin());
}

std::span<Sampler::Candidate> Sampler::drop_below_min_p(std::span<Candidate> candidates) const {
  // The most likely token survives top-k and top-p with weight exactly 1, so
  // min_p × its probability is min_p in weights.
  auto kept_end = std::remove_if(candidates.begin(), candidates.end(),
                                 [&](const Candidate& c) { return c.weight < params_.min_p; });
  return candidates.first(kept_end - candidates.begin());
}

int32_t Sampler::draw(std::span<Candidate> kept) {
  // Scanned in id order, which unlike the order the filters leave is the same
  // in every standard library, so a seed picks the same token everywhere.
  if (!std::is_sorted(kept.begin(), kept.end(), lower_id<Candidate>))
    std::sort(kept.begin(), kept.end(), lower_id<Candidate>);
  const double target = uniform_unit(rng_) * sum_weights(kept);
  double cumulative = 0;
  for (const Candidate& c : kept) {
    cumulative += c.weight;
    if (target < cumulative) return c.id;
  }
  // Rounding put the target at the total: the last token with any weight.
  auto last = std::find_if(kept.rbegin(), kept.rend(), [](const Candidate& c) { return c.weight > 0; });
  return last->id;
}

}  // namespace skiff

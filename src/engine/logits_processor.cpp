#include "engine/logits_processor.h"

#include <algorithm>
#include <limits>

#include "base/error.h"
#include "tokenizer/tokenizer.h"

namespace skiff {
namespace {

constexpr float kBanned = -std::numeric_limits<float>::infinity();

void check_token(int32_t token, size_t vocab, const char* field) {
  if (token < 0 || static_cast<size_t>(token) >= vocab)
    fail("sampling: {} names token {}, outside the vocabulary of {}", field, token, vocab);
}

class LogitBias : public LogitsProcessor {
 public:
  explicit LogitBias(std::vector<std::pair<int32_t, float>> bias) : bias_(std::move(bias)) {}
  void apply(std::span<float> logits, std::span<const int32_t>) override {
    for (auto [token, bias] : bias_) {
      check_token(token, logits.size(), "logit_bias");
      logits[token] += bias;
    }
  }

 private:
  std::vector<std::pair<int32_t, float>> bias_;
};

class AllowedTokens : public LogitsProcessor {
 public:
  explicit AllowedTokens(std::vector<int32_t> allowed) : allowed_(std::move(allowed)) {}
  void apply(std::span<float> logits, std::span<const int32_t>) override {
    kept_.resize(allowed_.size());
    for (size_t i = 0; i < allowed_.size(); ++i) {
      check_token(allowed_[i], logits.size(), "allowed_token_ids");
      kept_[i] = logits[allowed_[i]];
    }
    std::fill(logits.begin(), logits.end(), kBanned);
    for (size_t i = 0; i < allowed_.size(); ++i) logits[allowed_[i]] = kept_[i];
  }

 private:
  std::vector<int32_t> allowed_;
  std::vector<float> kept_;
};

// vLLM's bad_words: each word, with and without a leading space, as token
// sequences; the last token of a sequence is banned where the output ends
// with the rest of it.
class BadWords : public LogitsProcessor {
 public:
  BadWords(const std::vector<std::string>& words, const Tokenizer& tokenizer) {
    for (const std::string& word : words)
      for (const std::string& spelled : {word, " " + word}) {
        std::vector<int32_t> ids = tokenizer.encode(spelled, /*add_special=*/false, /*parse_special=*/false);
        if (!ids.empty() && std::find(sequences_.begin(), sequences_.end(), ids) == sequences_.end())
          sequences_.push_back(std::move(ids));
      }
  }
  void apply(std::span<float> logits, std::span<const int32_t> output) override {
    for (const std::vector<int32_t>& seq : sequences_) {
      size_t prefix = seq.size() - 1;
      if (prefix > output.size()) continue;
      if (std::equal(seq.begin(), seq.end() - 1, output.end() - static_cast<std::ptrdiff_t>(prefix)) &&
          static_cast<size_t>(seq.back()) < logits.size())
        logits[seq.back()] = kBanned;
    }
  }

 private:
  std::vector<std::vector<int32_t>> sequences_;
};

}  // namespace

GrammarProcessor::GrammarProcessor(std::shared_ptr<const grammar::CompiledGrammar> grammar, std::string after,
                                   std::string trigger)
    : after_(std::move(after)), trigger_(std::move(trigger)), matcher_(std::move(grammar)),
      phase_(!after_.empty() ? Phase::kBeforeAfter : !trigger_.empty() ? Phase::kBeforeTrigger : Phase::kConstrained) {}

void GrammarProcessor::apply(std::span<float> logits, std::span<const int32_t>) {
  // After an end token nothing is output: such a row is a verified draft's
  // past its end of generation (the engine stops at the end token), never sampled.
  if (phase_ != Phase::kConstrained || matcher_.is_terminated()) return;
  bits_.resize((logits.size() + 31) / 32);
  matcher_.fill_mask(bits_);
  bool any = false;
  for (size_t w = 0; w < bits_.size(); ++w) {
    const uint32_t word = bits_[w];
    if (word == ~0u) continue;
    const size_t begin = w * 32, end = std::min(logits.size(), begin + 32);
    if (word == 0) {  // most words, under a narrow grammar
      std::fill(logits.begin() + begin, logits.begin() + end, kBanned);
      continue;
    }
    any = true;
    for (size_t i = begin; i < end; ++i)
      if (!(word >> (i - begin) & 1)) logits[i] = kBanned;
  }
  for (size_t w = 0; w < bits_.size() && !any; ++w) any = bits_[w] != 0;
  if (!any) fail("structured output: the grammar allows no token here (the text so far cannot be completed)");
}

bool GrammarProcessor::advance_phase() {
  while (phase_ != Phase::kConstrained) {
    const std::string& marker = phase_ == Phase::kBeforeAfter ? after_ : trigger_;
    size_t at = text_.find(marker, phase_start_);
    if (at == std::string::npos) return true;
    if (phase_ == Phase::kBeforeAfter) {
      phase_start_ = at + marker.size();
      phase_ = trigger_.empty() ? Phase::kConstrained : Phase::kBeforeTrigger;
      if (phase_ == Phase::kConstrained) return matcher_.accept_bytes(std::string_view(text_).substr(phase_start_));
    } else {
      // The trigger is the grammar's own beginning: it and what follows are fed.
      phase_ = Phase::kConstrained;
      return matcher_.accept_bytes(std::string_view(text_).substr(at));
    }
  }
  return true;
}

bool GrammarProcessor::try_accept(int32_t token) {
  Mark mark{phase_, text_.size(), matcher_.n_tokens()};
  if (phase_ == Phase::kConstrained) {
    if (!matcher_.accept_token(token)) return false;
  } else {
    const std::vector<int32_t>& ends = matcher_.vocab()->end_tokens();
    if (std::find(ends.begin(), ends.end(), token) == ends.end()) {
      text_ += matcher_.vocab()->bytes_of(token);
      bool advanced = false;
      try {
        advanced = advance_phase();
      } catch (...) {  // a grammar past its limits: as before the token, then the error
        rollback_to(mark);
        throw;
      }
      if (!advanced) {
        rollback_to(mark);
        return false;
      }
    }
  }
  marks_.push_back(mark);
  return true;
}

void GrammarProcessor::accept(int32_t token) {
  if (!try_accept(token)) fail("structured output: the grammar refuses token {}", token);
}

void GrammarProcessor::rollback(int n_tokens) {
  if (n_tokens <= 0) return;
  if (n_tokens > static_cast<int>(marks_.size())) fail("structured output: cannot roll back {} tokens", n_tokens);
  Mark mark = marks_[marks_.size() - n_tokens];
  marks_.resize(marks_.size() - n_tokens);
  rollback_to(mark);
}

void GrammarProcessor::rollback_to(const Mark& mark) {
  if (mark.phase != Phase::kConstrained && phase_ == Phase::kConstrained) {
    matcher_.reset();  // back before the grammar started
  } else if (phase_ == Phase::kConstrained) {
    matcher_.rollback(matcher_.n_tokens() - mark.matcher_tokens);
  }
  if (mark.phase != phase_ && mark.phase == Phase::kBeforeAfter) phase_start_ = 0;
  phase_ = mark.phase;
  text_.resize(mark.text_size);
}

std::vector<int32_t> GrammarProcessor::forced_tokens() {
  if (phase_ != Phase::kConstrained) return {};
  std::string forced = matcher_.forced_bytes();
  std::vector<int32_t> tokens;
  const grammar::TokenTrie& trie = *matcher_.vocab();
  for (size_t at = 0; at < forced.size();) {
    int32_t best = -1;
    size_t best_len = 0;
    // Longest token spelling a prefix of the rest: follow the trie's nodes.
    int32_t node = 0;
    for (size_t len = 1; at + len <= forced.size(); ++len) {
      int32_t child = trie.child(node, static_cast<uint8_t>(forced[at + len - 1]));
      if (child < 0) break;
      node = child;
      if (!trie.tokens_at(node).empty()) best = trie.tokens_at(node)[0], best_len = len;
    }
    if (best < 0) break;
    tokens.push_back(best);
    at += best_len;
  }
  if (!tokens.empty()) tokens.pop_back();
  return tokens;
}

LogitsProcessors::LogitsProcessors(const SamplingParams& params, const Tokenizer& tokenizer,
                                   std::shared_ptr<const grammar::CompiledGrammar> grammar) {
  if (!params.logit_bias.empty()) processors_.push_back(std::make_unique<LogitBias>(params.logit_bias));
  if (!params.allowed_token_ids.empty())
    processors_.push_back(std::make_unique<AllowedTokens>(params.allowed_token_ids));
  if (!params.bad_words.empty()) processors_.push_back(std::make_unique<BadWords>(params.bad_words, tokenizer));
  if (grammar) {
    const StructuredOutputs& so = params.structured_outputs;
    auto g = std::make_unique<GrammarProcessor>(std::move(grammar), so.after, so.calls ? so.calls->trigger : "");
    grammar_ = g.get();
    processors_.push_back(std::move(g));
  }
}

void LogitsProcessors::apply(std::span<float> logits, std::span<const int32_t> output) {
  for (auto& p : processors_) p->apply(logits, output);
}

void LogitsProcessors::accept(int32_t token) {
  for (auto& p : processors_) p->accept(token);
}

void LogitsProcessors::rollback(int n_tokens) {
  for (auto& p : processors_) p->rollback(n_tokens);
}

}  // namespace skiff

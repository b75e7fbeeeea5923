// The one seam for constraints on sampling: a completion's logits
// processors change each position's logits before the sampler's penalties,
// temperature and filters (a banned token gets -inf). Stateful ones (a
// grammar) follow the output: accept() as each token is output, rollback()
// when the engine takes tokens back. Speculative verification applies them row
// by row, accepting each draft token before the next row, then rolls back,
// so each drafted position is judged under the state after the tokens before it.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/sampling_params.h"
#include "grammar/compiled_grammar.h"
#include "grammar/matcher.h"

namespace skiff {

class Tokenizer;

class LogitsProcessor {
 public:
  virtual ~LogitsProcessor() = default;
  // One position's logits, after the output tokens `output`.
  virtual void apply(std::span<float> logits, std::span<const int32_t> output) = 0;
  virtual void accept(int32_t /*token*/) {}
  virtual void rollback(int /*n_tokens*/) {}
};

// A structured-output constraint: the grammar's token mask. It may start
// late: after the text `after` (the end of a model's reasoning), and then at
// the text `trigger` (what opens tool calls in a free reply), which the
// grammar's text begins with. Until it starts, every token is allowed.
class GrammarProcessor : public LogitsProcessor {
 public:
  GrammarProcessor(std::shared_ptr<const grammar::CompiledGrammar> grammar, std::string after, std::string trigger);
  void apply(std::span<float> logits, std::span<const int32_t> output) override;
  void accept(int32_t token) override;  // throws Error if the grammar refuses it
  // False, changing nothing, where the grammar refuses the token.
  bool try_accept(int32_t token);
  void rollback(int n_tokens) override;
  // Tokens the grammar forces next, for jump-forward: the forced bytes split
  // longest-token-first, less the last token (the model picks the boundary
  // token itself, which may run past the forced bytes). None before it starts.
  std::vector<int32_t> forced_tokens();
  bool started() const { return phase_ == Phase::kConstrained; }

 private:
  enum class Phase { kBeforeAfter, kBeforeTrigger, kConstrained };
  struct Mark {  // the state before a token, for rollback
    Phase phase;
    size_t text_size;
    int matcher_tokens;
  };
  // The phase after `text_` grew; feeds the grammar what follows a start.
  bool advance_phase();
  void rollback_to(const Mark& mark);

  std::string after_, trigger_;
  grammar::Matcher matcher_;
  Phase phase_;
  std::string text_;         // the output's bytes while not constrained
  size_t phase_start_ = 0;  // where in text_ the current phase began
  std::vector<Mark> marks_;
  std::vector<uint32_t> bits_;
};

// A completion's processors, in the order SamplingParams lists them.
class LogitsProcessors {
 public:
  // The request's processors; structured outputs come compiled (null: none).
  LogitsProcessors(const SamplingParams& params, const Tokenizer& tokenizer,
                   std::shared_ptr<const grammar::CompiledGrammar> grammar);
  bool empty() const { return processors_.empty(); }
  void apply(std::span<float> logits, std::span<const int32_t> output);
  void accept(int32_t token);
  void rollback(int n_tokens);
  GrammarProcessor* grammar() const { return grammar_; }

 private:
  std::vector<std::unique_ptr<LogitsProcessor>> processors_;
  GrammarProcessor* grammar_ = nullptr;
};

}  // namespace skiff

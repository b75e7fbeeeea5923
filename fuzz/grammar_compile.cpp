// Grammar compilation (src/grammar), as a request's constraint reaches it:
// byte 0 picks the front end (low two bits: JSON Schema, regex, GBNF or,
// with bit 3, Lark, a '\n'-separated list of choices) and its options, the
// rest is its text. A skiff::Error is the answer to bad input. What
// compiles is then walked a few tokens over a small vocabulary, each step's
// mask checked against accept_token (grammar_fuzz.h), the tokens taken
// chosen by the input's hash.
#include <string>
#include <vector>

#include "base/json.h"
#include "fuzz_support.h"
#include "grammar/compile.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/lark.h"
#include "grammar_fuzz.h"

namespace {

using namespace skiff;
using namespace skiff::grammar;

// The grammar's limits at a sixteenth of the defaults: a grammar at the
// default limits takes up to ~1 s to compile, 30 s under ASan, and the limits
// are the same code at any size (their times at the defaults are measured by
// hand, not here).
constexpr Limits kLimits{.max_nfa_states = 1u << 16, .max_rules = 1u << 14, .max_symbols = 1u << 17};

std::shared_ptr<const Grammar> compile(uint8_t pick, std::string_view text) {
  switch (pick & 3) {
    case 0: {
      JsonGrammarOptions options;
      if (pick & 4) options.max_whitespace = pick & 8 ? JsonGrammarOptions::kAnyWhitespace : 0;
      return compile_json_schema(parse_ordered_json(text), kLimits, options);
    }
    case 1: return compile_regex(text, kLimits);
    case 2:
      if (pick & 8) return compile_lark(text, kLimits);
      return compile_gbnf(text, kLimits, GbnfOptions{.collapse_regular = !(pick & 4)});
    default: {
      std::vector<std::string> choices;
      for (std::string_view rest = text;;) {
        auto [choice, after] = fuzz::split_at(rest, "\n");
        choices.emplace_back(choice);
        if (after.data() == nullptr || choice.size() == rest.size()) break;
        rest = after;
      }
      return compile_choice(choices, kLimits);
    }
  }
}

// A few steps of generation: every mask checked (against accept_token at the
// first steps and the last, in grammars of up to 1,024 symbols: that costs a
// token's walk per token, and a parser row of a large grammar up to ~1 ms,
// 50 ms under ASan), then one allowed token taken. Large grammars take two.
void walk(const std::shared_ptr<const Grammar>& grammar, uint64_t seed, bool must_stay_alive) {
  Matcher m(grammar, fuzz::small_vocab());
  const bool small = grammar->symbols().size() <= 1024;
  const int kSteps = small ? 8 : 2;
  for (int step = 0; step < kSteps; ++step) {
    const std::string forced = m.forced_bytes(64);
    std::vector<uint32_t> bits = fuzz::mask_of(m);
    fuzz::check_mask_shape(m, bits, forced);
    if (small && (step < 3 || step == kSteps - 1)) fuzz::check_mask_against(bits, m);
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < fuzz::n_vocab(); ++t)
      if (fuzz::has_bit(bits, t)) allowed.push_back(t);
    // A grammar without intersected lexemes never reaches a text it cannot finish.
    if (allowed.empty()) {
      if (must_stay_alive) fuzz::finding("a dead end: nothing allowed and the text is not complete");
      return;
    }
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    int32_t token = allowed[(seed >> 33) % allowed.size()];
    if (fuzz::is_end(token) && allowed.size() > 2) token = allowed[2 + (seed >> 40) % (allowed.size() - 2)];
    if (!m.accept_token(token)) fuzz::finding("an allowed token was refused", token);
    if (m.is_terminated()) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::shared_ptr<const Grammar> grammar;
  fuzz::refusing_errors([&] { grammar = compile(data[0], text); });
  if (!grammar) return 0;
  uint64_t seed = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) seed = (seed ^ data[i]) * 1099511628211ull;
  // A lexer automaton past its state cap throws from inside a mask: an Error too.
  fuzz::refusing_errors([&] { walk(grammar, seed, (data[0] & 3) != 0); });
  return 0;
}

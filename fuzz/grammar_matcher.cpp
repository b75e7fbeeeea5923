// The grammar Matcher (src/grammar/matcher.h) driven by a script: byte 0
// picks one of a few fixed grammars (compiled once: a JSON Schema with
// strings, arrays, numbers, enums and recursive references; a regex; GBNF
// for JSON and arithmetic; choices; tool calls), each following byte one
// operation, some with operands: accept a token, accept the k-th token the
// mask allows, accept raw bytes, roll back n tokens (then maybe take them
// again), fill the mask and check it, reset, forced bytes, is_complete.
// A second matcher, fed the same history, is the judge of every mask: its
// accept_token must agree with each bit (a Matcher cannot be copied). The
// first matcher shares one CompiledGrammar per grammar across inputs, as the
// engine's cache does; the judge has a compiled grammar of its own.
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "base/json.h"
#include "fuzz_support.h"
#include "grammar/call_grammar.h"
#include "grammar/compile.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar_fuzz.h"

namespace {

using namespace skiff;
using namespace skiff::grammar;

constexpr const char* kSchema = R"g({
  "$defs": {"node": {"type": "object", "properties": {
      "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 6},
      "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
    "required": ["name"], "additionalProperties": false}},
  "type": "object",
  "properties": {
    "id": {"type": "integer", "minimum": -5, "exclusiveMaximum": 1000},
    "score": {"type": "number", "minimum": 0.5, "maximum": 99.25},
    "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 4}, "minItems": 1, "maxItems": 3},
    "kind": {"enum": ["a", "ab", "b\"c", 1, null, true, {"k": [1, 2]}]},
    "when": {"type": "string", "format": "date-time"},
    "tree": {"$ref": "#/$defs/node"},
    "pair": {"prefixItems": [{"type": "boolean"}, {"type": "string", "format": "email"}], "items": false},
    "any": {},
    "either": {"anyOf": [{"type": "integer", "maximum": 3}, {"type": "string", "enum": ["x", "yy"]}]}
  },
  "required": ["id", "tags"],
  "additionalProperties": {"type": "number"}
})g";

constexpr const char* kRegex = R"g((\d{1,3}\.){3}\d{1,3}|[a-z]+@[a-z]+\.(com|org)|"([^"\\]|\\.)*"|(ab|a)*c?|\u00e9+€)g";

constexpr const char* kJsonGbnf = R"g(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws
array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws
string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)g";

constexpr const char* kArithmeticGbnf = R"g(root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
)g";

constexpr int kGrammars = 6;

std::shared_ptr<const Grammar> compile(int pick) {
  switch (pick) {
    case 0: return compile_json_schema(parse_ordered_json(kSchema));
    case 1: return compile_regex(kRegex);
    case 2: return compile_gbnf(kJsonGbnf);
    case 3: return compile_gbnf(kArithmeticGbnf);
    case 4: return compile_choice({"a", "ab", "abc", "b\"c", "\xc3\xa9\xe2\x82\xac", "name"});
    default: {
      CallGrammarSpec spec;
      spec.prefix = "";
      spec.separator = "\n";
      spec.calls.push_back({"<tool_call>{\"name\": \"get\", \"arguments\": ",
                            parse_ordered_json(R"({"type": "object", "properties": {"city": {"type": "string"},
                              "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["city"]})"),
                            "}</tool_call>"});
      spec.calls.push_back({"<function=f{index}>", parse_ordered_json(R"({"type": "array", "items": {"type": "boolean"}})"),
                            "</function>"});
      return compile_calls(spec, {}, JsonGrammarOptions{.max_whitespace = 2});
    }
  }
}

const std::shared_ptr<const CompiledGrammar>& compiled(int pick) {
  static std::shared_ptr<const CompiledGrammar> cache[kGrammars];
  if (!cache[pick]) cache[pick] = std::make_shared<const CompiledGrammar>(compile(pick), fuzz::small_vocab());
  return cache[pick];
}

// What a matcher has been fed: tokens and byte strings, in order.
using Fed = std::variant<int32_t, std::string>;

class Script {
 public:
  Script(int pick, const uint8_t* data, size_t size)
      : data_(data), size_(size), m_(compiled(pick)), judge_(compiled(pick)->grammar(), fuzz::small_vocab()),
        must_stay_alive_(pick >= 1 && pick <= 4) {}

  void run() {
    while (at_ < size_) {
      const uint8_t op = next();
      switch (op % 8) {
        case 0: accept_token(static_cast<int32_t>(next() | next() << 8) % fuzz::n_vocab()); break;
        case 1: case 2: accept_allowed(next()); break;
        case 3: accept_bytes(); break;
        case 4: rollback(next(), op & 8); break;
        case 5: check_mask(); break;
        case 6: forced_bytes(next() % 16 + 1); break;
        default:
          if (op & 8) reset();
          else if (m_.is_complete() != judge_.is_complete()) fuzz::finding("the two matchers disagree on is_complete");
      }
      if (m_.n_tokens() != judge_.n_tokens()) fuzz::finding("the two matchers hold different token counts");
    }
    check_mask();
  }

 private:
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }

  void accept_token(int32_t token) {
    const bool a = m_.accept_token(token), b = judge_.accept_token(token);
    if (a != b) fuzz::finding("the two matchers disagree on a token", token, fuzz::vocab_texts()[token]);
    if (a) fed_.push_back(token);
  }

  void accept_allowed(uint8_t k) {
    std::vector<uint32_t> bits = fuzz::mask_of(m_);
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < fuzz::n_vocab(); ++t)
      if (fuzz::has_bit(bits, t)) allowed.push_back(t);
    // Ends rarely: the script would stop doing anything.
    if (allowed.size() > 2 && fuzz::is_end(allowed[0])) allowed.erase(allowed.begin(), allowed.begin() + 2);
    if (allowed.empty()) return;
    const int32_t token = allowed[k % allowed.size()];
    if (!m_.accept_token(token)) fuzz::finding("an allowed token was refused", token, fuzz::vocab_texts()[token]);
    if (!judge_.accept_token(token)) fuzz::finding("the judge refused an allowed token", token, fuzz::vocab_texts()[token]);
    fed_.push_back(token);
  }

  void accept_bytes() {
    std::string bytes;
    for (size_t n = next() % 8; n > 0 && at_ < size_; --n) bytes += static_cast<char>(next());
    const bool a = m_.accept_bytes(bytes), b = judge_.accept_bytes(bytes);
    if (a != b) fuzz::finding("the two matchers disagree on bytes", -1, bytes);
    if (a && !bytes.empty()) fed_.push_back(bytes);
  }

  // Rolls back n tokens (both matchers; with again, takes them back and
  // checks the mask is the one before).
  void rollback(uint8_t n_byte, bool again) {
    if (m_.n_tokens() == 0) return;
    const int n = n_byte % m_.n_tokens() + 1;
    std::vector<uint32_t> before = again ? fuzz::mask_of(m_) : std::vector<uint32_t>{};
    // What goes: everything fed from the n-th last token on.
    size_t cut = fed_.size();
    for (int seen = 0; seen < n;)
      if (std::holds_alternative<int32_t>(fed_[--cut])) ++seen;
    std::vector<Fed> undone(fed_.begin() + static_cast<std::ptrdiff_t>(cut), fed_.end());
    fed_.resize(cut);
    m_.rollback(n);
    judge_.rollback(n);
    if (!again) return;
    for (const Fed& f : undone) {
      bool ok = std::holds_alternative<int32_t>(f) ? m_.accept_token(std::get<int32_t>(f))
                                                   : m_.accept_bytes(std::get<std::string>(f));
      ok = ok && (std::holds_alternative<int32_t>(f) ? judge_.accept_token(std::get<int32_t>(f))
                                                     : judge_.accept_bytes(std::get<std::string>(f)));
      if (!ok) fuzz::finding("text taken before was refused after a rollback");
      fed_.push_back(f);
    }
    if (fuzz::mask_of(m_) != before) fuzz::finding("rolling back and taking the same tokens again changed the mask");
  }

  void check_mask() {
    std::vector<uint32_t> bits = fuzz::mask_of(m_);
    fuzz::check_mask_shape(m_, bits, m_.forced_bytes(64));
    fuzz::check_mask_against(bits, judge_);
    if (must_stay_alive_ && !m_.is_terminated() && std::all_of(bits.begin(), bits.end(), [](uint32_t w) { return w == 0; }))
      fuzz::finding("a dead end: nothing allowed and the text is not complete");
    if (fuzz::mask_of(m_) != bits) fuzz::finding("the mask changed when computed again");
  }

  void forced_bytes(size_t max) {
    const std::string forced = m_.forced_bytes(max);
    if (forced.size() > max) fuzz::finding("more forced bytes than asked for", -1, forced);
    if (forced != judge_.forced_bytes(max)) fuzz::finding("the two matchers force different bytes", -1, forced);
    if (forced.empty()) return;
    // The judge takes them, and is then rebuilt from the history.
    if (!judge_.accept_bytes(forced)) fuzz::finding("the forced bytes are refused", -1, forced);
    judge_.reset();
    for (const Fed& f : fed_) {
      bool ok = std::holds_alternative<int32_t>(f) ? judge_.accept_token(std::get<int32_t>(f))
                                                   : judge_.accept_bytes(std::get<std::string>(f));
      if (!ok) fuzz::finding("the judge refused its history after a reset");
    }
  }

  void reset() {
    m_.reset();
    judge_.reset();
    fed_.clear();
    if (m_.n_tokens() != 0 || m_.is_terminated()) fuzz::finding("reset left tokens");
  }

  const uint8_t* data_;
  size_t size_, at_ = 0;
  Matcher m_, judge_;
  // Grammars without intersected lexemes (not JSON Schema's strings and
  // numbers) never reach a text they cannot finish.
  const bool must_stay_alive_;
  std::vector<Fed> fed_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  Script(data[0] % kGrammars, data + 1, size - 1).run();
  return 0;
}

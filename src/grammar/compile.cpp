#include "grammar/compile.h"

#include "base/error.h"

namespace skiff::grammar {

std::shared_ptr<const Grammar> compile_regex(std::string_view pattern, Limits limits) {
  GrammarBuilder builder(limits);
  Symbol text = builder.regex(regex_fullmatch(pattern), TextEncoding::Utf8, std::string(pattern));
  return builder.build(builder.rule_of("regex", {{text}}));
}

std::shared_ptr<const Grammar> compile_choice(const std::vector<std::string>& choices, Limits limits) {
  if (choices.empty()) fail("choice: the list of choices is empty");
  // One lexeme for all of them, so that a choice that is a prefix of
  // another ("a", "ab") ends only where the text does.
  std::vector<RegexNode> literals;
  std::string key;
  for (const std::string& c : choices) {
    literals.push_back(RegexNode::literal(c));
    key += c + '\x01';
  }
  GrammarBuilder builder(limits);
  Symbol text = builder.regex(RegexNode::alt(std::move(literals)), TextEncoding::Utf8, key);
  return builder.build(builder.rule_of("choice", {{text}}));
}

}  // namespace skiff::grammar

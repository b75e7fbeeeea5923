// Whether a text matches a regex tree as a whole, by simulating its
// automaton: the compilers' own check of a property name against a
// patternProperties pattern.
#pragma once
#include <string_view>

#include "grammar/regex.h"

namespace skiff::grammar {

bool regex_matches(const RegexNode& node, std::string_view text);

}  // namespace skiff::grammar

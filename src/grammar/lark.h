// Lark's grammar syntax, as llguidance and vLLM's guidance backend take it
// (its common subset): rules `name: expansions` (lowercase; the ?, ! and _
// prefixes and `-> alias` are read and change nothing, since they shape Lark's
// tree, not its language), terminals `NAME: ...` (uppercase; a priority .N
// is read and changes nothing), "strings" (with an i flag), /regexes/ (the
// regex.h subset, no flags), "a".."z" ranges, groups, [optional], ? * +,
// `~ n` and `~ n..m`; `%import common.NAME` (with `-> ALIAS`, or
// `common (A, B)`) from Lark's common library, and `%ignore` (what may come
// before each terminal and at the end). `start` is where a text starts.
//
// The grammar compiles as GBNF's does (gbnf.h): terminals are parts of one
// grammar, not a separate lexer's tokens, so a text that Lark's lexer would
// split otherwise (two NAMEs with nothing between) may still be accepted.
#pragma once
#include <memory>
#include <string_view>

#include "grammar/grammar.h"

namespace skiff::grammar {

// Throws skiff::Error naming the line and column of what it cannot compile.
std::shared_ptr<const Grammar> compile_lark(std::string_view text, Limits limits = {});

// For fields that take either (vLLM's `grammar`): GBNF where the text holds
// "::=" (GBNF's rules are defined with it), else Lark.
std::shared_ptr<const Grammar> compile_gbnf_or_lark(std::string_view text, Limits limits = {});

}  // namespace skiff::grammar

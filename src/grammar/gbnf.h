// GBNF, llama.cpp's grammar format (its grammars/README.md): rules
// `name ::= alternatives` over string literals, character classes, `.`,
// groups and repetitions (* + ? {m} {m,} {m,n}); `root` is where a text
// starts. Token references (<...>) are refused.
//
// Every terminal becomes a lexeme of one code point, which greedy lexing can
// never end in the wrong place. A regular part of the grammar (one that
// reaches no recursion) becomes a single lexeme instead where an analysis of
// the bytes that may follow it shows greedy lexing still ends it exactly where
// the grammar needs (gbnf.cpp), so a string or a number costs one parser row,
// not one per character.
#pragma once
#include <memory>
#include <string_view>

#include "grammar/grammar.h"

namespace skiff::grammar {

struct GbnfOptions {
  bool collapse_regular = true;  // false: every terminal one code point (the tests' reference)
};

// Throws skiff::Error naming the line and column of what it cannot compile.
std::shared_ptr<const Grammar> compile_gbnf(std::string_view text, Limits limits = {});
std::shared_ptr<const Grammar> compile_gbnf(std::string_view text, Limits limits, GbnfOptions options);

namespace gbnf {
struct Syntax;
}
// The nodes a grammar's text may parse into under these limits.
size_t syntax_node_limit(const Limits& limits);
// A syntax tree (gbnf_syntax.h: GBNF's, or Lark's from lark.h) compiled as
// compile_gbnf compiles GBNF's; its offsets point into `text`.
std::shared_ptr<const Grammar> compile_syntax(std::string_view text, gbnf::Syntax syntax, Limits limits,
                                              GbnfOptions options = {});

}  // namespace skiff::grammar

// Regex trees into the byte automaton, in one of two encodings: plain UTF-8,
// or as the inside of a JSON string literal, where a character may also be
// written as an escape (\", \\, \n, \u00e9, ...), so a string constraint (a
// JSON Schema pattern or length) holds for the decoded value.
#pragma once
#include "grammar/nfa.h"
#include "grammar/regex.h"

namespace skiff::grammar {

enum class TextEncoding { Utf8, JsonString };

// Adds paths from `from` to `to` spelling exactly the strings `node` matches.
void add_regex(Nfa& nfa, const RegexNode& node, int32_t from, int32_t to, TextEncoding encoding);

// One character of `set` in the encoding.
void add_chars(Nfa& nfa, const CharSet& set, int32_t from, int32_t to, TextEncoding encoding);

}  // namespace skiff::grammar

// Splits a template into tokens as jinja2's lexer does with transformers'
// settings (trim_blocks and lstrip_blocks on, keep_trailing_newline off):
// text between tags with the whitespace the tags' `-`, `+` and the two
// settings remove already removed, then the tokens inside `{{ }}` and `{% %}`.
// Comments leave nothing but their effect on whitespace.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace skiff::jinja {

enum class TokenType {
  kData,           // template text
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,  // text holds the unescaped value
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenType type;
  std::string text;
  int line = 1;
  int column = 1;
};

struct Position {
  int line = 1;
  int column = 1;
};

// Python's str.isspace() for one code point.
bool is_python_space(uint32_t cp);

// Throws Error "line L, column C: ..." on text jinja2's lexer rejects.
std::vector<Token> tokenize(const std::string& source);

}  // namespace skiff::jinja

// Values as Python writes them: str() (what `{{ }}` and `~` print), repr()
// (inside printed lists and dicts), json.dumps (the `tojson` filter as
// transformers defines it) and markupsafe's HTML escaping.
#pragma once
#include <string>
#include <string_view>

#include "chat/jinja_budget.h"
#include "chat/jinja_value.h"

namespace skiff::jinja {

// repr(float): the shortest text that reads back as x ("1.0", "1e-05", "1e+16").
std::string float_repr(double x);

void append_str(std::string& out, const Value& v, Budget& budget);
std::string to_str(const Value& v, Budget& budget);
void append_repr(std::string& out, const Value& v, Budget& budget);

struct JsonStyle {
  std::string indent;  // per level; used when has_indent
  bool has_indent = false;
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps(v, ...): Error (Python's TypeError text) for values JSON cannot hold.
void append_json(std::string& out, const Value& v, const JsonStyle& style, Budget& budget);

// markupsafe.escape: & < > ' " as HTML entities.
std::string html_escape(std::string_view text);

}  // namespace skiff::jinja

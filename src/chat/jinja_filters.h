// jinja2's built-in filters (with transformers' tojson), with jinja2's
// argument names and edge cases: what each does to undefined values, which
// return generators, which keep a Markup string marked.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_interpreter.h"

namespace skiff::jinja {

using FilterFunction = Value (*)(Interpreter&, const Value&, CallArgs&);

// nullptr when skiff has no such filter.
FilterFunction find_filter(const std::string& name);
// jinja2 has the filter (skiff may not: then it fails when run, with its name).
bool is_jinja2_filter(const std::string& name);

// The halves of the table: string and number filters (jinja_filters.cpp),
// filters over sequences (jinja_sequence_filters.cpp).
using FilterTable = std::vector<std::pair<const char*, FilterFunction>>;
FilterTable sequence_filters();

// Shared by both halves.
std::string soft_str(const Value& v, Budget& budget);  // str(), keeping a Markup marked
Value soft_str_value(const Value& v, Budget& budget);
int64_t integer_argument(const std::optional<Value>& v, int64_t fallback, const char* what);
// jinja2's make_attrgetter: "a.b.0" looked up part by part with getitem.
Value lookup_attribute_path(Interpreter& interp, const Value& item, const Value& path);

}  // namespace skiff::jinja

// Python's operators on template values: arithmetic (int overflow is an
// Error, not a wrap), comparison, equality and `in`. Type mismatches fail with
// Python's TypeError text; using an undefined value fails with its message.
#pragma once
#include <string>

#include "chat/jinja_budget.h"
#include "chat/jinja_value.h"

namespace skiff::jinja {

[[noreturn]] void fail_undefined(const Value& v);

bool values_equal(const Value& a, const Value& b, Budget& budget);
// Python's a < b; Error when the types do not order.
bool value_less(const Value& a, const Value& b, Budget& budget);
// op is one of "==", "!=", "<", ">", "<=", ">=", "in", "notin".
bool compare(const std::string& op, const Value& a, const Value& b, Budget& budget);
bool contains(const Value& container, const Value& item, Budget& budget);

// op is one of + - * / // % ** ~
Value binary_op(const std::string& op, const Value& a, const Value& b, Budget& budget);
Value negate(const Value& v);

// a + b for strings, with markupsafe's rule: a Markup side escapes the other.
Value concat_strings(const Value& a, const Value& b, Budget& budget);

}  // namespace skiff::jinja

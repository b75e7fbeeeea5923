// Methods templates call on values: Python's str methods (on code points,
// as Python counts), dict.get/items/keys/values and the list methods the
// immutable sandbox allows (mutating ones are unsafe attributes).
#pragma once
#include <string>

#include "chat/jinja_interpreter.h"

namespace skiff::jinja {

// Whether Python's object has this attribute as a method.
bool has_method(const Value& object, const std::string& name);
// The sandbox's modifies_known_mutable: list.append, dict.pop, ...
bool is_unsafe_method(const Value& object, const std::string& name);
// object.name as a callable (the method bound to object).
Value bound_method(const Value& object, const std::string& name);

Value call_string_method(Interpreter& interp, const Value& self, const std::string& name, CallArgs& args);

}  // namespace skiff::jinja

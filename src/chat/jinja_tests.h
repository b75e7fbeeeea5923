// jinja2's tests (`x is defined`, `x is divisibleby 3`, `x is equalto y`, ...).
#pragma once
#include <string>

#include "chat/jinja_interpreter.h"

namespace skiff::jinja {

using TestFunction = bool (*)(Interpreter&, const Value&, CallArgs&);

TestFunction find_test(const std::string& name);  // nullptr when jinja2 has no such test

}  // namespace skiff::jinja

// The names every template sees: jinja2's range, dict and namespace, and the
// raise_exception and strftime_now transformers adds.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "chat/jinja_interpreter.h"

namespace skiff::jinja {

// A C++ function as a template callable.
class Builtin : public Callable {
 public:
  using Function = std::function<Value(Interpreter&, CallArgs&)>;
  Builtin(std::string name, Function fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  Value call(Interpreter& interp, CallArgs& args) override { return fn_(interp, args); }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  Function fn_;
};

Value make_builtin(std::string name, Builtin::Function fn);

std::shared_ptr<Scope> make_globals();

// loop.cycle(a, b, ...): the argument at the loop's current index, cycling.
Value make_loop_cycle(std::shared_ptr<const size_t> index);

}  // namespace skiff::jinja

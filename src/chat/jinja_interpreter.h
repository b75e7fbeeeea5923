// Runs a parsed template: statements write to the output, expressions
// evaluate with jinja2's semantics in transformers' sandbox (lists and dicts
// immutable, namespaces the one mutable kind). One Interpreter per render.
#pragma once
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "chat/jinja_ast.h"
#include "chat/jinja_budget.h"
#include "chat/jinja_value.h"

namespace skiff::jinja {

// raise_exception(message): passes through to the caller with the message alone.
class RaisedError : public Error {
 public:
  explicit RaisedError(const std::string& message) : Error(message) {}
};

// An Error that already names its template position.
class LocatedError : public Error {
 public:
  explicit LocatedError(const std::string& message) : Error(message) {}
};

// Variables: a scope per loop iteration and macro call, chained to where it
// was opened (macros to where they were defined, read at call time).
struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* find(const std::string& name) const;
  void set(const std::string& name, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // Binds the arguments to parameters as Python does (positional first, then by
  // name); nullopt where a parameter got nothing. Error for extra or unknown ones.
  std::vector<std::optional<Value>> bind(const std::string& function, const std::vector<std::string>& names) const;
};

class Interpreter {
 public:
  Interpreter(const ChatTemplateLimits& limits, const std::tm& now);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders with `variables` visible (over the globals).
  std::string render(const Template& t, std::vector<std::pair<std::string, Value>> variables);

  Budget& budget() { return budget_; }
  const std::tm& now() const { return now_; }

  Value eval(const Expr& e, const std::shared_ptr<Scope>& scope);
  Value call(const Value& callee, CallArgs& args);
  Value getattr(const Value& object, const std::string& name);
  Value getitem(const Value& object, const Value& key);
  Value make_namespace(DictData attrs);
  // The elements a for loop (or a filter) sees: a list's items, a dict's keys, a
  // string's characters; a generator's remaining items (consuming them).
  std::vector<Value> iterate(const Value& v);

  // Runs a macro (or a call block's body, for caller()) with its arguments bound.
  Value call_macro(const Node& macro, const std::shared_ptr<Scope>& closure, CallArgs& args);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow exec_body(const Body& body, const std::shared_ptr<Scope>& scope);
  Flow exec(const Node& node, const std::shared_ptr<Scope>& scope);
  void exec_if(const Node& node, const std::shared_ptr<Scope>& scope, Flow& flow);
  Flow exec_for(const Node& node, const std::shared_ptr<Scope>& scope);
  std::vector<Value> loop_items(const Node& node, const std::shared_ptr<Scope>& scope);
  void exec_set(const Node& node, const std::shared_ptr<Scope>& scope);
  void assign(const Target& target, Value value, Scope& scope);
  void define_macro(const Node& node, const std::shared_ptr<Scope>& scope);
  void exec_call_block(const Node& node, const std::shared_ptr<Scope>& scope);
  std::string render_body(const Body& body, const std::shared_ptr<Scope>& scope);
  Value apply_filter_chain(const std::vector<ExprPtr>& filters, Value value, const std::shared_ptr<Scope>& scope);
  void write(const std::string& text);
  void write_value(const Value& v);

  // Expressions (jinja_expressions.cpp).
  Value eval_inner(const Expr& e, const std::shared_ptr<Scope>& scope);
  Value eval_name(const Expr& e, const Scope& scope);
  Value eval_literal_container(const Expr& e, const std::shared_ptr<Scope>& scope);
  Value eval_slice(const Expr& e, const std::shared_ptr<Scope>& scope);
  Value eval_call(const Expr& e, const std::shared_ptr<Scope>& scope);
  Value eval_filter(const Expr& e, Value subject, const std::shared_ptr<Scope>& scope);
  Value eval_test(const Expr& e, const std::shared_ptr<Scope>& scope);
  Value eval_compare(const Expr& e, const std::shared_ptr<Scope>& scope);
  Value eval_condition(const Expr& e, const std::shared_ptr<Scope>& scope);
  CallArgs eval_args(const Expr& e, size_t first, const std::shared_ptr<Scope>& scope);

  Budget budget_;
  std::tm now_;
  std::string* out_ = nullptr;
  std::shared_ptr<Scope> globals_;
  // Everything that can close a reference cycle (namespaces holding
  // themselves, macros held by the scope they close over), cleared at the end.
  std::vector<std::weak_ptr<NamespaceData>> namespaces_;
  std::vector<std::weak_ptr<Callable>> macros_;
  int macro_depth_ = 0;
};

}  // namespace skiff::jinja

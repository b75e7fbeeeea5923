// Statements: output, if, for (loop variables, else, filter condition,
// break/continue), set (names, unpacking, namespace attributes, blocks),
// macros, call blocks and filter blocks.
#include "chat/jinja_interpreter.h"

#include <fmt/format.h>

#include "chat/jinja_filters.h"
#include "chat/jinja_format.h"
#include "chat/jinja_globals.h"
#include "chat/jinja_operators.h"

namespace skiff::jinja {

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get())
    for (const auto& [key, value] : s->vars)
      if (key == name) return &value;
  return nullptr;
}

void Scope::set(const std::string& name, Value value) {
  for (auto& [key, existing] : vars) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  vars.emplace_back(name, std::move(value));
}

std::vector<std::optional<Value>> CallArgs::bind(const std::string& function,
                                                 const std::vector<std::string>& names) const {
  if (positional.size() > names.size())
    fail("{}() takes at most {} arguments ({} given)", function, names.size(), positional.size());
  std::vector<std::optional<Value>> bound(names.size());
  for (size_t i = 0; i < positional.size(); ++i) bound[i] = positional[i];
  for (const auto& [key, value] : keyword) {
    size_t i = 0;
    while (i < names.size() && names[i] != key) ++i;
    if (i == names.size()) fail("{}() got an unexpected keyword argument '{}'", function, key);
    if (bound[i]) fail("{}() got multiple values for argument '{}'", function, key);
    bound[i] = value;
  }
  return bound;
}

namespace {

// A macro, or the body of a call block (what `caller()` renders).
class Macro : public Callable {
 public:
  Macro(const Node& node, std::shared_ptr<Scope> closure) : node_(node), closure_(std::move(closure)) {}
  Value call(Interpreter& interp, CallArgs& args) override { return interp.call_macro(node_, closure_, args); }
  std::string name() const override { return node_.kind == NodeKind::kMacro ? node_.text : "caller"; }
  void release() { closure_.reset(); }

 private:
  const Node& node_;
  std::shared_ptr<Scope> closure_;
};

}  // namespace

Interpreter::Interpreter(const ChatTemplateLimits& limits, const std::tm& now)
    : budget_(limits), now_(now), globals_(make_globals()) {}

Interpreter::~Interpreter() {
  // Keep every namespace and macro alive while emptying them, so no chain of
  // them is destroyed recursively and no cycle outlives the render.
  std::vector<std::shared_ptr<NamespaceData>> namespaces;
  for (const auto& weak : namespaces_)
    if (auto ns = weak.lock()) namespaces.push_back(std::move(ns));
  std::vector<std::shared_ptr<Callable>> macros;
  for (const auto& weak : macros_)
    if (auto macro = weak.lock()) macros.push_back(std::move(macro));
  std::vector<Value> contents;  // destroyed after every namespace is empty
  for (const auto& ns : namespaces) {
    for (const auto& entry : ns->attrs.items()) contents.push_back(entry.second);
    ns->attrs.clear();
  }
  for (const auto& macro : macros) static_cast<Macro&>(*macro).release();
}

Value Interpreter::make_namespace(DictData attrs) {
  auto ns = std::make_shared<NamespaceData>();
  ns->attrs = std::move(attrs);
  namespaces_.push_back(ns);
  return Value(NamespacePtr(std::move(ns)));
}

std::string Interpreter::render(const Template& t, std::vector<std::pair<std::string, Value>> variables) {
  auto inputs = std::make_shared<Scope>();
  inputs->parent = globals_;
  inputs->vars = std::move(variables);
  auto root = std::make_shared<Scope>();
  root->parent = inputs;
  std::string out;
  out_ = &out;
  exec_body(t.body, root);
  return out;
}

void Interpreter::write(const std::string& text) {
  out_->append(text);
  if (out_->size() > budget_.limits().max_output_bytes)
    fail("chat template: the output exceeds {} bytes", budget_.limits().max_output_bytes);
}

void Interpreter::write_value(const Value& v) {
  if (v.is_string()) {
    write(v.as_string());
  } else {
    std::string text;
    append_str(text, v, budget_);
    write(text);
  }
}

Interpreter::Flow Interpreter::exec_body(const Body& body, const std::shared_ptr<Scope>& scope) {
  for (const NodePtr& node : body) {
    const Flow flow = exec(*node, scope);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const Node& node, const std::shared_ptr<Scope>& scope) {
  Budget::Nested nested(budget_);
  budget_.step();
  Flow flow = Flow::kNormal;
  switch (node.kind) {
    case NodeKind::kData: write(node.text); break;
    case NodeKind::kOutput: write_value(eval(*node.expr, scope)); break;
    case NodeKind::kIf: exec_if(node, scope, flow); break;
    case NodeKind::kFor: return exec_for(node, scope);
    case NodeKind::kSet:
    case NodeKind::kSetBlock: exec_set(node, scope); break;
    case NodeKind::kMacro: define_macro(node, scope); break;
    case NodeKind::kCallBlock: exec_call_block(node, scope); break;
    case NodeKind::kFilterBlock:
      write_value(apply_filter_chain(node.filters, Value(render_body(node.body, scope)), scope));
      break;
    case NodeKind::kBreak: return Flow::kBreak;
    case NodeKind::kContinue: return Flow::kContinue;
    case NodeKind::kScope: return exec_body(node.body, scope);
  }
  return flow;
}

void Interpreter::exec_if(const Node& node, const std::shared_ptr<Scope>& scope, Flow& flow) {
  for (const auto& [condition, body] : node.branches) {
    if (eval(*condition, scope).truthy()) {
      flow = exec_body(body, scope);
      return;
    }
  }
  flow = exec_body(node.else_body, scope);
}

// The items the loop runs over: the iterable's, less those its `if` rejects
// (judged with the target bound, before `loop` exists, as jinja2 does).
std::vector<Value> Interpreter::loop_items(const Node& node, const std::shared_ptr<Scope>& scope) {
  std::vector<Value> items = iterate(eval(*node.expr, scope));
  if (!node.condition) return items;
  std::vector<Value> kept;
  for (Value& item : items) {
    budget_.loop_iteration();
    auto probe = std::make_shared<Scope>();
    probe->parent = scope;
    assign(node.target, item, *probe);
    if (eval(*node.condition, probe).truthy()) kept.push_back(std::move(item));
  }
  return kept;
}

namespace {

DictData loop_variables(const std::vector<Value>& items, size_t i, const Value& cycle) {
  const auto n = static_cast<int64_t>(items.size());
  const auto index = static_cast<int64_t>(i);
  DictData loop;
  loop.set("index0", Value(index));
  loop.set("index", Value(index + 1));
  loop.set("revindex0", Value(n - index - 1));
  loop.set("revindex", Value(n - index));
  loop.set("first", Value(i == 0));
  loop.set("last", Value(index == n - 1));
  loop.set("length", Value(n));
  loop.set("depth0", Value(0));
  loop.set("depth", Value(1));
  loop.set("previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
  loop.set("nextitem", index + 1 < n ? items[i + 1] : Value::undefined("there is no next item"));
  loop.set("cycle", cycle);
  return loop;
}

}  // namespace

Interpreter::Flow Interpreter::exec_for(const Node& node, const std::shared_ptr<Scope>& scope) {
  const std::vector<Value> items = loop_items(node, scope);
  if (items.empty()) return exec_body(node.else_body, scope);
  auto index = std::make_shared<size_t>(0);
  const Value cycle = make_loop_cycle(index);
  for (size_t i = 0; i < items.size(); ++i) {
    budget_.loop_iteration();
    *index = i;
    auto iteration = std::make_shared<Scope>();
    iteration->parent = scope;
    assign(node.target, items[i], *iteration);
    iteration->set("loop", Value::dict(loop_variables(items, i, cycle)));
    if (exec_body(node.body, iteration) == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

void Interpreter::assign(const Target& target, Value value, Scope& scope) {
  if (!target.unpack) {
    scope.set(target.names[0], std::move(value));
    return;
  }
  if (value.is_undefined()) fail_undefined(value);
  if (!value.is_list() && !value.is_string() && !value.is_dict())
    fail("cannot unpack non-iterable {} object", type_name(value));
  const std::vector<Value> parts = iterate(value);
  if (parts.size() < target.names.size())
    fail("not enough values to unpack (expected {}, got {})", target.names.size(), parts.size());
  if (parts.size() > target.names.size())
    fail("too many values to unpack (expected {})", target.names.size());
  for (size_t i = 0; i < parts.size(); ++i) scope.set(target.names[i], parts[i]);
}

void Interpreter::exec_set(const Node& node, const std::shared_ptr<Scope>& scope) {
  Value value = node.kind == NodeKind::kSet
                    ? eval(*node.expr, scope)
                    : apply_filter_chain(node.filters, Value(render_body(node.body, scope)), scope);
  if (node.target.attribute.empty()) {
    assign(node.target, std::move(value), *scope);
    return;
  }
  const Value* ns = scope->find(node.target.names[0]);
  if (!ns || !ns->is_namespace()) fail("cannot assign attribute on non-namespace object");
  if (node.target.attribute[0] == '_')
    fail("Chat templates cannot store underscore-prefixed attributes on a namespace, but got '{}'. "
         "Please rename the attribute.", node.target.attribute);
  ns->as_namespace().attrs.set(node.target.attribute, std::move(value));
}

std::string Interpreter::render_body(const Body& body, const std::shared_ptr<Scope>& scope) {
  auto inner = std::make_shared<Scope>();
  inner->parent = scope;
  std::string text;
  std::string* saved = out_;
  out_ = &text;
  try {
    exec_body(body, inner);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return text;
}

Value Interpreter::apply_filter_chain(const std::vector<ExprPtr>& filters, Value value,
                                      const std::shared_ptr<Scope>& scope) {
  for (const ExprPtr& filter : filters) value = eval_filter(*filter, std::move(value), scope);
  return value;
}

void Interpreter::define_macro(const Node& node, const std::shared_ptr<Scope>& scope) {
  auto macro = std::make_shared<Macro>(node, scope);
  macros_.push_back(macro);
  scope->set(node.text, Value(CallablePtr(std::move(macro))));
}

void Interpreter::exec_call_block(const Node& node, const std::shared_ptr<Scope>& scope) {
  auto caller = std::make_shared<Macro>(node, scope);
  macros_.push_back(caller);
  const Expr& call = *node.expr;
  const Value callee = eval(*call.args[0], scope);
  CallArgs args = eval_args(call, 1, scope);
  args.keyword.emplace_back("caller", Value(CallablePtr(std::move(caller))));
  write_value(this->call(callee, args));
}

Value Interpreter::call_macro(const Node& macro, const std::shared_ptr<Scope>& closure, CallArgs& args) {
  if (!closure) fail("macro '{}' called after its template finished", macro.text);
  if (macro_depth_ >= budget_.limits().max_macro_depth)
    fail("chat template: macro calls nest deeper than {} (endless recursion?)", budget_.limits().max_macro_depth);
  const std::string name = macro.kind == NodeKind::kMacro ? macro.text : "caller";
  auto scope = std::make_shared<Scope>();
  scope->parent = closure;
  const size_t n_params = macro.params.size();
  if (args.positional.size() > n_params && !macro.takes_varargs)
    fail("macro '{}' takes not more than {} argument(s)", name, n_params);
  std::vector<std::optional<Value>> bound(n_params);
  for (size_t i = 0; i < n_params && i < args.positional.size(); ++i) bound[i] = args.positional[i];
  DictData extra_keywords;
  for (auto& [key, value] : args.keyword) {
    size_t i = 0;
    while (i < n_params && macro.params[i] != key) ++i;
    if (i < n_params) {
      bound[i] = value;
    } else if (key == "caller" && macro.takes_caller) {
      scope->set("caller", value);
    } else if (macro.takes_kwargs) {
      extra_keywords.set(key, value);
    } else {
      fail("macro '{}' takes no keyword argument '{}'", name, key);
    }
  }
  for (size_t i = 0; i < n_params; ++i) {
    if (!bound[i]) {
      bound[i] = macro.defaults[i] ? eval(*macro.defaults[i], scope)
                                   : Value::undefined(fmt::format("parameter '{}' was not provided", macro.params[i]));
    }
    scope->set(macro.params[i], std::move(*bound[i]));
  }
  if (macro.takes_varargs) {
    std::vector<Value> rest;
    for (size_t i = n_params; i < args.positional.size(); ++i) rest.push_back(args.positional[i]);
    scope->set("varargs", Value::list(std::move(rest), /*is_tuple=*/true));
  }
  if (macro.takes_kwargs) scope->set("kwargs", Value::dict(std::move(extra_keywords)));
  ++macro_depth_;
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{macro_depth_};
  std::string text;
  std::string* saved = out_;
  out_ = &text;
  try {
    exec_body(macro.body, scope);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return Value(std::move(text));
}

}  // namespace skiff::jinja

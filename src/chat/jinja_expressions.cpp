// Expressions: names, literals, attribute and item access with the sandbox's
// rules (jinja2's SandboxedEnvironment.getattr/getitem), slices, calls,
// filters, tests, comparisons and the boolean operators.
#include <fmt/format.h>

#include "chat/jinja_filters.h"
#include "chat/jinja_format.h"
#include "chat/jinja_interpreter.h"
#include "chat/jinja_methods.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_tests.h"
#include "tokenizer/unicode.h"

namespace skiff::jinja {

namespace {

// jinja2's object_type_repr: "dict object", "None", ...
std::string object_description(const Value& v) {
  if (v.is_none()) return "None";
  return std::string(type_name(v)) + " object";
}

Value missing_attribute(const Value& object, const std::string& name) {
  return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_description(object), name));
}

Value unsafe_attribute(const Value& object, const std::string& name) {
  return Value::undefined(
      fmt::format("access to attribute '{}' of '{}' object is unsafe.", name, type_name(object)));
}

// Python's slice.indices(length) then the selected positions.
std::vector<int64_t> slice_positions(int64_t length, const Value& start_v, const Value& stop_v, const Value& step_v) {
  const int64_t step = step_v.is_none() ? 1 : step_v.as_int();
  if (step == 0) fail("slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t fallback) {
    if (v.is_none()) return fallback;
    int64_t i = v.as_int();
    if (i < 0) i = std::max<int64_t>(i + length, step < 0 ? -1 : 0);
    else i = std::min<int64_t>(i, step < 0 ? length - 1 : length);
    return i;
  };
  const int64_t start = clamp(start_v, step < 0 ? length - 1 : 0);
  const int64_t stop = clamp(stop_v, step < 0 ? -1 : length);
  std::vector<int64_t> positions;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) positions.push_back(i);
  return positions;
}

}  // namespace

Value Interpreter::eval(const Expr& e, const std::shared_ptr<Scope>& scope) {
  Budget::Nested nested(budget_);
  budget_.step();
  try {
    return eval_inner(e, scope);
  } catch (const RaisedError&) {
    throw;
  } catch (const LocatedError&) {
    throw;
  } catch (const Error& error) {
    throw LocatedError(
        fmt::format("chat template error at line {}, column {}: {}", e.pos.line, e.pos.column, error.what()));
  }
}

Value Interpreter::eval_inner(const Expr& e, const std::shared_ptr<Scope>& scope) {
  switch (e.kind) {
    case ExprKind::kLiteral: return e.literal;
    case ExprKind::kName: return eval_name(e, *scope);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kDict: return eval_literal_container(e, scope);
    case ExprKind::kGetattr: return getattr(eval(*e.args[0], scope), e.name);
    case ExprKind::kGetitem: return getitem(eval(*e.args[0], scope), eval(*e.args[1], scope));
    case ExprKind::kSlice: return eval_slice(e, scope);
    case ExprKind::kCall: return eval_call(e, scope);
    case ExprKind::kFilter: return eval_filter(e, eval(*e.args[0], scope), scope);
    case ExprKind::kTest: return eval_test(e, scope);
    case ExprKind::kUnary: {
      const Value v = eval(*e.args[0], scope);
      if (e.name == "not") return Value(!v.truthy());
      if (e.name == "-") return negate(v);
      if (v.is_undefined()) fail_undefined(v);
      if (!v.is_number()) fail("bad operand type for unary +: '{}'", type_name(v));
      return v.is_bool() ? Value(v.as_int()) : v;
    }
    case ExprKind::kBinary: {
      const Value left = eval(*e.args[0], scope);
      return binary_op(e.name, left, eval(*e.args[1], scope), budget_);
    }
    case ExprKind::kCompare: return eval_compare(e, scope);
    case ExprKind::kAnd: {
      Value left = eval(*e.args[0], scope);
      return left.truthy() ? eval(*e.args[1], scope) : left;
    }
    case ExprKind::kOr: {
      Value left = eval(*e.args[0], scope);
      return left.truthy() ? left : eval(*e.args[1], scope);
    }
    case ExprKind::kCondition: return eval_condition(e, scope);
  }
  fail("unknown expression");
}

Value Interpreter::eval_name(const Expr& e, const Scope& scope) {
  if (const Value* v = scope.find(e.name)) return *v;
  return Value::undefined(fmt::format("'{}' is undefined", e.name));
}

Value Interpreter::eval_literal_container(const Expr& e, const std::shared_ptr<Scope>& scope) {
  if (e.kind == ExprKind::kDict) {
    DictData dict;
    for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
      const Value key = eval(*e.args[i], scope);
      dict.set(encode_dict_key(key), eval(*e.args[i + 1], scope));
    }
    return Value::dict(std::move(dict));
  }
  std::vector<Value> items;
  items.reserve(e.args.size());
  for (const ExprPtr& item : e.args) items.push_back(eval(*item, scope));
  return Value::list(std::move(items), e.kind == ExprKind::kTuple);
}

Value Interpreter::getattr(const Value& object, const std::string& name) {
  if (object.is_undefined()) fail_undefined(object);
  if (name.size() > 1 && name[0] == '_' && name[1] == '_') return unsafe_attribute(object, name);
  if (has_method(object, name)) {
    if (is_unsafe_method(object, name)) return unsafe_attribute(object, name);
    return bound_method(object, name);
  }
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().find(name)) return *v;
  } else if (object.is_namespace()) {
    if (const Value* v = object.as_namespace().attrs.find(name)) return *v;
  }
  return missing_attribute(object, name);
}

Value Interpreter::getitem(const Value& object, const Value& key) {
  if (object.is_undefined()) fail_undefined(object);
  const bool integer_key = key.is_int() || key.is_bool();
  if (object.is_dict() && (key.is_string() || key.is_number() || key.is_none())) {
    if (const Value* v = object.as_dict().find(encode_dict_key(key))) return *v;
  } else if (object.is_list() && !object.is_generator() && integer_key) {
    const auto& items = object.as_list().items;
    int64_t i = key.as_int();
    if (i < 0) i += static_cast<int64_t>(items.size());
    if (i >= 0 && i < static_cast<int64_t>(items.size())) return items[static_cast<size_t>(i)];
  } else if (object.is_string() && integer_key) {
    const auto cps = unicode::decode_utf8(object.as_string());
    int64_t i = key.as_int();
    if (i < 0) i += static_cast<int64_t>(cps.size());
    if (i >= 0 && i < static_cast<int64_t>(cps.size())) {
      std::string out;
      unicode::append_utf8(out, cps[static_cast<size_t>(i)]);
      return Value(std::move(out), object.is_markup());
    }
  }
  if (key.is_string() && !(object.is_dict() && !has_method(object, key.as_string())))
    return getattr(object, key.as_string());  // obj["name"] falls back to the attribute
  if (integer_key)
    return Value::undefined(fmt::format("{} has no element {}", object_description(object), key.as_int()));
  if (key.is_string()) return missing_attribute(object, key.as_string());
  return Value::undefined(fmt::format("{} has no element of type {}", object_description(object), type_name(key)));
}

Value Interpreter::eval_slice(const Expr& e, const std::shared_ptr<Scope>& scope) {
  const Value object = eval(*e.args[0], scope);
  Value bounds[3] = {Value::none(), Value::none(), Value::none()};
  for (int i = 0; i < 3; ++i)
    if (e.args[i + 1]) bounds[i] = eval(*e.args[i + 1], scope);
  if (object.is_undefined()) fail_undefined(object);
  for (const Value& b : bounds)
    if (!b.is_none() && !b.is_int() && !b.is_bool()) return Value::undefined("slice indices must be integers or None");
  if (object.is_string()) {
    const auto cps = unicode::decode_utf8(object.as_string());
    std::string out;
    for (const int64_t i : slice_positions(static_cast<int64_t>(cps.size()), bounds[0], bounds[1], bounds[2]))
      unicode::append_utf8(out, cps[static_cast<size_t>(i)]);
    return Value(std::move(out), object.is_markup());
  }
  if (object.is_list() && !object.is_generator()) {
    const ListData& list = object.as_list();
    std::vector<Value> items;
    for (const int64_t i : slice_positions(static_cast<int64_t>(list.items.size()), bounds[0], bounds[1], bounds[2]))
      items.push_back(list.items[static_cast<size_t>(i)]);
    budget_.step(items.size());
    return Value::list(std::move(items), list.is_tuple);
  }
  return Value::undefined(fmt::format("{} is not subscriptable", object_description(object)));
}

CallArgs Interpreter::eval_args(const Expr& e, size_t first, const std::shared_ptr<Scope>& scope) {
  CallArgs args;
  for (size_t i = first; i < e.args.size(); ++i) args.positional.push_back(eval(*e.args[i], scope));
  for (const auto& [key, value] : e.kwargs) args.keyword.emplace_back(key, eval(*value, scope));
  return args;
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) fail_undefined(callee);
  if (!callee.is_callable()) fail("'{}' object is not callable", type_name(callee));
  return callee.as_callable().call(*this, args);
}

Value Interpreter::eval_call(const Expr& e, const std::shared_ptr<Scope>& scope) {
  const Value callee = eval(*e.args[0], scope);
  CallArgs args = eval_args(e, 1, scope);
  return call(callee, args);
}

Value Interpreter::eval_filter(const Expr& e, Value subject, const std::shared_ptr<Scope>& scope) {
  const FilterFunction filter = find_filter(e.name);
  if (!filter && is_jinja2_filter(e.name)) fail("the jinja2 filter '{}' is not supported by skiff", e.name);
  if (!filter) fail("No filter named '{}' found.", e.name);
  CallArgs args = eval_args(e, 1, scope);
  return filter(*this, subject, args);
}

Value Interpreter::eval_test(const Expr& e, const std::shared_ptr<Scope>& scope) {
  const TestFunction test = find_test(e.name);
  if (!test) fail("No test named '{}' found.", e.name);
  const Value subject = eval(*e.args[0], scope);
  CallArgs args = eval_args(e, 1, scope);
  const bool result = test(*this, subject, args);
  return Value(e.negated ? !result : result);
}

Value Interpreter::eval_compare(const Expr& e, const std::shared_ptr<Scope>& scope) {
  Value left = eval(*e.args[0], scope);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.args[i + 1], scope);
    if (!compare(e.ops[i], left, right, budget_)) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Interpreter::eval_condition(const Expr& e, const std::shared_ptr<Scope>& scope) {
  if (eval(*e.args[0], scope).truthy()) return eval(*e.args[1], scope);
  if (e.args[2]) return eval(*e.args[2], scope);
  return Value::undefined("the inline if-expression on line " + std::to_string(e.pos.line) +
                          " evaluated to false and no else section was defined.");
}

std::vector<Value> Interpreter::iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: {
      const ListData& list = v.as_list();
      budget_.step(list.items.size());
      if (!list.is_generator) return list.items;
      std::vector<Value> rest(list.items.begin() + static_cast<std::ptrdiff_t>(list.consumed), list.items.end());
      list.consumed = list.items.size();
      return rest;
    }
    case Value::Kind::kDict: {
      std::vector<Value> keys;
      for (const auto& entry : v.as_dict().items()) keys.push_back(decode_dict_key(entry.first));
      budget_.step(keys.size());
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<Value> chars;
      for (const uint32_t cp : unicode::decode_utf8(v.as_string())) {
        std::string c;
        unicode::append_utf8(c, cp);
        chars.emplace_back(std::move(c), v.is_markup());
      }
      budget_.step(chars.size());
      return chars;
    }
    default: fail("'{}' object is not iterable", type_name(v));
  }
}

}  // namespace skiff::jinja

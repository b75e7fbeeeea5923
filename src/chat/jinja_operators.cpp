#include "chat/jinja_operators.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "chat/jinja_format.h"

namespace skiff::jinja {

void fail_undefined(const Value& v) { throw Error(v.undefined_message()); }

namespace {

bool is_integral(const Value& v) { return v.is_int() || v.is_bool(); }

[[noreturn]] void fail_operands(const std::string& op, const Value& a, const Value& b) {
  fail("unsupported operand type(s) for {}: '{}' and '{}'", op, type_name(a), type_name(b));
}

void check_defined(const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
}

bool sequences_equal(const ListData& a, const ListData& b, Budget& budget) {
  if (a.is_tuple != b.is_tuple || a.items.size() != b.items.size()) return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!values_equal(a.items[i], b.items[i], budget)) return false;
  return true;
}

bool dicts_equal(const DictData& a, const DictData& b, Budget& budget) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a.items()) {
    const Value* other = b.find(key);
    if (!other || !values_equal(value, *other, budget)) return false;
  }
  return true;
}

[[noreturn]] void fail_overflow() { fail("integer overflow (skiff's template integers are 64-bit)"); }

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail_overflow();
  return r;
}

int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) fail_overflow();
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail_overflow();
  return r;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) fail("integer division or modulo by zero");
  if (a == INT64_MIN && b == -1) fail_overflow();
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0) fail("integer division or modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

double float_mod(double a, double b) {
  if (b == 0) fail("float modulo");
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Value int_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 0) fail("0.0 cannot be raised to a negative power");
    return Value(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = checked_mul(result, base);
    exponent >>= 1;
    if (exponent > 0) base = checked_mul(base, base);
  }
  return Value(result);
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (is_integral(a) && is_integral(b)) {
    const int64_t x = a.as_int(), y = b.as_int();
    if (op == "+") return Value(checked_add(x, y));
    if (op == "-") return Value(checked_sub(x, y));
    if (op == "*") return Value(checked_mul(x, y));
    if (op == "//") return Value(floor_div(x, y));
    if (op == "%") return Value(floor_mod(x, y));
    if (op == "**") return int_pow(x, y);
    if (y == 0) fail("division by zero");
    return Value(static_cast<double>(x) / static_cast<double>(y));
  }
  const double x = a.as_float(), y = b.as_float();
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if (op == "**") return Value(std::pow(x, y));
  if (y == 0) throw Error(op == "%" ? "float modulo" : "float division by zero");
  if (op == "/") return Value(x / y);
  if (op == "//") return Value(std::floor(x / y));
  return Value(float_mod(x, y));
}

Value repeat(const Value& sequence, int64_t times, Budget& budget) {
  times = std::max<int64_t>(times, 0);
  if (sequence.is_string()) {
    const std::string& s = sequence.as_string();
    if (times > 0 && s.size() > budget.limits().max_output_bytes / static_cast<uint64_t>(times))
      budget.build_string(budget.limits().max_output_bytes + 1);
    budget.build_string(s.size() * times);
    std::string out;
    out.reserve(s.size() * times);
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value(std::move(out), sequence.is_markup());
  }
  const ListData& list = sequence.as_list();
  if (times > 0 && list.items.size() > budget.limits().max_loop_iterations / static_cast<uint64_t>(times))
    fail("chat template: a list would exceed {} items", budget.limits().max_loop_iterations);
  budget.step(list.items.size() * times);
  std::vector<Value> items;
  for (int64_t i = 0; i < times; ++i) items.insert(items.end(), list.items.begin(), list.items.end());
  return Value::list(std::move(items), list.is_tuple);
}

Value concat_lists(const Value& a, const Value& b, Budget& budget) {
  const ListData& x = a.as_list();
  const ListData& y = b.as_list();
  if (x.is_tuple != y.is_tuple)
    fail("can only concatenate {} (not \"{}\") to {}", type_name(a), type_name(b), type_name(a));
  budget.step(x.items.size() + y.items.size());
  std::vector<Value> items = x.items;
  items.insert(items.end(), y.items.begin(), y.items.end());
  return Value::list(std::move(items), x.is_tuple);
}

}  // namespace

bool values_equal(const Value& a, const Value& b, Budget& budget) {
  budget.step();
  if (a.is_number() && b.is_number()) {
    if (is_integral(a) && is_integral(b)) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: return sequences_equal(a.as_list(), b.as_list(), budget);
    case Value::Kind::kDict: return dicts_equal(a.as_dict(), b.as_dict(), budget);
    case Value::Kind::kNamespace: return &a.as_namespace() == &b.as_namespace();
    case Value::Kind::kCallable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

bool value_less(const Value& a, const Value& b, Budget& budget) {
  budget.step();
  check_defined(a, b);
  if (a.is_number() && b.is_number()) {
    if (is_integral(a) && is_integral(b)) return a.as_int() < b.as_int();
    return a.as_float() < b.as_float();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order is code point order
  if (a.is_list() && b.is_list() && a.as_list().is_tuple == b.as_list().is_tuple) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!values_equal(x[i], y[i], budget)) return value_less(x[i], y[i], budget);
    }
    return x.size() < y.size();
  }
  fail("'<' not supported between instances of '{}' and '{}'", type_name(a), type_name(b));
}

bool contains(const Value& container, const Value& item, Budget& budget) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;  // iterating an undefined value yields nothing
    case Value::Kind::kString:
      if (!item.is_string())
        fail("'in <string>' requires string as left operand, not {}", type_name(item));
      budget.step(container.as_string().size() / 64);
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& v : container.as_list().items)
        if (values_equal(v, item, budget)) return true;
      return false;
    case Value::Kind::kDict:
      return container.as_dict().find(encode_dict_key(item)) != nullptr;
    default: fail("argument of type '{}' is not iterable", type_name(container));
  }
}

bool compare(const std::string& op, const Value& a, const Value& b, Budget& budget) {
  if (op == "==") return values_equal(a, b, budget);
  if (op == "!=") return !values_equal(a, b, budget);
  if (op == "<") return value_less(a, b, budget);
  if (op == ">") return value_less(b, a, budget);
  if (op == "<=") return !value_less(b, a, budget);
  if (op == ">=") return !value_less(a, b, budget);
  if (op == "in") return contains(b, a, budget);
  return !contains(b, a, budget);  // notin
}

Value concat_strings(const Value& a, const Value& b, Budget& budget) {
  budget.build_string(a.as_string().size() + b.as_string().size());
  const bool markup = a.is_markup() || b.is_markup();
  const std::string left = a.is_markup() || !markup ? a.as_string() : html_escape(a.as_string());
  const std::string right = b.is_markup() || !markup ? b.as_string() : html_escape(b.as_string());
  return Value(left + right, markup);
}

Value binary_op(const std::string& op, const Value& a, const Value& b, Budget& budget) {
  if (op == "~") {
    std::string out = to_str(a, budget);
    append_str(out, b, budget);
    budget.build_string(out.size());
    return Value(std::move(out));
  }
  check_defined(a, b);
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == "+" && a.is_string() && b.is_string()) return concat_strings(a, b, budget);
  if (op == "+" && a.is_list() && b.is_list()) return concat_lists(a, b, budget);
  if (op == "*" && (a.is_string() || a.is_list()) && is_integral(b)) return repeat(a, b.as_int(), budget);
  if (op == "*" && (b.is_string() || b.is_list()) && is_integral(a)) return repeat(b, a.as_int(), budget);
  if (op == "%" && a.is_string()) fail("printf-style string formatting (str % values) is not supported");
  if (op == "+" && a.is_string())
    fail("can only concatenate str (not \"{}\") to str", type_name(b));
  if (op == "+" && a.is_list())
    fail("can only concatenate {} (not \"{}\") to {}", type_name(a), type_name(b), type_name(a));
  fail_operands(op, a, b);
}

Value negate(const Value& v) {
  if (v.is_undefined()) fail_undefined(v);
  if (v.is_float()) return Value(-v.as_float());
  if (is_integral(v)) {
    if (v.as_int() == INT64_MIN) fail_overflow();
    return Value(-v.as_int());
  }
  fail("bad operand type for unary -: '{}'", type_name(v));
}

}  // namespace skiff::jinja

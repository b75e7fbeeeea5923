#include "chat/jinja_tests.h"

#include <unordered_map>

#include "chat/jinja_filters.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_text.h"

namespace skiff::jinja {

namespace {

const Value& only_argument(CallArgs& args, const char* test) {
  if (args.positional.size() != 1 || !args.keyword.empty()) fail("the '{}' test takes one argument", test);
  return args.positional[0];
}

void no_arguments(CallArgs& args, const char* test) {
  if (!args.positional.empty() || !args.keyword.empty()) fail("the '{}' test takes no arguments", test);
}

int64_t integer_subject(const Value& v, const char* test) {
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_int() && !v.is_bool()) fail("the '{}' test needs an integer, got {}", test, type_name(v));
  return v.as_int();
}

#define SKIFF_SIMPLE_TEST(name, expression)                 \
  bool test_##name(Interpreter&, const Value& v, CallArgs& args) { \
    no_arguments(args, #name);                              \
    return expression;                                      \
  }

SKIFF_SIMPLE_TEST(defined, !v.is_undefined())
SKIFF_SIMPLE_TEST(undefined, v.is_undefined())
SKIFF_SIMPLE_TEST(none, v.is_none())
SKIFF_SIMPLE_TEST(boolean, v.is_bool())
SKIFF_SIMPLE_TEST(false, v.is_bool() && !v.as_bool())
SKIFF_SIMPLE_TEST(true, v.is_bool() && v.as_bool())
SKIFF_SIMPLE_TEST(integer, v.is_int())
SKIFF_SIMPLE_TEST(float, v.is_float())
SKIFF_SIMPLE_TEST(number, v.is_number())
SKIFF_SIMPLE_TEST(string, v.is_string())
SKIFF_SIMPLE_TEST(mapping, v.is_dict())
SKIFF_SIMPLE_TEST(callable, v.is_callable())
SKIFF_SIMPLE_TEST(escaped, v.is_markup())
SKIFF_SIMPLE_TEST(lower, v.is_string() ? py_is_lower(v.as_string()) : false)
SKIFF_SIMPLE_TEST(upper, v.is_string() ? py_is_upper(v.as_string()) : false)
// Python: iter() works on strings, lists, dicts, generators and jinja2's Undefined.
SKIFF_SIMPLE_TEST(iterable, v.is_string() || v.is_list() || v.is_dict() || v.is_undefined())
// len() and __getitem__: strings, lists, tuples, dicts and Undefined, not generators.
SKIFF_SIMPLE_TEST(sequence, v.is_string() || (v.is_list() && !v.is_generator()) || v.is_dict() || v.is_undefined())

#undef SKIFF_SIMPLE_TEST

bool test_odd(Interpreter&, const Value& v, CallArgs& args) {
  no_arguments(args, "odd");
  return integer_subject(v, "odd") % 2 != 0;
}

bool test_even(Interpreter&, const Value& v, CallArgs& args) {
  no_arguments(args, "even");
  return integer_subject(v, "even") % 2 == 0;
}

bool test_divisibleby(Interpreter&, const Value& v, CallArgs& args) {
  const Value& divisor = only_argument(args, "divisibleby");
  const int64_t d = integer_subject(divisor, "divisibleby");
  if (d == 0) fail("integer division or modulo by zero");
  return integer_subject(v, "divisibleby") % d == 0;
}

// Python's `is`: None and booleans are singletons, small ints are cached, and
// containers are the same object only when they share storage.
bool test_sameas(Interpreter&, const Value& v, CallArgs& args) {
  const Value& other = only_argument(args, "sameas");
  if (v.kind() != other.kind()) return false;
  switch (v.kind()) {
    case Value::Kind::kNone:
    case Value::Kind::kUndefined: return v.is_none();
    case Value::Kind::kBool: return v.as_bool() == other.as_bool();
    case Value::Kind::kInt: return v.as_int() == other.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    case Value::Kind::kString: return &v.as_string() == &other.as_string();
    case Value::Kind::kList: return &v.as_list() == &other.as_list();
    case Value::Kind::kDict: return &v.as_dict() == &other.as_dict();
    case Value::Kind::kNamespace: return &v.as_namespace() == &other.as_namespace();
    case Value::Kind::kCallable: return &v.as_callable() == &other.as_callable();
    default: return false;
  }
}

bool test_in(Interpreter& interp, const Value& v, CallArgs& args) {
  return contains(only_argument(args, "in"), v, interp.budget());
}

bool test_filter(Interpreter&, const Value& v, CallArgs& args) {
  no_arguments(args, "filter");
  return v.is_string() && is_jinja2_filter(v.as_string());
}

bool test_test(Interpreter&, const Value& v, CallArgs& args) {
  no_arguments(args, "test");
  return v.is_string() && find_test(v.as_string()) != nullptr;
}

template <const char* Op>
bool comparison_test(Interpreter& interp, const Value& v, CallArgs& args) {
  return compare(Op, v, only_argument(args, Op), interp.budget());
}

constexpr char kEq[] = "==", kNe[] = "!=", kGt[] = ">", kGe[] = ">=", kLt[] = "<", kLe[] = "<=";

}  // namespace

TestFunction find_test(const std::string& name) {
  static const std::unordered_map<std::string, TestFunction> table = {
      {"defined", test_defined},   {"undefined", test_undefined}, {"none", test_none},
      {"boolean", test_boolean},   {"false", test_false},         {"true", test_true},
      {"integer", test_integer},   {"float", test_float},         {"number", test_number},
      {"string", test_string},     {"mapping", test_mapping},     {"callable", test_callable},
      {"escaped", test_escaped},   {"lower", test_lower},         {"upper", test_upper},
      {"iterable", test_iterable}, {"sequence", test_sequence},   {"odd", test_odd},
      {"even", test_even},         {"divisibleby", test_divisibleby}, {"sameas", test_sameas},
      {"in", test_in},             {"filter", test_filter},       {"test", test_test},
      {"==", comparison_test<kEq>}, {"eq", comparison_test<kEq>}, {"equalto", comparison_test<kEq>},
      {"!=", comparison_test<kNe>}, {"ne", comparison_test<kNe>},
      {">", comparison_test<kGt>},  {"gt", comparison_test<kGt>}, {"greaterthan", comparison_test<kGt>},
      {">=", comparison_test<kGe>}, {"ge", comparison_test<kGe>},
      {"<", comparison_test<kLt>},  {"lt", comparison_test<kLt>}, {"lessthan", comparison_test<kLt>},
      {"<=", comparison_test<kLe>}, {"le", comparison_test<kLe>},
  };
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace skiff::jinja

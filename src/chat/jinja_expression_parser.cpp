#include "chat/jinja_parser.h"

#include <cerrno>
#include <cstdlib>

namespace skiff::jinja {

bool Parser::is_tuple_end(const std::set<std::string>& extra_ends) const {
  const TokenType type = current().type;
  if (type == TokenType::kVariableEnd || type == TokenType::kBlockEnd || is_op(")")) return true;
  return type == TokenType::kName && extra_ends.count(current().text);
}

ExprPtr Parser::parse_tuple(bool with_condition, const std::set<std::string>& extra_ends,
                            bool explicit_parentheses) {
  const Token& at = current();
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (is_tuple_end(extra_ends)) break;
    items.push_back(parse_expression(with_condition));
    if (is_op(",")) is_tuple = true;
    else break;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parentheses) error("expected an expression, got '" + describe(current()) + "'");
  }
  auto e = make(ExprKind::kTuple, at);
  e->args = std::move(items);
  return e;
}

ExprPtr Parser::parse_expression(bool with_condition) {
  Deeper deeper(*this);
  return with_condition ? parse_condition() : parse_or();
}

ExprPtr Parser::parse_condition() {
  ExprPtr value = parse_or();
  while (is_name("if")) {
    auto e = make(ExprKind::kCondition, advance());
    ExprPtr test = parse_or();
    ExprPtr otherwise = skip_name("else") ? parse_condition() : nullptr;
    e->args.push_back(std::move(test));
    e->args.push_back(std::move(value));
    e->args.push_back(std::move(otherwise));
    value = std::move(e);
  }
  return value;
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_and();
  while (is_name("or")) {
    const Token& at = advance();
    left = binary(ExprKind::kOr, at, "or", std::move(left), parse_and());
  }
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (is_name("and")) {
    const Token& at = advance();
    left = binary(ExprKind::kAnd, at, "and", std::move(left), parse_not());
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    Deeper deeper(*this);
    auto e = make(ExprKind::kUnary, advance());
    e->name = "not";
    e->args.push_back(parse_not());
    return e;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  const Token& at = current();
  ExprPtr first = parse_math1();
  ExprPtr e;
  static const std::set<std::string> kOps = {"==", "!=", "<", ">", "<=", ">="};
  while (true) {
    std::string op;
    if (current().type == TokenType::kOperator && kOps.count(current().text)) {
      op = advance().text;
    } else if (is_name("in")) {
      advance();
      op = "in";
    } else if (is_name("not") && peek().type == TokenType::kName && peek().text == "in") {
      advance();
      advance();
      op = "notin";
    } else {
      break;
    }
    if (!e) {
      e = make(ExprKind::kCompare, at);
      e->args.push_back(std::move(first));
    }
    e->ops.push_back(op);
    e->args.push_back(parse_math1());
  }
  return e ? std::move(e) : std::move(first);
}

ExprPtr Parser::parse_math1() {
  ExprPtr left = parse_concat();
  while (is_op("+") || is_op("-")) {
    const Token& at = advance();
    left = binary(ExprKind::kBinary, at, at.text, std::move(left), parse_concat());
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  ExprPtr left = parse_math2();
  while (is_op("~")) {
    const Token& at = advance();
    left = binary(ExprKind::kBinary, at, "~", std::move(left), parse_math2());
  }
  return left;
}

ExprPtr Parser::parse_math2() {
  ExprPtr left = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& at = advance();
    left = binary(ExprKind::kBinary, at, at.text, std::move(left), parse_pow());
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  ExprPtr left = parse_unary(true);
  while (is_op("**")) {
    const Token& at = advance();
    left = binary(ExprKind::kBinary, at, "**", std::move(left), parse_unary(true));
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  Deeper deeper(*this);
  ExprPtr node;
  if (is_op("-") || is_op("+")) {
    node = make(ExprKind::kUnary, current());
    node->name = advance().text;
    node->args.push_back(parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  return with_filter ? parse_filter_expr(std::move(node)) : std::move(node);
}

ExprPtr Parser::parse_primary() {
  const Token& t = current();
  switch (t.type) {
    case TokenType::kName: {
      advance();
      if (t.text == "true" || t.text == "True") return literal(t, Value(true));
      if (t.text == "false" || t.text == "False") return literal(t, Value(false));
      if (t.text == "none" || t.text == "None") return literal(t, Value::none());
      for (auto& names : macro_names_) names.insert(t.text);
      auto e = make(ExprKind::kName, t);
      e->name = t.text;
      return e;
    }
    case TokenType::kString: {
      std::string text;  // adjacent literals join, as in Python
      while (current().type == TokenType::kString) text += advance().text;
      return literal(t, Value(std::move(text)));
    }
    case TokenType::kInteger: return literal(t, Value(parse_integer(advance())));
    case TokenType::kFloat: return literal(t, Value(std::strtod(advance().text.c_str(), nullptr)));
    default: break;
  }
  if (skip_op("(")) {
    ExprPtr e = parse_tuple(true, {}, /*explicit_parentheses=*/true);
    expect_op(")");
    return e;
  }
  if (skip_op("[")) return parse_sequence(ExprKind::kList, "]", t);
  if (skip_op("{")) return parse_dict(t);
  error("unexpected '" + describe(t) + "'");
}

int64_t Parser::parse_integer(const Token& t) {
  const std::string& text = t.text;
  const int base = text.size() > 1 && std::isalpha(static_cast<unsigned char>(text[1]))
                       ? (text[1] == 'x' ? 16 : text[1] == 'o' ? 8 : 2)
                       : 10;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str() + (base == 10 ? 0 : 2), nullptr, base);
  if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
    error_at(t, "integer literal " + text + " is too large");
  return static_cast<int64_t>(v);
}

ExprPtr Parser::parse_sequence(ExprKind kind, const char* close, const Token& at) {
  auto e = make(kind, at);
  while (!is_op(close)) {
    if (!e->args.empty()) expect_op(",");
    if (is_op(close)) break;  // a trailing comma
    e->args.push_back(parse_expression(true));
  }
  expect_op(close);
  return e;
}

ExprPtr Parser::parse_dict(const Token& at) {
  auto e = make(ExprKind::kDict, at);
  while (!is_op("}")) {
    if (!e->args.empty()) expect_op(",");
    if (is_op("}")) break;
    e->args.push_back(parse_expression(true));
    expect_op(":");
    e->args.push_back(parse_expression(true));
  }
  expect_op("}");
  return e;
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  while (true) {
    if (is_op(".") || is_op("[")) node = parse_subscript(std::move(node));
    else if (is_op("(")) node = parse_call(std::move(node));
    else return node;
  }
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (is_op("|")) {
      const Token& at = advance();
      node = parse_filter(std::move(node), at);
    } else if (is_name("is")) {
      node = parse_test(std::move(node));
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  const Token& at = advance();
  if (at.text == ".") {
    const Token& attr = current();
    if (attr.type == TokenType::kName) {
      auto e = make(ExprKind::kGetattr, at);
      e->name = advance().text;
      e->args.push_back(std::move(node));
      return e;
    }
    if (attr.type != TokenType::kInteger) error("expected name or number after '.'");
    auto e = make(ExprKind::kGetitem, at);
    e->args.push_back(std::move(node));
    e->args.push_back(literal(attr, Value(parse_integer(advance()))));
    return e;
  }
  std::vector<ExprPtr> items;
  while (!is_op("]")) {
    if (!items.empty()) expect_op(",");
    items.push_back(parse_subscribed());
  }
  expect_op("]");
  ExprPtr index;
  if (items.size() == 1) {
    index = std::move(items[0]);
  } else {
    index = make(ExprKind::kTuple, at);
    index->args = std::move(items);
  }
  if (index->kind == ExprKind::kSlice) {  // the slice's subject is filled in here
    index->args[0] = std::move(node);
    return index;
  }
  auto e = make(ExprKind::kGetitem, at);
  e->args.push_back(std::move(node));
  e->args.push_back(std::move(index));
  return e;
}

// One subscript: an expression or a slice start:stop:step (each optional).
ExprPtr Parser::parse_subscribed() {
  const Token& at = current();
  ExprPtr start;
  if (!is_op(":")) {
    start = parse_expression(true);
    if (!is_op(":")) return start;
  }
  auto slice = make(ExprKind::kSlice, at);
  advance();  // ':'
  ExprPtr stop, step;
  if (!is_op("]") && !is_op(",") && !is_op(":")) stop = parse_expression(true);
  if (skip_op(":") && !is_op("]") && !is_op(",")) step = parse_expression(true);
  slice->args.push_back(nullptr);
  slice->args.push_back(std::move(start));
  slice->args.push_back(std::move(stop));
  slice->args.push_back(std::move(step));
  return slice;
}

ExprPtr Parser::parse_call(ExprPtr callee) {
  auto e = make(ExprKind::kCall, current());
  e->args.push_back(std::move(callee));
  parse_call_args(*e);
  return e;
}

// "(a, b, name=c)": positional arguments go after e.args' existing entries.
void Parser::parse_call_args(Expr& e) {
  expect_op("(");
  bool first = true;
  while (!is_op(")")) {
    if (!first) expect_op(",");
    first = false;
    if (is_op(")")) break;
    if (is_op("*") || is_op("**")) error("*args and **kwargs in calls are not supported");
    if (current().type == TokenType::kName && peek().type == TokenType::kOperator && peek().text == "=") {
      std::string key = advance().text;
      advance();
      e.kwargs.emplace_back(std::move(key), parse_expression(true));
    } else {
      if (!e.kwargs.empty()) error("invalid syntax for function call expression");
      e.args.push_back(parse_expression(true));
    }
  }
  expect_op(")");
}

std::string Parser::parse_dotted_name() {
  std::string name = expect_name();
  while (is_op(".") && peek().type == TokenType::kName) {
    advance();
    name += "." + advance().text;
  }
  return name;
}

ExprPtr Parser::parse_filter(ExprPtr subject, const Token& at) {
  auto e = make(ExprKind::kFilter, at);
  e->name = parse_dotted_name();
  e->args.push_back(std::move(subject));
  if (is_op("(")) parse_call_args(*e);
  return e;
}

ExprPtr Parser::parse_test(ExprPtr subject) {
  auto e = make(ExprKind::kTest, advance());
  e->negated = skip_name("not");
  e->name = parse_dotted_name();
  e->args.push_back(std::move(subject));
  const Token& t = current();
  const bool starts_argument =
      t.type == TokenType::kName || t.type == TokenType::kString || t.type == TokenType::kInteger ||
      t.type == TokenType::kFloat || is_op("(") || is_op("[") || is_op("{");
  if (is_op("(")) {
    parse_call_args(*e);
  } else if (starts_argument && !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) error("you cannot chain multiple tests with is");
    e->args.push_back(parse_postfix(parse_primary()));
  }
  return e;
}

}  // namespace skiff::jinja

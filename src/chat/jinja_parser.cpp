#include "chat/jinja_parser.h"

namespace skiff::jinja {

Body Parser::parse_all() {
  Body body = subparse({});
  if (current().type != TokenType::kEnd) error("unexpected '" + describe(current()) + "'");
  return body;
}

// Parses until a block whose first name is one of `ends` (left unconsumed,
// after its "{%"), or the end of the template when ends is empty.
Body Parser::subparse(const std::set<std::string>& ends) {
  Deeper deeper(*this);
  Body body;
  while (current().type != TokenType::kEnd) {
    const Token& t = current();
    if (t.type == TokenType::kData) {
      auto n = make_node(NodeKind::kData, t);
      n->text = advance().text;
      body.push_back(std::move(n));
    } else if (t.type == TokenType::kVariableBegin) {
      advance();
      auto n = make_node(NodeKind::kOutput, t);
      n->expr = parse_tuple(true);
      if (current().type != TokenType::kVariableEnd) error("expected '}}', got '" + describe(current()) + "'");
      advance();
      body.push_back(std::move(n));
    } else if (t.type == TokenType::kBlockBegin) {
      advance();
      if (current().type == TokenType::kName && ends.count(current().text)) return body;
      body.push_back(parse_statement());
    } else {
      error("unexpected '" + describe(t) + "'");
    }
  }
  if (!ends.empty()) {
    std::string names;
    for (const auto& e : ends) names += (names.empty() ? "'" : " or '") + e + "'";
    error("unexpected end of template, expected " + names);
  }
  return body;
}

NodePtr Parser::parse_statement() {
  const Token& t = current();
  if (t.type != TokenType::kName) error("tag name expected");
  const std::string& tag = t.text;
  if (tag == "if") return parse_if();
  if (tag == "for") return parse_for();
  if (tag == "set") return parse_set();
  if (tag == "macro") return parse_macro();
  if (tag == "call") return parse_call_block();
  if (tag == "filter") return parse_filter_block();
  if (tag == "generation") return parse_scope("endgeneration");
  if (tag == "break" || tag == "continue") {
    auto n = make_node(tag == "break" ? NodeKind::kBreak : NodeKind::kContinue, advance());
    if (loop_depth_ == 0) error_at(t, "'" + tag + "' outside of a loop");
    expect_block_end();
    return n;
  }
  error("encountered unknown or unsupported tag '" + tag + "'");
}

// Consumes "name %}" of a block end tag found by subparse.
void Parser::end_block(const char* name) {
  if (!skip_name(name)) error(std::string("expected '") + name + "'");
  expect_block_end();
}

NodePtr Parser::parse_if() {
  auto n = make_node(NodeKind::kIf, advance());
  while (true) {
    ExprPtr condition = parse_tuple(false);
    expect_block_end();
    Body body = subparse({"elif", "else", "endif"});
    n->branches.emplace_back(std::move(condition), std::move(body));
    if (skip_name("elif")) continue;
    if (skip_name("else")) {
      expect_block_end();
      n->else_body = subparse({"endif"});
    }
    end_block("endif");
    return n;
  }
}

NodePtr Parser::parse_for() {
  auto n = make_node(NodeKind::kFor, advance());
  n->target = parse_target(/*with_namespace=*/false);
  if (!skip_name("in")) error("expected 'in'");
  n->expr = parse_tuple(false, {"recursive"});
  if (skip_name("if")) n->condition = parse_expression(true);
  if (is_name("recursive")) error("recursive for loops are not supported");
  expect_block_end();
  ++loop_depth_;
  n->body = subparse({"endfor", "else"});
  --loop_depth_;
  if (skip_name("else")) {
    expect_block_end();
    n->else_body = subparse({"endfor"});
  }
  end_block("endfor");
  return n;
}

Target Parser::parse_target(bool with_namespace) {
  Target target;
  const Token& first = current();
  target.names.push_back(expect_name());
  if (with_namespace && skip_op(".")) {
    target.attribute = expect_name();
    return target;
  }
  while (skip_op(",")) {
    target.unpack = true;
    if (current().type != TokenType::kName || is_name("in")) break;
    target.names.push_back(expect_name());
  }
  for (const auto& name : target.names)
    if (name == "true" || name == "false" || name == "none" || name == "True" || name == "False" || name == "None")
      error_at(first, "cannot assign to '" + name + "'");
  return target;
}

NodePtr Parser::parse_set() {
  const Token& at = advance();
  Target target = parse_target(/*with_namespace=*/true);
  if (skip_op("=")) {
    auto n = make_node(NodeKind::kSet, at);
    n->target = std::move(target);
    n->expr = parse_tuple(true);
    expect_block_end();
    return n;
  }
  auto n = make_node(NodeKind::kSetBlock, at);
  n->target = std::move(target);
  parse_filter_chain(n->filters);
  expect_block_end();
  n->body = subparse({"endset"});
  end_block("endset");
  return n;
}

void Parser::parse_filter_chain(std::vector<ExprPtr>& filters) {
  while (skip_op("|")) filters.push_back(parse_filter(nullptr, current()));
}

NodePtr Parser::parse_filter_block() {
  auto n = make_node(NodeKind::kFilterBlock, advance());
  filters_first(n->filters);
  expect_block_end();
  n->body = subparse({"endfilter"});
  end_block("endfilter");
  return n;
}

void Parser::filters_first(std::vector<ExprPtr>& filters) {
  filters.push_back(parse_filter(nullptr, current()));
  parse_filter_chain(filters);
}

NodePtr Parser::parse_scope(const char* end) {
  auto n = make_node(NodeKind::kScope, advance());
  expect_block_end();
  n->body = subparse({end});
  end_block(end);
  return n;
}

void Parser::parse_signature(Node& n) {
  expect_op("(");
  while (!is_op(")")) {
    if (!n.params.empty()) expect_op(",");
    if (is_op(")")) break;
    n.params.push_back(expect_name());
    n.defaults.push_back(skip_op("=") ? parse_expression(true) : nullptr);
  }
  expect_op(")");
}

NodePtr Parser::parse_macro() {
  auto n = make_node(NodeKind::kMacro, advance());
  n->text = expect_name();
  parse_signature(*n);
  expect_block_end();
  const int loops = loop_depth_;
  loop_depth_ = 0;  // break inside a macro does not reach an enclosing loop
  macro_names_.emplace_back();
  n->body = subparse({"endmacro"});
  const std::set<std::string> names = std::move(macro_names_.back());
  macro_names_.pop_back();
  n->takes_varargs = names.count("varargs") > 0;
  n->takes_kwargs = names.count("kwargs") > 0;
  n->takes_caller = names.count("caller") > 0;
  loop_depth_ = loops;
  end_block("endmacro");
  return n;
}

NodePtr Parser::parse_call_block() {
  auto n = make_node(NodeKind::kCallBlock, advance());
  if (is_op("(")) parse_signature(*n);
  n->expr = parse_expression(true);
  if (n->expr->kind != ExprKind::kCall) error("expected a call after 'call'");
  expect_block_end();
  n->body = subparse({"endcall"});
  end_block("endcall");
  return n;
}

std::shared_ptr<const Template> parse_template(const std::string& source) {
  auto t = std::make_shared<Template>();
  t->body = Parser(tokenize(source)).parse_all();
  return t;
}

}  // namespace skiff::jinja

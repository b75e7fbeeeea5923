// The parser's class, shared by its two halves: statements (jinja_parser.cpp)
// and expressions (jinja_expression_parser.cpp). It follows jinja2's parser.py
// rule for rule, so precedence matches: filters and tests bind tighter than
// arithmetic, `**` is left-associative, `x if c` without else is undefined.
#pragma once
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "chat/jinja_ast.h"

namespace skiff::jinja {

// Parentheses and blocks nested deeper than this are refused: the parser
// recurses once per level (jinja2 would hit Python's recursion limit).
inline constexpr int kMaxParseDepth = 200;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse_all();

 private:
  class Deeper {
   public:
    explicit Deeper(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxParseDepth)
        p_.error("the template nests deeper than " + std::to_string(kMaxParseDepth) + " levels");
    }
    ~Deeper() { --p_.depth_; }

   private:
    Parser& p_;
  };

  const Token& current() const { return tokens_[pos_]; }
  const Token& peek(size_t ahead = 1) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case TokenType::kEnd: return "end of template";
      case TokenType::kBlockEnd: return "%}";
      case TokenType::kVariableEnd: return "}}";
      case TokenType::kBlockBegin: return "{%";
      case TokenType::kVariableBegin: return "{{";
      case TokenType::kData: return "text";
      default: return t.text;
    }
  }

  [[noreturn]] void error(const std::string& message) const { error_at(current(), message); }
  [[noreturn]] static void error_at(const Token& t, const std::string& message) {
    fail("chat template syntax error at line {}, column {}: {}", t.line, t.column, message);
  }

  bool is_op(const char* op) const { return current().type == TokenType::kOperator && current().text == op; }
  bool is_name(const char* name) const { return current().type == TokenType::kName && current().text == name; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) error(std::string("expected '") + op + "', got '" + describe(current()) + "'");
  }
  std::string expect_name() {
    if (current().type != TokenType::kName) error("expected a name, got '" + describe(current()) + "'");
    return advance().text;
  }
  void expect_block_end() {
    if (current().type != TokenType::kBlockEnd)
      error("expected end of statement block, got '" + describe(current()) + "'");
    advance();
  }

  ExprPtr make(ExprKind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = {at.line, at.column};
    return e;
  }
  NodePtr make_node(NodeKind kind, const Token& at) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->pos = {at.line, at.column};
    return n;
  }

  // ---- statements ----

  // Parses until a block whose first name is one of `ends` (left unconsumed,
  // after its "{%"), or the end of the template when ends is empty.
  Body subparse(const std::set<std::string>& ends);
  NodePtr parse_statement();

  // Consumes "name %}" of a block end tag found by subparse.
  void end_block(const char* name);
  NodePtr parse_if();
  NodePtr parse_for();
  Target parse_target(bool with_namespace);
  NodePtr parse_set();
  void parse_filter_chain(std::vector<ExprPtr>& filters);
  NodePtr parse_filter_block();
  void filters_first(std::vector<ExprPtr>& filters);
  NodePtr parse_scope(const char* end);
  void parse_signature(Node& n);
  NodePtr parse_macro();
  NodePtr parse_call_block();

  // ---- expressions ----

  bool is_tuple_end(const std::set<std::string>& extra_ends) const;
  ExprPtr parse_tuple(bool with_condition, const std::set<std::string>& extra_ends = {},
                      bool explicit_parentheses = false);
  ExprPtr parse_expression(bool with_condition);
  ExprPtr parse_condition();
  ExprPtr binary(ExprKind kind, const Token& at, std::string op, ExprPtr left, ExprPtr right) {
    auto e = make(kind, at);
    e->name = std::move(op);
    e->args.push_back(std::move(left));
    e->args.push_back(std::move(right));
    return e;
  }

  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr literal(const Token& at, Value v) {
    auto e = make(ExprKind::kLiteral, at);
    e->literal = std::move(v);
    return e;
  }

  ExprPtr parse_primary();
  int64_t parse_integer(const Token& t);
  ExprPtr parse_sequence(ExprKind kind, const char* close, const Token& at);
  ExprPtr parse_dict(const Token& at);
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node);
  ExprPtr parse_subscribed();
  ExprPtr parse_call(ExprPtr callee);
  void parse_call_args(Expr& e);
  ExprPtr parse_filter(ExprPtr subject, const Token& at);
  ExprPtr parse_test(ExprPtr subject);
  std::string parse_dotted_name();
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  std::vector<std::set<std::string>> macro_names_;  // names read in each macro being parsed
};

}  // namespace skiff::jinja

// The parsed template: expressions and statements, as jinja2's nodes.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_lexer.h"
#include "chat/jinja_value.h"

namespace skiff::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  kLiteral,    // literal
  kName,       // name
  kList,       // args: items
  kTuple,      // args: items
  kDict,       // args: key, value, key, value, ...
  kGetattr,    // args[0].name
  kGetitem,    // args[0][args[1]]
  kSlice,      // args[0][args[1]:args[2]:args[3]], each bound may be null
  kCall,       // args[0](args[1:], kwargs)
  kFilter,     // args[0] | name(args[1:], kwargs); args[0] null in a filter block's chain
  kTest,       // args[0] is [not] name(args[1:]); negated
  kUnary,      // name ("-", "+", "not") args[0]
  kBinary,     // args[0] name args[1]: + - * / // % ** ~
  kCompare,    // args[0] ops[0] args[1] ops[1] args[2] ...: == != < > <= >= in notin
  kAnd,
  kOr,
  kCondition,  // args[1] if args[0] else args[2] (args[2] null: undefined)
};

struct Expr {
  ExprKind kind;
  Position pos;
  std::string name;
  Value literal;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  bool negated = false;
};

// Where `for` and `set` put values: one name, names to unpack, or ns.attr.
struct Target {
  std::vector<std::string> names;
  bool unpack = false;  // a tuple of names (even of one: `for a, in ...`)
  std::string attribute;  // set ns.attr: names[0] is the namespace
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

enum class NodeKind {
  kData,         // text
  kOutput,       // {{ expr }}
  kIf,           // branches; else_body
  kFor,          // target in expr [if condition]: body; else_body
  kSet,          // target = expr
  kSetBlock,     // target = body | filters
  kMacro,        // name(params = defaults): body
  kCallBlock,    // {% call(params) expr %}body: caller() renders body
  kFilterBlock,  // body | filters
  kBreak,
  kContinue,
  kScope,        // a body with nothing around it ({% generation %})
};

struct Node {
  NodeKind kind;
  Position pos;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  Target target;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // one per param; null where none
  std::vector<ExprPtr> filters;   // kFilter expressions with a null subject
  // A macro's body names these: extra arguments are collected instead of refused.
  bool takes_varargs = false;
  bool takes_kwargs = false;
  bool takes_caller = false;
};

struct Template {
  Body body;
};

// Throws Error "chat template syntax error at line L, column C: ..." on bad syntax.
std::shared_ptr<const Template> parse_template(const std::string& source);

}  // namespace skiff::jinja

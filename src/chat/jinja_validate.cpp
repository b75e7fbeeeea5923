#include "chat/jinja_validate.h"

#include <fmt/format.h>

#include "base/error.h"
#include "chat/jinja_filters.h"
#include "chat/jinja_tests.h"

namespace skiff::jinja {

namespace {

// `soft`: inside an if statement or conditional expression (jinja2's soft frame).
void check_expr(const Expr* e, bool soft) {
  if (!e) return;
  if (!soft && e->kind == ExprKind::kFilter && !is_jinja2_filter(e->name))
    fail("chat template error at line {}, column {}: No filter named '{}'.", e->pos.line, e->pos.column, e->name);
  if (!soft && e->kind == ExprKind::kTest && !find_test(e->name))
    fail("chat template error at line {}, column {}: No test named '{}'.", e->pos.line, e->pos.column, e->name);
  const bool inner_soft = soft || e->kind == ExprKind::kCondition;
  for (const ExprPtr& arg : e->args) check_expr(arg.get(), inner_soft);
  for (const auto& kw : e->kwargs) check_expr(kw.second.get(), inner_soft);
}

void check_body(const Body& body, bool soft);

void check_node(const Node& n, bool soft) {
  check_expr(n.expr.get(), soft);
  for (const ExprPtr& f : n.filters) check_expr(f.get(), soft);
  for (const ExprPtr& d : n.defaults) check_expr(d.get(), soft);
  switch (n.kind) {
    case NodeKind::kIf:
      for (const auto& [condition, body] : n.branches) {
        check_expr(condition.get(), true);
        check_body(body, true);
      }
      check_body(n.else_body, true);
      return;
    case NodeKind::kFor:  // loops, macros and blocks open frames of their own: not soft
      check_expr(n.condition.get(), false);
      check_body(n.body, false);
      check_body(n.else_body, false);
      return;
    case NodeKind::kScope: check_body(n.body, soft); return;
    default: check_body(n.body, false); return;
  }
}

void check_body(const Body& body, bool soft) {
  for (const NodePtr& n : body) check_node(*n, soft);
}

}  // namespace

void validate_template(const Template& t) { check_body(t.body, false); }

}  // namespace skiff::jinja

// Bad templates and bad values: syntax errors name line:column, runtime
// errors are skiff::Error with jinja2's reason, and hostile templates stop at
// a limit with a clear message instead of crashing, hanging or eating memory.
#include <gtest/gtest.h>

#include "base/error.h"
#include "chat_test_support.h"

namespace skiff {
namespace {

using testing::render_template;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string parse_error(const std::string& source) {
  return error_of([&] { ChatTemplate t(source); });
}

std::string render_error(const std::string& source, const std::string& variables = "{}") {
  return error_of([&] { render_template(source, "[]", variables); });
}

std::string render_with_limits(const std::string& source, const ChatTemplateLimits& limits) {
  ChatTemplateInputs inputs;
  inputs.limits = limits;
  return error_of([&] { ChatTemplate(source).render(inputs); });
}

// jinja2 reports these on the same lines (it gives no column).
TEST(JinjaSyntaxErrors, NameLineAndColumn) {
  EXPECT_EQ(parse_error("a\n{% if %}"),
            "chat template syntax error at line 2, column 7: expected an expression, got '%}'");
  EXPECT_EQ(parse_error("x\n\n  {{ (1 + }}"), "chat template syntax error at line 3, column 11: unexpected '}', expected ')'");
  EXPECT_EQ(parse_error("{% foo %}"), "chat template syntax error at line 1, column 4: encountered unknown or unsupported tag 'foo'");
  EXPECT_EQ(parse_error("{% if x %}never closed"),
            "chat template syntax error at line 1, column 23: unexpected end of template, expected 'elif' or 'else' or 'endif'");
  EXPECT_EQ(parse_error("{{ 'open"), "chat template syntax error at line 1, column 4: unexpected end of string");
  EXPECT_EQ(parse_error("{# never closed"), "chat template syntax error at line 1, column 3: missing end of comment tag");
  EXPECT_EQ(parse_error("{% for x in y %}{% endif %}"),
            "chat template syntax error at line 1, column 20: encountered unknown or unsupported tag 'endif'");
  EXPECT_EQ(parse_error("{{ 1 $ 2 }}"), "chat template syntax error at line 1, column 6: unexpected char '$'");
  EXPECT_EQ(parse_error("{% break %}"), "chat template syntax error at line 1, column 4: 'break' outside of a loop");
}

// As jinja2: a filter it lacks fails when the template compiles, unless it is
// inside an if block (then only if that branch runs).
TEST(JinjaSyntaxErrors, UnknownFiltersAndTests) {
  EXPECT_EQ(parse_error("{{ 1|nope }}"), "chat template error at line 1, column 5: No filter named 'nope'.");
  EXPECT_EQ(parse_error("{% for x in y %}{{ x is nope }}{% endfor %}"),
            "chat template error at line 1, column 22: No test named 'nope'.");
  EXPECT_EQ(render_template("{% if false %}{{ 1|nope }}{% endif %}ok"), "ok");
  EXPECT_EQ(render_error("{% if true %}{{ 1|nope }}{% endif %}"),
            "chat template error at line 1, column 18: No filter named 'nope' found.");
}

TEST(JinjaRuntimeErrors, RaiseExceptionCarriesTheMessageAlone) {
  EXPECT_EQ(render_error("{{ raise_exception('Only user and assistant roles are supported!') }}"),
            "Only user and assistant roles are supported!");
}

TEST(JinjaRuntimeErrors, UndefinedValuesFailWhereJinja2Fails) {
  EXPECT_EQ(render_error("{{ u.a }}"), "chat template error at line 1, column 5: 'u' is undefined");
  EXPECT_EQ(render_error("{{ d.zz.a }}", R"({"d": {}})"),
            "chat template error at line 1, column 8: 'dict object' has no attribute 'zz'");
  EXPECT_EQ(render_error("{{ u + 'a' }}"), "chat template error at line 1, column 6: 'u' is undefined");
  EXPECT_EQ(render_error("{{ u() }}"), "chat template error at line 1, column 5: 'u' is undefined");
  EXPECT_EQ(render_error("{{ u|int }}"), "chat template error at line 1, column 5: 'u' is undefined");
}

TEST(JinjaRuntimeErrors, TypeErrorsAsPythonWordsThem) {
  EXPECT_EQ(render_error("{{ 1 + 'a' }}"),
            "chat template error at line 1, column 6: unsupported operand type(s) for +: 'int' and 'str'");
  EXPECT_EQ(render_error("{{ 'a' + 1 }}"), "chat template error at line 1, column 8: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(render_error("{{ 1 / 0 }}"), "chat template error at line 1, column 6: division by zero");
  EXPECT_EQ(render_error("{% for x in none %}{% endfor %}"), "'NoneType' object is not iterable");
  EXPECT_EQ(render_error("{{ [1]|map('upper')|length }}"),
            "chat template error at line 1, column 20: object of type 'generator' has no len()");
  EXPECT_EQ(render_error("{{ 2 ** 64 }}"),
            "chat template error at line 1, column 6: integer overflow (skiff's template integers are 64-bit)");
}

TEST(JinjaRuntimeErrors, TheSandboxRefusesMutationAndPrivateNames) {
  EXPECT_EQ(render_error("{% set xs = [] %}{{ xs.append(1) }}"),
            "chat template error at line 1, column 30: access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_EQ(render_error("{{ ''.__class__() }}"),
            "chat template error at line 1, column 16: access to attribute '__class__' of 'str' object is unsafe.");
  EXPECT_NE(render_error("{% set ns = namespace() %}{% set ns._x = 1 %}").find("underscore-prefixed"), std::string::npos);
  EXPECT_EQ(render_error("{{ range(100001)|length }}"),
            "chat template error at line 1, column 9: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  EXPECT_EQ(render_error("{% set x = 1 %}{% set x.a = 2 %}"), "cannot assign attribute on non-namespace object");
}

TEST(JinjaLimits, RecursiveMacroStopsAtTheMacroDepth) {
  const std::string error = render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(error.find("macro calls nest deeper than 100"), std::string::npos) << error;
}

TEST(JinjaLimits, DeepNestingIsRefused) {
  EXPECT_NE(parse_error("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}")
                .find("nests deeper than 200 levels"),
            std::string::npos);
  std::string blocks;
  for (int i = 0; i < 5000; ++i) blocks += "{% if true %}";
  EXPECT_NE(parse_error(blocks).find("nests deeper than 200 levels"), std::string::npos);
  EXPECT_NE(parse_error("{{ " + std::string(5000, '-') + "1 }}").find("nests deeper"), std::string::npos);
}

TEST(JinjaLimits, EndlessLoopsStopAtTheIterationLimit) {
  const std::string endless =
      "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}"
      "{% endfor %}{% endfor %}{% endfor %}";
  // A lowered limit: the default's 2,000,000 empty iterations took 26 s under ASan.
  ChatTemplateLimits limits;
  limits.max_loop_iterations = 50'000;
  const std::string error = render_with_limits(endless, limits);
  EXPECT_NE(error.find("loops exceed 50000 iterations"), std::string::npos) << error;
}

TEST(JinjaLimits, StepsAreBounded) {
  ChatTemplateLimits limits;
  limits.max_steps = 10000;
  const std::string error =
      render_with_limits("{% for i in range(5000) %}{% if i > 1 and i < 10 or i == 3 %}{% endif %}{% endfor %}", limits);
  EXPECT_NE(error.find("exceeds 10000 steps"), std::string::npos) << error;
}

TEST(JinjaLimits, OutputAndStringsAreBounded) {
  ChatTemplateLimits limits;
  limits.max_output_bytes = 1 << 20;
  EXPECT_NE(render_with_limits("{% for i in range(10000) %}{{ 'x' * 1000 }}{% endfor %}", limits)
                .find("the output exceeds 1048576 bytes"),
            std::string::npos);
  EXPECT_NE(render_with_limits("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                               limits)
                .find("a string would exceed 1048576 bytes"),
            std::string::npos);
  EXPECT_NE(render_with_limits("{{ 'ab' * 9000000000000000000 }}", limits).find("a string would exceed"), std::string::npos);
  EXPECT_NE(render_with_limits("{{ ([1] * 100000) * 100000 }}", limits).find("a list would exceed"), std::string::npos);
}

// Shared sub-lists make a value whose printed form doubles with each level.
TEST(JinjaLimits, ExponentialValuesStopWhilePrinting) {
  ChatTemplateLimits limits;
  limits.max_output_bytes = 1 << 20;
  const std::string error = render_with_limits(
      "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
      limits);
  EXPECT_NE(error.find("exceed"), std::string::npos) << error;
  EXPECT_NE(render_error("{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}"
                         "{{ ns.l == ns.l }}")
                .find("steps"),
            std::string::npos);
}

TEST(JinjaLimits, ValuesNestAtMost256Deep) {
  EXPECT_NE(render_error("{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}")
                .find("a value nests deeper than 256 levels"),
            std::string::npos);
}

// A namespace holding itself: printing stops at a depth, and the render frees it.
TEST(JinjaLimits, SelfReferenceDoesNotLoop) {
  EXPECT_NE(render_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}").find("nests deeper"), std::string::npos);
  EXPECT_EQ(render_template("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me.me is defined }}"), "True");
}

}  // namespace
}  // namespace skiff

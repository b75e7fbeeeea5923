// The JSON text of each type, as grammar rules and lexemes. Whitespace (ws)
// may follow every token but the last; containers place it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "grammar/json_lexemes.h"
#include "grammar/json_schema_compiler.h"

namespace skiff::grammar {

uint64_t count_field(const ojson& schema, const char* key, uint64_t fallback, const std::string& path) {
  if (!has(schema, key)) return fallback;
  const ojson& v = schema[key];
  bool integral = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0) ||
                  (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == std::floor(v.get<double>()) &&
                   v.get<double>() < 1e18);
  if (!integral) fail("JSON Schema: '{}' at {} must be a non-negative integer", key, path);
  return v.is_number_float() ? static_cast<uint64_t>(v.get<double>()) : v.get<uint64_t>();
}

RegexNode search_regex(const std::string& pattern, const std::string& path) {
  try {
    return regex_search(pattern);
  } catch (const Error& e) {
    fail("JSON Schema: 'pattern' at {}: {}", path, e.what());
  }
}

namespace {

std::vector<std::string> patterns_of(const ojson& schema) {
  std::vector<std::string> out;
  if (!has(schema, "pattern")) return out;
  const ojson& p = schema["pattern"];  // a merged allOf may carry several
  if (p.is_string()) out.push_back(p.get<std::string>());
  else if (p.is_array())
    for (const ojson& one : p) out.push_back(one.is_string() ? one.get<std::string>() : one.dump());
  else fail("JSON Schema: 'pattern' must be a string, got {}", p.dump());
  return out;
}

std::string number_text(const ojson& v, const char* key, const std::string& path) {
  if (!v.is_number()) fail("JSON Schema: '{}' at {} must be a number", key, path);
  std::string text = v.dump();
  if (text.find_first_of("eE") != std::string::npos) {
    // A float JSON prints with an exponent; write it out in plain decimal when it is integral.
    double d = v.get<double>();
    if (d != std::floor(d) || std::fabs(d) > 1e18) fail("JSON Schema: '{}' at {}: bound {} is out of range", key, path, text);
    text = fmt::format("{:.0f}", d);
  }
  return text;
}

}  // namespace

Symbol SchemaCompiler::json_string_of(const RegexNode& content, const std::string& key) {
  return builder_.lexeme("str\x01" + key, {&content}, {}, true);
}

Symbol SchemaCompiler::separated_list(Symbol item, const std::string& name) {
  int32_t list = builder_.add_rule(name);
  builder_.add_production(list, {item});
  builder_.add_production(list, {list, builder_.literal(","), ws_, item});
  return list;
}

std::vector<RegexNode> SchemaCompiler::string_parts(const ojson& schema, const std::string& path, std::string& key) {
  uint64_t min = count_field(schema, "minLength", 0, path);
  uint64_t max = count_field(schema, "maxLength", RegexNode::kUnbounded, path);
  if (min > 10000 || (max != RegexNode::kUnbounded && max > 10000))
    refuse(min > 10000 ? "minLength" : "maxLength", path, "over 10000 is not supported");
  std::vector<RegexNode> parts;
  parts.push_back(RegexNode::repeat(RegexNode::of_chars(CharSet::any()), static_cast<uint32_t>(min),
                                    max == RegexNode::kUnbounded ? RegexNode::kUnbounded : static_cast<uint32_t>(max)));
  key = fmt::format("{},{}", min, max);
  for (const std::string& p : patterns_of(schema)) {
    parts.push_back(search_regex(p, path));
    key += "\x01p" + p;
  }
  if (has(schema, "format") && schema["format"].is_string()) {
    std::string format = schema["format"].get<std::string>();
    if (std::optional<std::string> re = format_regex(format)) {
      parts.push_back(regex_fullmatch(*re));
      if (format == "hostname") parts.push_back(RegexNode::repeat(RegexNode::of_chars(CharSet::any()), 1, 253));
      key += "\x01" "f" + format;
    }
  }
  return parts;
}

Symbol SchemaCompiler::string_value(const ojson& schema, const std::string& path) {
  std::string key;
  std::vector<RegexNode> parts = string_parts(schema, path, key);
  std::vector<const RegexNode*> required;
  for (const RegexNode& p : parts) required.push_back(&p);
  return builder_.lexeme("str\x01" + key, required, {}, true);
}

Symbol SchemaCompiler::number_value(const ojson& schema, bool integer, const std::string& path) {
  std::vector<std::string> regexes{json_number_regex(integer)};
  auto bound = [&](const char* key, bool lower, bool exclusive) {
    if (!has(schema, key)) return;
    const ojson& v = schema[key];
    if (v.is_boolean()) return;  // draft 4's exclusive flags, read with minimum/maximum
    NumberBound b{number_text(v, key, path), exclusive};
    regexes.push_back(lower ? at_least_regex(b) : at_most_regex(b));
  };
  bool exclusive_min = draft4_ && has(schema, "exclusiveMinimum") && schema["exclusiveMinimum"] == true;
  bool exclusive_max = draft4_ && has(schema, "exclusiveMaximum") && schema["exclusiveMaximum"] == true;
  bound("minimum", true, exclusive_min);
  bound("maximum", false, exclusive_max);
  bound("exclusiveMinimum", true, true);
  bound("exclusiveMaximum", false, true);
  std::vector<RegexNode> parts;
  std::string key = "num";
  for (const std::string& r : regexes) {
    parts.push_back(regex_fullmatch(r));
    key += "\x01" + r;
  }
  std::vector<const RegexNode*> required;
  for (const RegexNode& p : parts) required.push_back(&p);
  return builder_.lexeme(key, required, {}, false);
}

std::optional<Symbol> SchemaCompiler::array_value(const ojson& schema, const std::string& path, int depth) {
  static const ojson kTrue = true;
  std::vector<const ojson*> prefix;
  const ojson* rest = &kTrue;
  const char* prefix_key = legacy_ ? "items" : "prefixItems";
  if (has(schema, prefix_key) && schema[prefix_key].is_array()) {
    for (const ojson& s : schema[prefix_key]) prefix.push_back(&s);
    const char* rest_key = legacy_ ? "additionalItems" : "items";
    if (has(schema, rest_key)) rest = &schema[rest_key];
  } else if (has(schema, "items")) {
    rest = &schema["items"];
  }
  // unevaluatedItems holds for the items past the prefix when items does not
  // (merge_in); items that contains evaluates meet it too (stricter).
  if (!legacy_ && !has(schema, "items") && has(schema, "unevaluatedItems")) rest = &schema["unevaluatedItems"];
  uint64_t min = count_field(schema, "minItems", 0, path);
  uint64_t max = count_field(schema, "maxItems", UINT64_MAX, path);
  if (has(schema, "contains")) {
    // minContains and maxContains came in 2019-09; before, contains asks for one.
    uint64_t at_least = legacy_ ? 1 : count_field(schema, "minContains", 1, path);
    if (!legacy_ && has(schema, "maxContains"))
      refuse("maxContains", path, "cannot be enforced (items that fail 'contains' would have to be told apart)");
    if (at_least > 0) {
      if (!prefix.empty() || max != UINT64_MAX || min > at_least)
        refuse("contains", path, "beside 'prefixItems', 'maxItems' or a larger 'minItems' is not supported");
      return array_containing(*rest, schema["contains"], at_least, path, depth);
    }
  }
  std::vector<Symbol> item;  // item[i]: the i-th element and its trailing ws
  for (size_t i = 0; i < prefix.size() && i < max; ++i) {
    std::optional<Symbol> v = compile_value(*prefix[i], child_path(path, fmt::format("{}/{}", prefix_key, i)), depth + 1);
    if (!v) {
      max = i;
      break;
    }
    item.push_back(builder_.rule_of(path + "/item", {{*v, ws_}}));
  }
  std::optional<Symbol> rest_item;
  if (item.size() == prefix.size()) {
    if (std::optional<Symbol> v = compile_value(*rest, child_path(path, "items"), depth + 1))
      rest_item = builder_.rule_of(path + "/items", {{*v, ws_}});
  }
  if (!rest_item) max = std::min<uint64_t>(max, item.size());
  if (min > max) return impossible(fmt::format("'minItems' at {} asks for more items than the schema allows", path));
  uint64_t unrolled = std::max<uint64_t>(item.size(), min);
  if (max != UINT64_MAX) unrolled = max;
  if (unrolled > kMaxUnrolled) refuse(max != UINT64_MAX ? "maxItems" : "minItems", path, fmt::format("over {} is not supported", kMaxUnrolled));

  Symbol comma = builder_.literal(",");
  // tail[i]: i elements written; the rest of the array up to its "]".
  std::vector<Symbol> tail(unrolled + 1);
  for (uint64_t i = unrolled + 1; i-- > 0;) {
    tail[i] = builder_.add_rule(path + "/tail");
    if (i >= min) builder_.add_production(tail[i], {});
    std::vector<Symbol> sep = i == 0 ? std::vector<Symbol>{} : std::vector<Symbol>{comma, ws_};
    if (i < unrolled) {
      std::vector<Symbol> body = sep;
      body.push_back(i < item.size() ? item[i] : *rest_item);
      body.push_back(tail[i + 1]);
      builder_.add_production(tail[i], std::move(body));
    } else if (max == UINT64_MAX && rest_item) {
      sep.push_back(separated_list(*rest_item, path + "/more"));
      builder_.add_production(tail[i], std::move(sep));
    }
  }
  return builder_.rule_of(path + "/array", {{builder_.literal("["), ws_, tail[0], builder_.literal("]")}});
}

// Arrays whose items all meet `items` and at least `at_least` of them meet
// `contains` too: items, then one of those, up to the count; after it,
// any items. A grammar with choices (which item counts) is still exact.
std::optional<Symbol> SchemaCompiler::array_containing(const ojson& items, const ojson& contains, uint64_t at_least,
                                                       const std::string& path, int depth) {
  if (at_least > kMaxUnrolled) refuse("minContains", path, fmt::format("over {} is not supported", kMaxUnrolled));
  std::string contains_path = child_path(path, "contains");
  std::optional<Symbol> counted =
      compile_value(own(merge_schemas(root_, items, contains, contains_path, *merge_budget_)), contains_path, depth + 1);
  if (!counted) return impossible(fmt::format("'contains' at {}: no item can match it", path));
  Symbol counted_item = builder_.rule_of(path + "/contained", {{*counted, ws_}});
  std::optional<Symbol> others;  // one or more items, any of them
  if (std::optional<Symbol> v = compile_value(items, child_path(path, "items"), depth + 1))
    others = separated_list(builder_.rule_of(path + "/items", {{*v, ws_}}), path + "/more");
  Symbol comma = builder_.literal(",");
  // after[j]: j counted items written, the last of them just now.
  std::vector<Symbol> after(at_least + 1);
  after[at_least] = builder_.add_rule(path + "/after");
  builder_.add_production(after[at_least], {});
  if (others) builder_.add_production(after[at_least], {comma, ws_, *others});
  for (uint64_t j = at_least; j-- > 1;) {
    after[j] = builder_.add_rule(path + "/after");
    builder_.add_production(after[j], {comma, ws_, counted_item, after[j + 1]});
    if (others) builder_.add_production(after[j], {comma, ws_, *others, comma, ws_, counted_item, after[j + 1]});
  }
  std::vector<std::vector<Symbol>> first{{counted_item, after[1]}};
  if (others) first.push_back({*others, comma, ws_, counted_item, after[1]});
  Symbol body = builder_.rule_of(path + "/containing", std::move(first));
  return builder_.rule_of(path + "/array", {{builder_.literal("["), ws_, body, builder_.literal("]")}});
}

Symbol SchemaCompiler::literal_value(const ojson& v, int depth) {
  if (depth > kMaxDepth) fail("JSON Schema: a const or enum value nested deeper than {} levels", kMaxDepth);
  if (v.is_string()) return builder_.literal(v.dump());  // canonical spelling, as listed names
  if (v.is_object()) {
    std::vector<Symbol> body{builder_.literal("{"), ws_};
    bool first = true;
    for (auto& [key, value] : v.items()) {
      if (!first) body.insert(body.end(), {builder_.literal(","), ws_});
      first = false;
      body.insert(body.end(), {builder_.literal(ojson(key).dump()), ws_, builder_.literal(":"), ws_,
                               literal_value(value, depth + 1), ws_});
    }
    body.push_back(builder_.literal("}"));
    return builder_.rule_of("const", {body});
  }
  if (v.is_array()) {
    std::vector<Symbol> body{builder_.literal("["), ws_};
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) body.insert(body.end(), {builder_.literal(","), ws_});
      body.insert(body.end(), {literal_value(v[i], depth + 1), ws_});
    }
    body.push_back(builder_.literal("]"));
    return builder_.rule_of("const", {body});
  }
  if (v.is_number()) return number_literal(v);
  return builder_.literal(v.dump());
}

// JSON Schema compares numbers by value, so a const 1 is also 1.0 and 1.00:
// every plain-decimal spelling of the value (an exponent only as written).
Symbol SchemaCompiler::number_literal(const ojson& v) {
  std::string text = v.dump();
  if (text.find_first_of("eE") != std::string::npos) {
    double d = v.get<double>();
    if (d != std::floor(d) || std::fabs(d) > 1e18) return builder_.literal(text);
    text = fmt::format("{:.0f}", d);
  }
  RegexNode at_least = regex_fullmatch(at_least_regex({text, false}));
  RegexNode at_most = regex_fullmatch(at_most_regex({text, false}));
  return builder_.lexeme("num\x01=" + text, {&at_least, &at_most}, {}, false);
}

Symbol SchemaCompiler::any_value() {
  if (any_value_) return *any_value_;
  int32_t value = builder_.add_rule("value");
  any_value_ = value;
  static const RegexNode kAnyText = RegexNode::repeat(RegexNode::of_chars(CharSet::any()), 0, RegexNode::kUnbounded);
  Symbol string = json_string_of(kAnyText, "any");
  Symbol number = builder_.regex(regex_fullmatch(json_number_regex(false)), TextEncoding::Utf8, "number");
  Symbol item = builder_.rule_of("element", {{value, ws_}});
  Symbol elements = separated_list(item, "elements");
  Symbol array = builder_.rule_of("array", {{builder_.literal("["), ws_, builder_.literal("]")},
                                            {builder_.literal("["), ws_, elements, builder_.literal("]")}});
  for (Symbol s : {any_object(), array, string, number, builder_.literal("true"), builder_.literal("false"),
                   builder_.literal("null")})
    builder_.add_production(value, {s});
  return value;
}
}  // namespace skiff::grammar

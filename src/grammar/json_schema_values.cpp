// The JSON text of each type, as grammar rules and lexemes. Whitespace (ws)
// may follow every token but the last; containers place it.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "grammar/json_lexemes.h"
#include "grammar/regex_match.h"
#include "grammar/json_schema_compiler.h"

namespace skiff::grammar {
namespace {

uint64_t count_field(const ojson& schema, const char* key, uint64_t fallback, const std::string& path) {
  if (!has(schema, key)) return fallback;
  const ojson& v = schema[key];
  bool integral = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0) ||
                  (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == std::floor(v.get<double>()) &&
                   v.get<double>() < 1e18);
  if (!integral) fail("JSON Schema: '{}' at {} must be a non-negative integer", key, path);
  return v.is_number_float() ? static_cast<uint64_t>(v.get<double>()) : v.get<uint64_t>();
}

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

RegexNode search_regex(const std::string& pattern, const std::string& path) {
  try {
    return regex_search(pattern);
  } catch (const Error& e) {
    fail("JSON Schema: 'pattern' at {}: {}", path, e.what());
  }
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

Symbol SchemaCompiler::string_value(const ojson& schema, const std::string& path) {
  uint64_t min = count_field(schema, "minLength", 0, path);
  uint64_t max = count_field(schema, "maxLength", RegexNode::kUnbounded, path);
  if (min > 10000 || (max != RegexNode::kUnbounded && max > 10000))
    refuse(min > 10000 ? "minLength" : "maxLength", path, "over 10000 is not supported");
  std::vector<RegexNode> parts;
  parts.push_back(RegexNode::repeat(RegexNode::of_chars(CharSet::any()), static_cast<uint32_t>(min),
                                    max == RegexNode::kUnbounded ? RegexNode::kUnbounded : static_cast<uint32_t>(max)));
  std::string key = fmt::format("{},{}", min, max);
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

std::optional<Symbol> SchemaCompiler::object_value(const ojson& schema, const std::string& path, int depth) {
  static const ojson kTrue = true;
  const ojson empty = ojson::object();
  const ojson& properties = has(schema, "properties") ? schema["properties"] : empty;
  const ojson& patterns = has(schema, "patternProperties") ? schema["patternProperties"] : empty;
  const ojson& additional = has(schema, "additionalProperties") ? schema["additionalProperties"] : kTrue;
  if (!properties.is_object() || !patterns.is_object())
    fail("JSON Schema: 'properties' and 'patternProperties' at {} must be objects", path);
  std::set<std::string> required;
  if (has(schema, "required")) {
    if (!schema["required"].is_array()) fail("JSON Schema: 'required' at {} must be an array", path);
    for (const ojson& name : schema["required"]) {
      if (!name.is_string()) fail("JSON Schema: 'required' at {} must list strings", path);
      required.insert(name.get<std::string>());
    }
  }
  std::vector<RegexNode> pattern_regexes;
  for (auto& [pattern, sub] : patterns.items()) pattern_regexes.push_back(search_regex(pattern, path));

  // The listed properties in the schema's order, then required ones it does not list.
  struct Member {
    Symbol symbol;
    bool required;
  };
  std::vector<Member> members;
  std::vector<RegexNode> listed_names;
  auto add_member = [&](const std::string& name, const ojson* sub) -> bool {
    std::string sub_path = child_path(path, "properties/" + name);
    // A listed name that a pattern also matches must satisfy both schemas.
    size_t k = 0;
    std::optional<ojson> merged;
    for (auto& [pattern, pattern_schema] : patterns.items()) {
      if (regex_matches(pattern_regexes[k++], name))
        merged = merge_schemas(root_, merged ? *merged : *sub, pattern_schema, sub_path);
    }
    if (!sub && !merged) sub = &additional;
    if (merged) sub = &own(std::move(*merged));
    std::optional<Symbol> value = compile_value(*sub, sub_path, depth + 1);
    bool is_required = required.count(name) > 0;
    listed_names.push_back(RegexNode::literal(name));
    if (!value) return !is_required;  // never present; impossible if required
    // The listed name in its one canonical spelling: other spellings match no
    // key lexeme (the others exclude all of them), and the grammar can jump forward over it.
    Symbol key = builder_.literal(ojson(name).dump());
    Symbol member = builder_.rule_of(sub_path, {{key, ws_, builder_.literal(":"), ws_, *value, ws_}});
    members.push_back({member, is_required});
    return true;
  };
  for (auto& [name, sub] : properties.items())
    if (!add_member(name, &sub)) return std::nullopt;
  for (const std::string& name : required)
    if (!properties.contains(name) && !add_member(name, nullptr)) return std::nullopt;

  // Other properties: each pattern's keys (matching no other pattern and no
  // listed name), then the keys no pattern matches.
  std::vector<std::vector<Symbol>> extra;
  auto add_extra = [&](const RegexNode& key_regex, std::vector<const RegexNode*> excluded, const ojson& sub,
                       const std::string& sub_path, const std::string& key_name) {
    std::optional<Symbol> value = compile_value(sub, sub_path, depth + 1);
    if (!value) return;
    for (const RegexNode& n : listed_names) excluded.push_back(&n);
    Symbol key = builder_.lexeme(fmt::format("{}\x01{}", path, key_name), {&key_regex}, excluded, true);
    extra.push_back({key, ws_, builder_.literal(":"), ws_, *value, ws_});
  };
  size_t k = 0;
  for (auto& [pattern, sub] : patterns.items()) {
    std::vector<const RegexNode*> others;
    for (size_t j = 0; j < pattern_regexes.size(); ++j)
      if (j != k) others.push_back(&pattern_regexes[j]);
    add_extra(pattern_regexes[k], others, sub, child_path(path, "patternProperties/" + pattern), "p" + pattern);
    ++k;
  }
  static const RegexNode kAnyText = RegexNode::repeat(RegexNode::of_chars(CharSet::any()), 0, RegexNode::kUnbounded);
  std::vector<const RegexNode*> all_patterns;
  for (const RegexNode& r : pattern_regexes) all_patterns.push_back(&r);
  add_extra(kAnyText, all_patterns, additional, child_path(path, "additionalProperties"), "additional");

  // first[i]: nothing written yet, members i.. to come; rest[i]: something written.
  Symbol comma = builder_.literal(",");
  std::optional<Symbol> extra_list;
  if (!extra.empty()) extra_list = separated_list(builder_.rule_of(path + "/extra", std::move(extra)), path + "/extras");
  size_t n = members.size();
  std::vector<Symbol> first(n + 1), rest(n + 1);
  first[n] = builder_.add_rule(path + "/first");
  rest[n] = builder_.add_rule(path + "/rest");
  builder_.add_production(first[n], {});
  builder_.add_production(rest[n], {});
  if (extra_list) {
    builder_.add_production(first[n], {*extra_list});
    builder_.add_production(rest[n], {comma, ws_, *extra_list});
  }
  for (size_t i = n; i-- > 0;) {
    first[i] = builder_.add_rule(path + "/first");
    rest[i] = builder_.add_rule(path + "/rest");
    builder_.add_production(first[i], {members[i].symbol, rest[i + 1]});
    builder_.add_production(rest[i], {comma, ws_, members[i].symbol, rest[i + 1]});
    if (!members[i].required) {
      builder_.add_production(first[i], {first[i + 1]});
      builder_.add_production(rest[i], {rest[i + 1]});
    }
  }
  return builder_.rule_of(path + "/object", {{builder_.literal("{"), ws_, first[0], builder_.literal("}")}});
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
  uint64_t min = count_field(schema, "minItems", 0, path);
  uint64_t max = count_field(schema, "maxItems", UINT64_MAX, path);
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
  if (min > max) return std::nullopt;
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
  return builder_.literal(v.dump());
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

Symbol SchemaCompiler::any_object() {
  if (any_object_) return *any_object_;
  static const RegexNode kAnyText = RegexNode::repeat(RegexNode::of_chars(CharSet::any()), 0, RegexNode::kUnbounded);
  int32_t object = builder_.add_rule("object");
  any_object_ = object;
  Symbol member = builder_.rule_of("member", {{json_string_of(kAnyText, "any"), ws_, builder_.literal(":"), ws_,
                                               any_value(), ws_}});
  Symbol members = separated_list(member, "members");
  builder_.add_production(object, {builder_.literal("{"), ws_, builder_.literal("}")});
  builder_.add_production(object, {builder_.literal("{"), ws_, members, builder_.literal("}")});
  return object;
}

}  // namespace skiff::grammar

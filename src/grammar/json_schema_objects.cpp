// JSON objects: the listed properties in the schema's order (then the
// required ones it does not list, in the order of `required`), then any
// others, each under the schemas of the patterns its name matches or under
// additionalProperties; their names under propertyNames, their number under
// minProperties and maxProperties.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "grammar/json_schema_compiler.h"
#include "grammar/regex_match.h"

namespace skiff::grammar {
namespace {

// Keywords about other types than strings, which a property name never is.
const std::set<std::string, std::less<>> kNotAboutStrings = {
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "items", "prefixItems",
    "additionalItems", "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems",
    "properties", "patternProperties", "additionalProperties", "required", "minProperties", "maxProperties",
    "propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedItems",
    "unevaluatedProperties"};

// Past this many patterns, a name that matches several is never accepted
// (their subsets, each a key lexeme of its own, would be too many).
constexpr size_t kMaxPatternSubsets = 4;
// Object grammars count their members up to this (min/maxProperties).
constexpr uint64_t kMaxCountedRules = 100000;

RegexNode matches_nothing() { return RegexNode::of_chars(CharSet{}); }

}  // namespace

// What propertyNames asks of a name: each part matches it (none: any name).
std::vector<RegexNode> SchemaCompiler::name_parts(const ojson& names, const std::string& path, int depth) {
  if (depth > kMaxDepth) fail("JSON Schema: 'propertyNames' at {} nests too deeply", path);
  std::vector<RegexNode> parts;
  if (names.is_boolean()) {
    if (!names.get<bool>()) parts.push_back(matches_nothing());
    return parts;
  }
  if (!names.is_object()) fail("JSON Schema: 'propertyNames' at {} must be a schema", path);
  for (auto& [key, value] : names.items()) {
    if (is_annotation_keyword(key) || kNotAboutStrings.count(key) || key == "minLength" || key == "maxLength" ||
        key == "pattern" || key == "format")
      continue;
    if (key == "type") {
      std::vector<std::string> types = types_of(names, path);
      if (std::find(types.begin(), types.end(), "string") == types.end()) parts.push_back(matches_nothing());
    } else if (key == "enum" || key == "const") {
      std::vector<RegexNode> names_listed;
      for (const ojson& v : key == "enum" && value.is_array() ? value : ojson::array({value}))
        if (v.is_string()) names_listed.push_back(RegexNode::literal(v.get<std::string>()));
      parts.push_back(names_listed.empty() ? matches_nothing() : RegexNode::alt(std::move(names_listed)));
    } else if (key == "$ref" && value.is_string()) {
      const ojson& target = resolve_schema_ref(root_, value.get<std::string>(), path);
      for (RegexNode& p : name_parts(target, path, depth + 1)) parts.push_back(std::move(p));
    } else if (key == "allOf" && value.is_array()) {
      for (const ojson& one : value)
        for (RegexNode& p : name_parts(one, path, depth + 1)) parts.push_back(std::move(p));
    } else {
      refuse("propertyNames", path, fmt::format("with '{}' is not supported", key));
    }
  }
  std::string key;
  for (RegexNode& p : string_parts(names, path, key)) parts.push_back(std::move(p));
  return parts;
}

std::optional<Symbol> SchemaCompiler::object_value(const ojson& schema, const std::string& path, int depth) {
  static const ojson kTrue = true;
  const ojson empty = ojson::object();
  const ojson& properties = has(schema, "properties") ? schema["properties"] : empty;
  const ojson& patterns = has(schema, "patternProperties") ? schema["patternProperties"] : empty;
  // unevaluatedProperties holds for the names additionalProperties would
  // (json_schema.cpp's merge_in); beside it, it has nothing left.
  const ojson& additional = has(schema, "additionalProperties")    ? schema["additionalProperties"]
                            : has(schema, "unevaluatedProperties") ? schema["unevaluatedProperties"]
                                                                   : kTrue;
  if (!properties.is_object() || !patterns.is_object())
    fail("JSON Schema: 'properties' and 'patternProperties' at {} must be objects", path);
  std::vector<std::string> required;
  if (has(schema, "required")) {
    if (!schema["required"].is_array()) fail("JSON Schema: 'required' at {} must be an array", path);
    for (const ojson& name : schema["required"]) {
      if (!name.is_string()) fail("JSON Schema: 'required' at {} must list strings", path);
      if (std::find(required.begin(), required.end(), name.get<std::string>()) == required.end())
        required.push_back(name.get<std::string>());
    }
  }
  uint64_t min_members = count_field(schema, "minProperties", 0, path);
  uint64_t max_members = count_field(schema, "maxProperties", UINT64_MAX, path);
  std::vector<RegexNode> name_rules;
  if (has(schema, "propertyNames"))
    name_rules = name_parts(schema["propertyNames"], child_path(path, "propertyNames"), depth + 1);
  std::vector<RegexNode> pattern_regexes;
  for (auto& [pattern, sub] : patterns.items()) pattern_regexes.push_back(search_regex(pattern, path));

  // The listed properties in the schema's order, then required ones it does not list.
  std::vector<std::pair<Symbol, bool>> members;  // and whether required
  std::vector<RegexNode> listed_names;
  auto add_member = [&](const std::string& name, const ojson* sub) -> bool {
    std::string sub_path = child_path(path, "properties/" + name);
    listed_names.push_back(RegexNode::literal(name));
    bool is_required = std::find(required.begin(), required.end(), name) != required.end();
    for (const RegexNode& rule : name_rules) {
      if (regex_matches(rule, name)) continue;
      if (is_required) impossible(fmt::format("'required' property '{}' at {} fails 'propertyNames'", name, path));
      return !is_required;
    }
    // A listed name that a pattern also matches must satisfy both schemas.
    size_t k = 0;
    std::optional<ojson> merged;
    for (auto& [pattern, pattern_schema] : patterns.items()) {
      if (regex_matches(pattern_regexes[k++], name))
        merged =
            merge_schemas(root_, merged ? *merged : sub ? *sub : kTrue, pattern_schema, sub_path, *merge_budget_);
    }
    if (!sub && !merged) sub = &additional;
    if (merged) sub = &own(std::move(*merged));
    std::optional<Symbol> value = compile_value(*sub, sub_path, depth + 1);
    if (!value) {  // never present; impossible if required
      if (is_required) impossible(fmt::format("'required' property '{}' at {} can have no value", name, path));
      return !is_required;
    }
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

  // Other properties: for each set of patterns, the names matching just
  // those (and no listed name) under all their schemas; then the names no
  // pattern matches, under additionalProperties.
  const RegexNode listed = listed_names.empty() ? matches_nothing() : RegexNode::alt(listed_names);
  const int id = n_objects_++;
  std::vector<std::vector<Symbol>> extra;
  auto add_extra = [&](std::vector<const RegexNode*> key_parts, std::vector<const RegexNode*> excluded,
                       const ojson& sub, const std::string& sub_path, const std::string& key_name) {
    std::optional<Symbol> value = compile_value(sub, sub_path, depth + 1);
    if (!value) return;
    excluded.push_back(&listed);
    for (const RegexNode& rule : name_rules) key_parts.push_back(&rule);
    Symbol key = builder_.lexeme(fmt::format("key{}\x01{}", id, key_name), key_parts, excluded, true);
    extra.push_back({key, ws_, builder_.literal(":"), ws_, *value, ws_});
  };
  std::vector<std::pair<std::string, const ojson*>> pattern_list;
  for (auto& [pattern, sub] : patterns.items()) pattern_list.emplace_back(pattern, &sub);
  size_t n_patterns = pattern_list.size();
  std::vector<std::vector<size_t>> pattern_sets;
  if (n_patterns <= kMaxPatternSubsets) {
    for (uint32_t set = 1; set < (1u << n_patterns); ++set) {
      pattern_sets.emplace_back();
      for (size_t j = 0; j < n_patterns; ++j)
        if (set >> j & 1) pattern_sets.back().push_back(j);
    }
  } else {
    for (size_t j = 0; j < n_patterns; ++j) pattern_sets.push_back({j});
  }
  for (const std::vector<size_t>& set : pattern_sets) {
    std::vector<const RegexNode*> in, out;
    for (size_t j = 0; j < n_patterns; ++j)
      (std::find(set.begin(), set.end(), j) != set.end() ? in : out).push_back(&pattern_regexes[j]);
    std::string sub_path = child_path(path, "patternProperties/" + pattern_list[set[0]].first);
    const ojson* sub = pattern_list[set[0]].second;
    try {
      for (size_t k = 1; k < set.size(); ++k) {
        sub_path += "+" + pattern_list[set[k]].first;
        sub = &own(merge_schemas(root_, *sub, *pattern_list[set[k]].second, sub_path, *merge_budget_));
      }
    } catch (const Error&) {
      if (merge_budget_->left == 0) throw;
      continue;  // names matching patterns whose schemas cannot be combined are never accepted
    }
    add_extra(in, out, *sub, sub_path, fmt::format("p{}", fmt::join(set, ",")));
  }
  static const RegexNode kAnyText = RegexNode::repeat(RegexNode::of_chars(CharSet::any()), 0, RegexNode::kUnbounded);
  std::vector<const RegexNode*> all_patterns;
  for (const RegexNode& r : pattern_regexes) all_patterns.push_back(&r);
  add_extra({&kAnyText}, all_patterns, additional, child_path(path, "additionalProperties"), "additional");
  return object_of_members(members, extra, min_members, max_members, path);
}

// The members in order, then the extras, counted: a rule per (i, c), the
// rest of the object with members i.. to come and c written. Counts go up to
// maxProperties, or, unbounded, to max(minProperties, 1), which then stands
// for "that many or more" (1: whether a comma comes next).
std::optional<Symbol> SchemaCompiler::object_of_members(const std::vector<std::pair<Symbol, bool>>& members,
                                                        std::vector<std::vector<Symbol>>& extra, uint64_t min_members,
                                                        uint64_t max_members, const std::string& path) {
  size_t n = members.size();
  bool has_max = max_members != UINT64_MAX;
  size_t n_required = std::count_if(members.begin(), members.end(), [](auto& m) { return m.second; });
  if (n_required > max_members)
    return impossible(fmt::format("'maxProperties' at {} allows fewer properties than are required", path));
  if (min_members > (extra.empty() ? std::min<uint64_t>(max_members, n) : max_members))
    return impossible(fmt::format("'minProperties' at {} asks for more properties than the schema allows", path));
  // Without extras no more than the n members can come: a bound worth counting
  // to only where maxProperties sets it (counting to n took n^2 rules).
  if (extra.empty() && has_max) max_members = std::min<uint64_t>(max_members, n);
  bool bounded = max_members != UINT64_MAX;
  uint64_t top = bounded ? max_members : std::max<uint64_t>(min_members, 1);
  if (top >= kMaxCountedRules / (n + 2))
    refuse(has_max ? "maxProperties" : "minProperties", path, "is too large to count");
  Symbol comma = builder_.literal(",");
  auto sep = [&](uint64_t c) { return c == 0 ? std::vector<Symbol>{} : std::vector<Symbol>{comma, ws_}; };
  auto next = [&](uint64_t c) { return std::min(c + 1, top); };
  std::vector<Symbol> counted(top + 1);
  std::optional<Symbol> extra_item, extra_list;
  if (!extra.empty()) extra_item = builder_.rule_of(path + "/extra", std::move(extra));
  for (uint64_t c = top + 1; c-- > 0;) {
    counted[c] = builder_.add_rule(path + "/extras");
    if (c >= min_members) builder_.add_production(counted[c], {});
    if (!extra_item || (bounded && c == top)) continue;
    std::vector<Symbol> body = sep(c);
    if (c < top) {
      body.insert(body.end(), {*extra_item, counted[c + 1]});
    } else {
      if (!extra_list) extra_list = separated_list(*extra_item, path + "/more");
      body.push_back(*extra_list);
    }
    builder_.add_production(counted[c], std::move(body));
  }
  for (size_t i = n; i-- > 0;) {
    std::vector<Symbol> before(top + 1);
    for (uint64_t c = 0; c <= top; ++c) {
      before[c] = builder_.add_rule(path + "/members");
      if (!(bounded && c == top)) {
        std::vector<Symbol> body = sep(c);
        body.insert(body.end(), {members[i].first, counted[next(c)]});
        builder_.add_production(before[c], std::move(body));
      }
      if (!members[i].second) builder_.add_production(before[c], {counted[c]});
    }
    counted = std::move(before);
  }
  return builder_.rule_of(path + "/object", {{builder_.literal("{"), ws_, counted[0], builder_.literal("}")}});
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

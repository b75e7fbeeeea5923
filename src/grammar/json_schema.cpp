#include "grammar/json_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "base/error.h"
#include "grammar/json_schema_compiler.h"
#include "grammar/matcher.h"

namespace skiff::grammar {
namespace {

const std::set<std::string, std::less<>> kRefused = {
    "not", "if", "multipleOf", "$dynamicRef", "$recursiveRef"};

const char* const kTypes[] = {"null", "boolean", "object", "array", "string", "number", "integer"};

bool only_annotations(const ojson& schema) {
  for (auto& [key, value] : schema.items())
    if (!is_annotation_keyword(key)) return false;
  return true;
}

const ojson& list_of(const ojson& schema, const char* key, const std::string& path) {
  const ojson& list = schema[key];
  if (!list.is_array() || list.empty()) fail("JSON Schema: '{}' at {} must be a non-empty array", key, path);
  return list;
}

}  // namespace

SchemaCompiler::SchemaCompiler(const ojson& root, Limits limits, JsonGrammarOptions options, int nesting,
                               MergeBudget* merge_budget)
    : root_(nesting == 0 ? resolve_refs_to_pointers(root) : root),
      limits_(limits),
      options_(options),
      nesting_(nesting),
      own_builder_(std::make_unique<GrammarBuilder>(limits)),
      builder_(*own_builder_),
      merge_budget_(merge_budget ? merge_budget : &own_merge_budget_) {
  setup();
}

SchemaCompiler::SchemaCompiler(GrammarBuilder& builder, const ojson& root, JsonGrammarOptions options)
    : root_(resolve_refs_to_pointers(root)), options_(options), nesting_(0), builder_(builder),
      merge_budget_(&own_merge_budget_) {
  setup();
}

void SchemaCompiler::setup() {
  // Between tokens: JSON's whitespace, at most options_.max_whitespace bytes
  // at a time, so that a model cannot run on in blanks forever.
  CharSet blanks{{' ', ' '}, {'\t', '\n'}, {'\r', '\r'}};
  uint32_t most = options_.max_whitespace == JsonGrammarOptions::kAnyWhitespace
                      ? RegexNode::kUnbounded
                      : static_cast<uint32_t>(options_.max_whitespace);
  ws_ = builder_.regex(RegexNode::repeat(RegexNode::of_chars(blanks), 0, most), TextEncoding::Utf8,
                       "ws" + std::to_string(most));
  legacy_ = is_legacy_draft(root_);
  draft4_ = has_schema_uri(root_, "draft-04");
}

Symbol SchemaCompiler::root_value() {
  std::optional<Symbol> value = compile_value(root_, "#", 0);
  if (!value) fail("JSON Schema: no value satisfies the schema: {}", impossible_);
  return *value;
}

std::shared_ptr<const Grammar> SchemaCompiler::compile() {
  Symbol value = root_value();
  return builder_.build(builder_.rule_of("json", {{ws_, value, ws_}}));
}

std::shared_ptr<const Grammar> SchemaCompiler::compile_any_object() {
  Symbol object = any_object();
  return builder_.build(builder_.rule_of("json", {{ws_, object, ws_}}));
}

void SchemaCompiler::refuse(std::string_view key, const std::string& path, std::string_view why) {
  fail("JSON Schema: '{}' at {} {}", key, path, why);
}

const ojson& SchemaCompiler::own(ojson v) {
  owned_.push_back(std::move(v));
  return owned_.back();
}

std::optional<Symbol> SchemaCompiler::compile_value(const ojson& schema, const std::string& path, int depth) {
  if (depth > kMaxDepth) fail("JSON Schema: nested deeper than {} levels at {}", kMaxDepth, path);
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) return impossible(fmt::format("the schema at {} is 'false'", path));
    return any_value();
  }
  if (!schema.is_object()) fail("JSON Schema: the schema at {} is not an object or a boolean", path);
  if (auto it = memo_.find(&schema); it != memo_.end()) return it->second;
  check_keywords(schema, path);

  if (has(schema, "$ref")) {
    if (!schema["$ref"].is_string()) fail("JSON Schema: '$ref' at {} must be a string", path);
    const ojson& target = resolve_schema_ref(root_, schema["$ref"].get<std::string>(), path);
    ojson rest = schema;
    rest.erase("$ref");
    if (legacy_ || only_annotations(rest)) return memoized(schema, compile_value(target, path, depth + 1));
    return memoized(schema, compile_value(own(merge_in(rest, target, path)), path, depth + 1));
  }
  if (has(schema, "dependentRequired") || has(schema, "dependentSchemas") || has(schema, "dependencies"))
    return memoized(schema, compile_value(own(expand_dependencies(schema, path)), path, depth + 1));
  if (has(schema, "allOf")) {
    const ojson& list = list_of(schema, "allOf", path);
    ojson merged = schema;
    merged.erase("allOf");
    for (size_t i = 0; i < list.size(); ++i)
      merged = merge_in(merged, list[i], child_path(path, fmt::format("allOf/{}", i)));
    return memoized(schema, compile_value(own(std::move(merged)), path, depth + 1));
  }
  // The rule comes first, so that recursive references find it.
  int32_t rule = builder_.add_rule(path);
  memo_[&schema] = rule;
  std::vector<std::vector<Symbol>> alternatives;
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!has(schema, key)) continue;
    const ojson& list = list_of(schema, key, path);
    ojson base = schema;
    base.erase(key);
    if (std::string_view(key) == "oneOf") check_one_of_disjoint(base, list, path);
    for (size_t i = 0; i < list.size(); ++i) {
      std::string branch_path = child_path(path, fmt::format("{}/{}", key, i));
      const ojson& branch = only_annotations(base) ? list[i] : own(merge_in(base, list[i], branch_path));
      if (auto v = compile_value(branch, branch_path, depth + 1)) alternatives.push_back({*v});
    }
    return finish(schema, rule, std::move(alternatives));
  }
  if (has(schema, "const") || has(schema, "enum")) {
    // The string values are one lexeme: as many alternatives would put as
    // many items in the parser's row, which each lexeme end of a mask pays.
    const std::vector<ojson> values = enum_values(schema, path);
    std::vector<const ojson*> strings;
    for (const ojson& v : values) {
      if (!type_allows(schema, v)) continue;
      if (v.is_string()) strings.push_back(&v);
      else alternatives.push_back({literal_value(v, 0)});
    }
    if (strings.size() == 1) alternatives.push_back({literal_value(*strings[0], 0)});
    if (strings.size() > 1) {
      std::vector<RegexNode> texts;
      std::string key = "enum";
      for (const ojson* v : strings) {
        texts.push_back(RegexNode::literal(v->dump()));
        key += '\x01' + v->dump();
      }
      alternatives.push_back({builder_.regex(RegexNode::alt(std::move(texts)), TextEncoding::Utf8, key)});
    }
    if (alternatives.empty())
      impossible(fmt::format("'{}' at {} leaves no value", has(schema, "enum") ? "enum" : "const", path));
    return finish(schema, rule, std::move(alternatives));
  }
  std::vector<std::string> types = types_of(schema, path);
  if (types.empty()) impossible(fmt::format("'type' at {} allows no type", path));
  for (const std::string& type : types)
    if (auto v = typed_value(type, schema, path, depth)) alternatives.push_back({*v});
  return finish(schema, rule, std::move(alternatives));
}

std::nullopt_t SchemaCompiler::impossible(std::string why) {
  impossible_ = std::move(why);
  return std::nullopt;
}

// A property's dependencies (dependentRequired and dependentSchemas;
// dependencies before 2019-09, either kind): the property is absent, or
// what it asks for holds. Each one is an anyOf of those two, under allOf.
ojson SchemaCompiler::expand_dependencies(const ojson& schema, const std::string& path) const {
  ojson out = schema;
  ojson all = has(schema, "allOf") ? schema["allOf"] : ojson::array();
  for (const char* key : {"dependentRequired", "dependentSchemas", "dependencies"}) {
    if (!has(schema, key)) continue;
    out.erase(key);
    if (!schema[key].is_object()) fail("JSON Schema: '{}' at {} must be an object", key, path);
    for (auto& [name, then] : schema[key].items()) {
      if (std::string_view(key) == "dependentRequired" && !then.is_array())
        fail("JSON Schema: 'dependentRequired' at {} must map names to arrays", path);
      ojson absent = ojson::object();
      absent["properties"] = ojson::object();
      absent["properties"][name] = false;
      // Present, the name is required (dependentSchemas' schema applies only then).
      ojson present = ojson::object();
      if (then.is_array()) {
        present["required"] = then;
      } else {
        present["allOf"] = ojson::array({then, ojson::object()});
        present["allOf"][1]["required"] = ojson::array({name});
      }
      ojson either = ojson::object();
      either["anyOf"] = ojson::array({absent, present});
      all.push_back(either);
    }
  }
  out["allOf"] = all;
  return out;
}

// An in-place subschema (of allOf, anyOf, oneOf, $ref) merged into the
// schema around it. That schema's unevaluatedProperties and unevaluatedItems
// are set aside and put back: they then hold for what the merged schema does
// not list (its properties and patterns, its prefixItems and items), which
// is what the two evaluate (anyOf's other branches may evaluate more: stricter).
ojson SchemaCompiler::merge_in(const ojson& outer, const ojson& inner, const std::string& path) const {
  ojson kept = ojson::object(), rest = outer;
  for (const char* key : {"unevaluatedProperties", "unevaluatedItems"}) {
    if (!has(outer, key)) continue;
    kept[key] = outer[key];
    rest.erase(key);
  }
  ojson merged = merge_schemas(root_, rest, inner, path, *merge_budget_);
  if (merged.is_object()) merged.update(kept);
  return merged;
}

std::optional<Symbol> SchemaCompiler::memoized(const ojson& schema, std::optional<Symbol> value) {
  memo_[&schema] = value;
  return value;
}

std::optional<Symbol> SchemaCompiler::finish(const ojson& schema, int32_t rule,
                                             std::vector<std::vector<Symbol>> alternatives) {
  if (alternatives.empty()) return memoized(schema, std::nullopt);
  for (auto& alt : alternatives) builder_.add_production(rule, std::move(alt));
  return rule;
}

void SchemaCompiler::check_keywords(const ojson& schema, const std::string& path) const {
  for (auto& [key, value] : schema.items()) {
    if (kRefused.count(key)) refuse(key, path);
    if (legacy_ && (key == "unevaluatedProperties" || key == "unevaluatedItems")) refuse(key, path);
    if (key == "uniqueItems" && value == true) refuse(key, path);
  }
}

// oneOf is anyOf when no value can satisfy two branches: their types are
// disjoint, or each is an object whose required property has its own const.
void SchemaCompiler::check_one_of_disjoint(const ojson& base, const ojson& list, const std::string& path) const {
  auto kinds = [&](const ojson& branch) {
    std::set<std::string> out;
    const ojson* s = &branch;
    for (int hops = 0; has(*s, "$ref") && hops < 16; ++hops) s = &resolve_schema_ref(root_, (*s)["$ref"], path);
    const ojson* typed = has(*s, "type") ? s : has(base, "type") ? &base : nullptr;
    if (has(*s, "const") || has(*s, "enum")) {
      std::vector<ojson> values = has(*s, "const") ? std::vector<ojson>{(*s)["const"]}
                                                   : std::vector<ojson>((*s)["enum"].begin(), (*s)["enum"].end());
      for (const ojson& v : values) out.insert(v.is_number() ? "number" : std::string(v.type_name()));
    } else if (typed) {
      for (const std::string& t : types_of(*typed, path)) out.insert(t == "integer" ? "number" : t);
    } else {
      out = {"null", "boolean", "object", "array", "string", "number"};
    }
    return std::pair<std::set<std::string>, const ojson*>{out, s};
  };
  auto discriminator = [&](const ojson& s) {
    std::set<std::pair<std::string, std::string>> out;  // (property, const value)
    if (!has(s, "properties") || !has(s, "required")) return out;
    for (const ojson& name : s["required"]) {
      if (!name.is_string() || !s["properties"].contains(name.get<std::string>())) continue;
      const ojson& p = s["properties"][name.get<std::string>()];
      if (has(p, "const")) out.insert({name.get<std::string>(), p["const"].dump()});
      else if (has(p, "enum") && p["enum"].is_array() && p["enum"].size() == 1) out.insert({name.get<std::string>(), p["enum"][0].dump()});
    }
    return out;
  };
  // Each branch's kinds and discriminators once, then every pair; past
  // kMaxOneOfPairwise branches, only one property that every branch requires
  // with a value of its own tells them apart (pairs would take seconds).
  std::vector<std::set<std::string>> branch_kinds;
  std::vector<std::set<std::pair<std::string, std::string>>> branch_discriminators;
  for (const ojson& branch : list) {
    const auto [k, s] = kinds(branch);
    branch_kinds.push_back(k);
    branch_discriminators.push_back(discriminator(*s));
  }
  if (list.size() > kMaxOneOfPairwise) {
    for (const auto& first : branch_discriminators[0]) {  // not a structured binding: clang 14 cannot capture one
      std::set<std::string> values;
      for (const auto& d : branch_discriminators) {
        auto it = std::find_if(d.begin(), d.end(), [&](const auto& nv) { return nv.first == first.first; });
        if (it == d.end() || !values.insert(it->second).second) break;
      }
      if (values.size() == list.size()) return;
    }
    refuse("oneOf", path,
           fmt::format("with more than {} branches cannot be enforced unless one required property has a const of "
                       "its own in each (anyOf can)", kMaxOneOfPairwise));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    for (size_t j = i + 1; j < list.size(); ++j) {
      const std::set<std::string>& ki = branch_kinds[i];
      const std::set<std::string>& kj = branch_kinds[j];
      bool overlap = std::any_of(ki.begin(), ki.end(), [&](const std::string& t) { return kj.count(t) > 0; });
      if (!overlap) continue;
      bool told_apart = false;
      for (auto& [name, value] : branch_discriminators[i])
        for (auto& [name2, value2] : branch_discriminators[j])
          if (name == name2 && value != value2) told_apart = true;
      if (!told_apart)
        refuse("oneOf", path, fmt::format("cannot be enforced: branches {} and {} may both match (anyOf can)", i, j));
    }
  }
}

std::vector<ojson> SchemaCompiler::enum_values(const ojson& schema, const std::string& path) const {
  std::vector<ojson> values;
  if (has(schema, "enum")) {
    if (!schema["enum"].is_array()) fail("JSON Schema: 'enum' at {} must be an array", path);
    values.assign(schema["enum"].begin(), schema["enum"].end());
  }
  if (has(schema, "const")) {
    if (has(schema, "enum") && std::find(values.begin(), values.end(), schema["const"]) == values.end()) return {};
    values.assign(1, schema["const"]);
  }
  // Other keywords: each value is kept where the schema without enum and
  // const accepts it as JSON writes it (its own grammar, by a compiler of its own).
  ojson rest = ojson::object();
  for (auto& [key, value] : schema.items())
    if (!is_annotation_keyword(key) && key != "enum" && key != "const" && key != "type") rest[key] = value;
  if (rest.empty()) return values;
  if (nesting_ >= kMaxNesting)
    refuse(rest.begin().key(), path, "beside 'enum' or 'const' refers back to them too deeply");
  if (has(schema, "type")) rest["type"] = schema["type"];
  std::shared_ptr<const Grammar> grammar = SchemaCompiler(root_, limits_, options_, nesting_ + 1, merge_budget_).compile_alone(rest, path);
  static const auto kNoVocab = std::make_shared<TokenTrie>(std::vector<std::string>{""}, std::vector<int32_t>{0});
  std::erase_if(values, [&](const ojson& v) {
    if (!grammar) return true;
    Matcher m(grammar, kNoVocab);
    return !m.accept_bytes(v.dump()) || !m.is_complete();
  });
  return values;
}

std::shared_ptr<const Grammar> SchemaCompiler::compile_alone(const ojson& schema, const std::string& path) {
  std::optional<Symbol> value = compile_value(own(schema), path, 0);
  if (!value) return nullptr;
  return builder_.build(builder_.rule_of("json", {{*value}}));
}

std::vector<std::string> SchemaCompiler::types_of(const ojson& schema, const std::string& path) const {
  if (!has(schema, "type")) return {"null", "boolean", "object", "array", "string", "number"};
  std::vector<std::string> types;
  auto add = [&](const ojson& name) {
    if (!name.is_string() || std::find(std::begin(kTypes), std::end(kTypes), name.get<std::string>()) == std::end(kTypes))
      fail("JSON Schema: unknown type {} at {}", name.dump(), path);
    types.push_back(name.get<std::string>());
  };
  const ojson& t = schema["type"];
  if (t.is_array()) {
    for (const ojson& name : t) add(name);
  } else {
    add(t);
  }
  if (std::find(types.begin(), types.end(), "number") != types.end()) std::erase(types, "integer");  // number has them
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  return types;
}

bool SchemaCompiler::type_allows(const ojson& schema, const ojson& v) const {
  if (!has(schema, "type")) return true;
  for (const std::string& t : types_of(schema, "#")) {
    bool integral = v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                              v.get<double>() == std::floor(v.get<double>()));
    if ((t == "null" && v.is_null()) || (t == "boolean" && v.is_boolean()) || (t == "object" && v.is_object()) ||
        (t == "array" && v.is_array()) || (t == "string" && v.is_string()) || (t == "number" && v.is_number()) ||
        (t == "integer" && integral))
      return true;
  }
  return false;
}

std::optional<Symbol> SchemaCompiler::typed_value(const std::string& type, const ojson& schema,
                                                  const std::string& path, int depth) {
  if (type == "null") return builder_.literal("null");
  if (type == "boolean") return builder_.rule_of("boolean", {{builder_.literal("true")}, {builder_.literal("false")}});
  if (type == "string") {
    if (count_field(schema, "minLength", 0, path) > count_field(schema, "maxLength", UINT64_MAX, path))
      return impossible(fmt::format("'minLength' above 'maxLength' at {}", path));
    return string_value(schema, path);
  }
  if (type == "number" || type == "integer") {
    // Bounds that leave no number (each bound alone is a language of its own).
    double lo = -HUGE_VAL, hi = HUGE_VAL;
    bool lo_open = false, hi_open = false;
    for (const char* key : {"minimum", "exclusiveMinimum"})
      if (has(schema, key) && schema[key].is_number() && schema[key].get<double>() >= lo)
        lo_open = schema[key].get<double>() == lo ? lo_open || key[0] == 'e' : key[0] == 'e', lo = schema[key].get<double>();
    for (const char* key : {"maximum", "exclusiveMaximum"})
      if (has(schema, key) && schema[key].is_number() && schema[key].get<double>() <= hi)
        hi_open = schema[key].get<double>() == hi ? hi_open || key[0] == 'e' : key[0] == 'e', hi = schema[key].get<double>();
    if (lo > hi || (lo == hi && (lo_open || hi_open)) ||
        (type == "integer" && std::ceil(lo) > std::floor(hi)))
      return impossible(fmt::format("the bounds at {} leave no {}", path, type));
    return number_value(schema, type == "integer", path);
  }
  if (type == "object") return object_value(schema, path, depth);
  return array_value(schema, path, depth);
}

std::shared_ptr<const Grammar> compile_json_schema(const ojson& schema, Limits limits, JsonGrammarOptions options) {
  return SchemaCompiler(schema, limits, options).compile();
}

std::shared_ptr<const Grammar> compile_any_json_object(Limits limits, JsonGrammarOptions options) {
  static const ojson kEmpty = ojson::object();
  return SchemaCompiler(kEmpty, limits, options).compile_any_object();
}

Symbol add_json_schema(GrammarBuilder& builder, const ojson& schema, JsonGrammarOptions options) {
  return SchemaCompiler(builder, schema, options).root_value();
}

}  // namespace skiff::grammar

// Arguments objects written a parameter at a time (json_schema.h's
// XmlParameterLayout): the properties in order, strings raw, others JSON.
#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "grammar/json_schema_compiler.h"

namespace skiff::grammar {
namespace {

// Keywords of the arguments object that parameters written one by one can
// honour: they say which properties there are, and never ask for others.
bool parameters_keyword(std::string_view key) {
  return key == "type" || key == "properties" || key == "required" || key == "additionalProperties" ||
         key == "unevaluatedProperties" || key == "$defs" || key == "definitions" || is_annotation_keyword(key);
}

std::string trimmed(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return std::string(s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1));
}

// A name the families' readers give back as written: they end it at a quote
// or an angle bracket and trim it.
bool writable_name(const std::string& name) {
  return !name.empty() && name == trimmed(name) &&
         std::none_of(name.begin(), name.end(), [](char c) { return c == '<' || c == '>' || c == '"' || c == '\n'; });
}

}  // namespace

const ojson& SchemaCompiler::through_refs(const ojson& schema, const std::string& path) const {
  const ojson* s = &schema;
  for (int hops = 0; has(*s, "$ref") && hops < 16; ++hops) {
    bool pure = true;
    for (auto& [key, value] : s->items()) pure = pure && (key == "$ref" || is_annotation_keyword(key));
    if (!pure && !legacy_) break;
    if (!(*s)["$ref"].is_string()) fail("JSON Schema: '$ref' at {} must be a string", path);
    s = &resolve_schema_ref(root_, (*s)["$ref"].get<std::string>(), path);
  }
  return *s;
}

bool SchemaCompiler::string_only(const ojson& schema) const {
  if (!schema.is_object() || has(schema, "$ref")) return false;
  const bool typed_string = has(schema, "type") && (schema["type"] == "string" || schema["type"] == ojson::array({"string"}));
  if (has(schema, "const") || has(schema, "enum")) {
    if (has(schema, "type") && !typed_string) return false;
    if (has(schema, "const")) return schema["const"].is_string();
    return schema["enum"].is_array() && !schema["enum"].empty() &&
           std::all_of(schema["enum"].begin(), schema["enum"].end(), [](const ojson& v) { return v.is_string(); });
  }
  return typed_string && !has(schema, "anyOf") && !has(schema, "oneOf") && !has(schema, "allOf");
}

std::optional<Symbol> SchemaCompiler::raw_string_then(const ojson& schema, const std::string& end,
                                                      const std::string& path) {
  check_keywords(schema, path);
  const std::string tag = trimmed(end);
  const RegexNode then_end = RegexNode::literal(end);
  std::vector<RegexNode> parts;
  std::string key;
  if (has(schema, "const") || has(schema, "enum")) {
    std::vector<RegexNode> texts;
    for (const ojson& v : enum_values(schema, path)) {
      if (!v.is_string() || v.get<std::string>().find(tag) != std::string::npos) continue;
      texts.push_back(RegexNode::literal(v.get<std::string>()));
      key += '\x01' + v.dump();
    }
    if (texts.empty()) return impossible(fmt::format("'enum' at {} leaves no value without '{}'", path, tag));
    parts.push_back(RegexNode::concat({RegexNode::alt(std::move(texts)), then_end}));
  } else {
    parts.push_back(RegexNode::concat({text_without(tag), then_end}));
    // string_parts' first part is the length's: `.*` without bounds, which text_without covers.
    const bool bounded = has(schema, "minLength") || has(schema, "maxLength");
    std::vector<RegexNode> asked = string_parts(schema, path, key);
    for (size_t i = bounded ? 0 : 1; i < asked.size(); ++i) parts.push_back(RegexNode::concat({asked[i], then_end}));
  }
  std::vector<const RegexNode*> required;
  for (const RegexNode& p : parts) required.push_back(&p);
  return builder_.lexeme("xml\x01" + end + "\x01" + key, required, {}, false);
}

Symbol SchemaCompiler::xml_parameters(const XmlParameterLayout& layout) {
  const ojson& object = through_refs(root_, "#");
  if (object.is_boolean() && object.get<bool>()) return builder_.rule_of("parameters", {{}});
  if (!object.is_object()) fail("JSON Schema: the arguments schema must be an object schema");
  check_keywords(object, "#");
  for (auto& [key, value] : object.items())
    if (!parameters_keyword(key)) refuse(key, "#", "cannot be enforced on arguments written as XML parameters");
  if (has(object, "type") && object["type"] != "object")
    refuse("type", "#", "must be \"object\" for arguments written as XML parameters");
  static const ojson kNone = ojson::object();
  const ojson& properties = has(object, "properties") ? object["properties"] : kNone;
  if (!properties.is_object()) fail("JSON Schema: 'properties' at # must be an object");
  std::vector<std::string> required;
  if (has(object, "required")) {
    if (!object["required"].is_array()) fail("JSON Schema: 'required' at # must be an array");
    for (const ojson& name : object["required"]) {
      if (!name.is_string() || !properties.contains(name.get<std::string>()))
        refuse("required", "#", fmt::format("names {}, which 'properties' does not list", name.dump()));
      required.push_back(name.get<std::string>());
    }
  }
  const size_t key_at = layout.begin.find("{key}");
  std::vector<Symbol> sequence;
  for (auto& [name, property] : properties.items()) {
    const std::string path = child_path("#/properties", name);
    if (!writable_name(name)) refuse("properties", "#", fmt::format("names '{}', which XML parameters cannot write", name));
    const ojson& target = through_refs(property, path);
    const bool raw = string_only(target);
    std::string begin = layout.begin;
    if (key_at != std::string::npos) begin.replace(key_at, 5, name);
    if (const size_t at = begin.find("{string}"); at != std::string::npos) begin.replace(at, 8, raw ? "true" : "false");
    std::vector<Symbol> parameter{builder_.literal(begin)};
    std::optional<Symbol> value = raw ? raw_string_then(target, layout.end, path) : compile_value(property, path, 1);
    const bool needed = std::find(required.begin(), required.end(), name) != required.end();
    if (!value) {
      if (needed) fail("JSON Schema: no value satisfies the required property at {}: {}", path, impossible_);
      continue;
    }
    parameter.push_back(*value);
    if (!raw) parameter.push_back(builder_.literal(layout.end));
    sequence.push_back(needed ? builder_.rule_of(path, {parameter}) : builder_.rule_of(path, {{}, parameter}));
  }
  return builder_.rule_of("parameters", {sequence});
}

std::vector<std::string> SchemaCompiler::string_only_properties() {
  std::vector<std::string> out;
  const ojson& object = through_refs(root_, "#");
  if (!has(object, "properties") || !object["properties"].is_object()) return out;
  for (auto& [name, property] : object["properties"].items())
    if (string_only(through_refs(property, child_path("#/properties", name)))) out.push_back(name);
  return out;
}

Symbol add_xml_parameters(GrammarBuilder& builder, const ojson& schema, const XmlParameterLayout& layout,
                          JsonGrammarOptions options) {
  return SchemaCompiler(builder, schema, options).xml_parameters(layout);
}

std::vector<std::string> string_only_properties(const ojson& schema) {
  GrammarBuilder unused;
  return SchemaCompiler(unused, schema, {}).string_only_properties();
}

}  // namespace skiff::grammar

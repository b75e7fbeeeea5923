// JSON Schema (draft 2020-12, 2019-09, 7, 6 and 4) to a Grammar whose texts
// are exactly the JSON documents (any whitespace between tokens) the schema
// accepts, with two restrictions that keep generation finite and sound:
// object properties the schema lists come in its order, before any others;
// and a keyword that cannot be enforced (not, if, multipleOf, uniqueItems,
// maxContains, $dynamicRef, a $ref to another document, ...) is refused with
// an Error naming it and its place, never dropped. Where the grammar is
// stricter than the schema, it only ever rejects more: unevaluatedProperties
// sees the one anyOf branch taken; past four patternProperties, a name two
// of them match is never accepted. Formats (date, time, date-time, duration, uuid,
// email, hostname, ipv4, ipv6, uri) are enforced, as OpenAI's strict mode
// does. The official JSON-Schema-Test-Suite runs against it in
// tests/python/test_json_schema_suite.py.
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace skiff::grammar {

struct JsonGrammarOptions {
  // Whitespace between two tokens, in bytes at most: 0 for compact JSON
  // (vLLM's disable_any_whitespace), kAnyWhitespace for no limit. A limit
  // keeps a model from writing blanks forever, as llama.cpp's JSON grammars do.
  static constexpr size_t kAnyWhitespace = SIZE_MAX;
  size_t max_whitespace = 64;
};

std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::ordered_json& schema, Limits limits = {},
                                                   JsonGrammarOptions options = {});

// OpenAI's {"type": "json_object"}: any JSON object.
std::shared_ptr<const Grammar> compile_any_json_object(Limits limits = {}, JsonGrammarOptions options = {});

// The schema's values as a symbol of a grammar being built (JSON inside other
// text: tool calls), no whitespace around them. Throws Error when none.
Symbol add_json_schema(GrammarBuilder& builder, const nlohmann::ordered_json& schema, JsonGrammarOptions options = {});

// Arguments written a parameter at a time, as XML tool-call families write
// them (Qwen3-Coder's <parameter=P>\nVALUE\n</parameter>\n): `begin` with
// "{key}" replaced by the property's name, the value, then `end`. Such a
// family writes a string's text raw and any other value as JSON, so a
// reader must know which properties are strings: string_only_properties.
struct XmlParameterLayout {
  std::string begin;  // holds "{key}"; "{string}" in it: "true" for a raw string, else "false"
  std::string end;    // its tag (spaces around aside) never occurs in a raw value
};

// An arguments object schema's properties as such parameters, each listed
// property in order, required ones always, others optional; a property
// string_only_properties names is its raw text, any other its JSON value.
// Throws Error for a schema that is not an object of listed properties (a
// family writing XML cannot write what `properties` does not name).
Symbol add_xml_parameters(GrammarBuilder& builder, const nlohmann::ordered_json& schema,
                          const XmlParameterLayout& layout, JsonGrammarOptions options = {});

// The properties of an arguments object schema whose values can only be
// strings (type "string", or an enum or const of strings; through $refs).
std::vector<std::string> string_only_properties(const nlohmann::ordered_json& schema);

}  // namespace skiff::grammar

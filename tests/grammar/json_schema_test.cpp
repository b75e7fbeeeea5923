// JSON Schema grammars on hand-written documents; the official test suite
// runs through `skiff grammar` in tests/python/test_json_schema_suite.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "grammar/earley.h"
#include "grammar/json_schema.h"
#include "grammar_test_support.h"

namespace skiff::grammar {
namespace {

using ojson = nlohmann::ordered_json;

std::shared_ptr<const Grammar> schema(const char* text) { return compile_json_schema(ojson::parse(text)); }

TEST(JsonSchema, ObjectWithRequiredAndOptionalPropertiesInOrder) {
  auto g = schema(R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                      "required": ["name"], "additionalProperties": false})");
  EXPECT_TRUE(accepts_text(g, R"({"name":"Ann","age":31})"));
  EXPECT_TRUE(accepts_text(g, "{ \"name\" : \"Ann\" ,\n  \"age\": -2 }\n"));
  EXPECT_TRUE(accepts_text(g, R"({"name":"Ann"})"));
  EXPECT_FALSE(accepts_text(g, R"({"age":3})"));
  EXPECT_FALSE(accepts_text(g, R"({"name":"Ann","age":3.5})"));
  EXPECT_FALSE(accepts_text(g, R"({"name":"Ann","extra":1})"));
  EXPECT_FALSE(accepts_text(g, R"({"name":"Ann",})"));
}

TEST(JsonSchema, AdditionalPropertiesNeverRepeatAListedName) {
  auto g = schema(R"({"type": "object", "properties": {"a": {"type": "integer"}}})");
  EXPECT_TRUE(accepts_text(g, R"({"a":1,"b":"x","c":[1,{}]})"));
  EXPECT_FALSE(accepts_text(g, R"({"a":1,"a":"x"})"));
  EXPECT_FALSE(accepts_text(g, R"({"a":1,"\u0061":"x"})"));
}

TEST(JsonSchema, StringsWithLengthPatternAndFormat) {
  auto g = schema(R"({"type": "array", "items": [{"type": "string", "minLength": 2, "maxLength": 3}],
                      "prefixItems": [{"type": "string", "minLength": 2, "maxLength": 3},
                                      {"type": "string", "pattern": "^[a-c]+$"},
                                      {"type": "string", "format": "date"}], "items": false})");
  EXPECT_TRUE(accepts_text(g, R"(["ab","abc","2024-02-29"])"));
  EXPECT_TRUE(accepts_text(g, R"(["\u00e9\n","a"])"));
  EXPECT_FALSE(accepts_text(g, R"(["a"])"));
  EXPECT_FALSE(accepts_text(g, R"(["abcd"])"));
  EXPECT_FALSE(accepts_text(g, R"(["ab","abd"])"));
  EXPECT_FALSE(accepts_text(g, R"(["ab","a","2023-02-29"])"));
  EXPECT_FALSE(accepts_text(g, R"(["ab","a","2024-02-29",1])"));
}

TEST(JsonSchema, NumberBounds) {
  auto g = schema(R"({"type": "number", "minimum": -1.5, "exclusiveMaximum": 10})");
  for (const char* ok : {"-1.5", "-1", "0", "9.999", "3e0"}) EXPECT_EQ(accepts_text(g, ok), std::string(ok) != "3e0") << ok;
  for (const char* bad : {"-1.51", "10", "10.0", "11", "-2"}) EXPECT_FALSE(accepts_text(g, bad)) << bad;
  auto i = schema(R"({"type": "integer", "minimum": 3, "maximum": 120})");
  for (int v = -5; v < 200; ++v) EXPECT_EQ(accepts_text(i, std::to_string(v)), v >= 3 && v <= 120) << v;
}

TEST(JsonSchema, RecursiveReferencesAndCombinators) {
  auto g = schema(R"({"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                        "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
                        "required": ["v", "next"], "additionalProperties": false}},
                      "$ref": "#/$defs/node"})");
  EXPECT_TRUE(accepts_text(g, R"({"v":1,"next":{"v":2,"next":null}})"));
  EXPECT_FALSE(accepts_text(g, R"({"v":1,"next":{"v":2}})"));
  auto e = schema(R"({"enum": ["red", 2, {"a": [true]}], "type": ["string", "object"]})");
  EXPECT_TRUE(accepts_text(e, R"("red")"));
  EXPECT_TRUE(accepts_text(e, R"({ "a" : [ true ] })"));
  EXPECT_FALSE(accepts_text(e, "2"));
}

TEST(JsonSchema, RefusesKeywordsItCannotEnforceNamingThem) {
  for (const char* s : {R"({"not": {"type": "string"}})", R"({"type": "array", "uniqueItems": true})",
                        R"({"properties": {"x": {"multipleOf": 3}}})",
                        R"({"oneOf": [{"type": "string"}, {"minLength": 2}]})"}) {
    try {
      schema(s);
      ADD_FAILURE() << s;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(schema(R"j({"type": "string", "pattern": "(?=x)"})j"), Error);
  EXPECT_THROW(schema("false"), Error);
}

std::string refusal(const char* text) {
  try {
    schema(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// allOf merges items position by position: a prefixItems from one side and
// an items from the other do not make items start after the prefix.
TEST(JsonSchema, MergedItemsKeepTheirPositions) {
  auto g = schema(R"({"allOf": [{"prefixItems": [{"minimum": 3}]}], "items": {"minimum": 5}})");
  EXPECT_FALSE(accepts_text(g, "[3,5]"));
  EXPECT_TRUE(accepts_text(g, "[5,6]"));
  auto legacy = schema(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                           "allOf": [{"items": [{"type": "integer"}]}], "additionalItems": {"type": "boolean"}})");
  EXPECT_TRUE(accepts_text(legacy, "[1,null]"));  // additionalItems beside no items array means nothing
  EXPECT_FALSE(accepts_text(legacy, "[null]"));
  auto both = schema(R"({"allOf": [{"prefixItems": [{"type": "integer"}], "items": false},
                                   {"prefixItems": [true, {"type": "string"}]}]})");
  EXPECT_TRUE(accepts_text(both, "[1]"));
  EXPECT_FALSE(accepts_text(both, R"([1,"a"])"));
}

// A side's additionalProperties beside the other side's patterns would
// reach fewer names merged: refused rather than loosened.
TEST(JsonSchema, MergeRefusesPatternsBesideTheOtherSidesAdditionalProperties) {
  EXPECT_NE(refusal(R"({"allOf": [{"patternProperties": {"^f": {}}}, {"additionalProperties": false}]})")
                .find("'patternProperties'"),
            std::string::npos);
}

// Drafts 4 to 7: $ref's siblings mean nothing, in allOf's merge too.
TEST(JsonSchema, LegacyRefIgnoresItsSiblingsWhenMerged) {
  auto g = schema(R"({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"type": "integer"}},
                      "allOf": [{"$ref": "#/definitions/a", "maximum": 5}]})");
  EXPECT_TRUE(accepts_text(g, "10"));
  EXPECT_FALSE(accepts_text(g, "\"x\""));
}

// const and enum compare numbers by value: 1 is 1.0 and 1.00.
TEST(JsonSchema, ConstNumbersMatchEverySpellingOfTheirValue) {
  auto one = schema(R"({"const": 1})");
  for (const char* ok : {"1", "1.0", "1.00"}) EXPECT_TRUE(accepts_text(one, ok)) << ok;
  for (const char* bad : {"1.5", "10", "true", "-1", "01"}) EXPECT_FALSE(accepts_text(one, bad)) << bad;
  auto nested = schema(R"({"enum": [[0], {"a": -2.0}, 1.5]})");
  for (const char* ok : {"[0.0]", R"({"a":-2})", "1.50"}) EXPECT_TRUE(accepts_text(nested, ok)) << ok;
  for (const char* bad : {"[false]", R"({"a":2})", "1.51"}) EXPECT_FALSE(accepts_text(nested, bad)) << bad;
}

TEST(JsonSchema, RequiredNamesNotListedComeInTheirOrder) {
  auto g = schema(R"({"required": ["toString", "__proto__"]})");
  EXPECT_TRUE(accepts_text(g, R"({"toString":1,"__proto__":2})"));
  EXPECT_FALSE(accepts_text(g, R"({"toString":1})"));
}

// A name two patterns match meets both schemas (it was left out).
TEST(JsonSchema, NamesMatchingSeveralPatternsMeetAllTheirSchemas) {
  auto g = schema(R"({"patternProperties": {"a*": {"type": "integer"}, "aaa*": {"maximum": 20}}})");
  EXPECT_TRUE(accepts_text(g, R"({"aaaa":18})"));
  EXPECT_TRUE(accepts_text(g, R"({"a":21,"aaaa":18})"));
  EXPECT_FALSE(accepts_text(g, R"({"aaaa":31})"));
  EXPECT_FALSE(accepts_text(g, R"({"aaa":"x"})"));
  // A required name the schema does not list, but a pattern matches (it crashed).
  auto required = schema(R"({"required": ["ab"], "patternProperties": {"^a": {"type": "integer"}}})");
  EXPECT_TRUE(accepts_text(required, R"({"ab":1})"));
  EXPECT_FALSE(accepts_text(required, R"({"ab":"x"})"));
}

// More listed names than a lexeme has parts: they are excluded as one.
TEST(JsonSchema, ManyListedPropertiesBesideAdditionalOnes) {
  ojson s = {{"type", "object"}, {"properties", ojson::object()}};
  for (int i = 0; i < 40; ++i) s["properties"][fmt::format("p{}", i)] = {{"type", "integer"}};
  auto g = compile_json_schema(s);
  EXPECT_TRUE(accepts_text(g, R"({"p0":1,"p39":2,"q":"x"})"));
  EXPECT_FALSE(accepts_text(g, R"({"p0":1,"p7":"x"})"));
}

TEST(JsonSchema, MinAndMaxProperties) {
  auto g = schema(R"({"minProperties": 1, "maxProperties": 2})");
  EXPECT_FALSE(accepts_text(g, "{}"));
  EXPECT_TRUE(accepts_text(g, R"({"a":1})"));
  EXPECT_TRUE(accepts_text(g, R"({"a":1,"b":2})"));
  EXPECT_FALSE(accepts_text(g, R"({"a":1,"b":2,"c":3})"));
  auto listed = schema(R"({"properties": {"x": {}, "y": {}}, "required": ["x"],
                           "maxProperties": 2, "minProperties": 2})");
  EXPECT_TRUE(accepts_text(listed, R"({"x":1,"y":2})"));
  EXPECT_TRUE(accepts_text(listed, R"({"x":1,"z":2})"));
  EXPECT_FALSE(accepts_text(listed, R"({"x":1})"));
  EXPECT_FALSE(accepts_text(listed, R"({"x":1,"y":2,"z":3})"));
  EXPECT_NE(refusal(R"({"type": "object", "properties": {"x": {}}, "additionalProperties": false, "minProperties": 2})")
                .find("'minProperties'"),
            std::string::npos);
}

TEST(JsonSchema, PropertyNames) {
  auto g = schema(R"({"properties": {"long": {}}, "propertyNames": {"maxLength": 3, "pattern": "^a"}})");
  EXPECT_TRUE(accepts_text(g, R"({"abc":1,"a":2})"));
  EXPECT_FALSE(accepts_text(g, R"({"abcd":1})"));
  EXPECT_FALSE(accepts_text(g, R"({"bc":1})"));
  EXPECT_FALSE(accepts_text(g, R"({"long":1})"));
  auto none = schema(R"({"propertyNames": false})");
  EXPECT_TRUE(accepts_text(none, "{}"));
  EXPECT_FALSE(accepts_text(none, R"({"a":1})"));
  auto listed = schema(R"({"propertyNames": {"enum": ["foo", "bar"]}})");
  EXPECT_TRUE(accepts_text(listed, R"({"bar":1,"foo":2})"));
  EXPECT_FALSE(accepts_text(listed, R"({"baz":1})"));
  EXPECT_NE(refusal(R"({"propertyNames": {"not": {"const": "a"}}})").find("'not'"), std::string::npos);
}

TEST(JsonSchema, ContainsAndMinContains) {
  auto g = schema(R"({"items": {"type": "integer"}, "contains": {"minimum": 5}, "minContains": 2})");
  EXPECT_TRUE(accepts_text(g, "[5,1,6]"));
  EXPECT_TRUE(accepts_text(g, "[7,9]"));
  EXPECT_FALSE(accepts_text(g, "[1,5,2]"));
  EXPECT_FALSE(accepts_text(g, "[]"));
  EXPECT_FALSE(accepts_text(g, "[5,\"x\",6]"));
  auto none = schema(R"({"contains": false})");
  EXPECT_FALSE(accepts_text(none, "[1]"));
  EXPECT_TRUE(accepts_text(none, "{}"));
  EXPECT_NE(refusal(R"({"contains": {"const": 1}, "maxContains": 1})").find("'maxContains'"), std::string::npos);
  EXPECT_NE(refusal(R"({"contains": {"const": 1}, "maxItems": 3})").find("'contains'"), std::string::npos);
}

// A dependency: its property absent, or what it asks for present.
TEST(JsonSchema, Dependencies) {
  auto g = schema(R"({"dependentRequired": {"bar": ["foo"]},
                      "dependentSchemas": {"baz": {"properties": {"n": {"type": "integer"}}}}})");
  EXPECT_TRUE(accepts_text(g, R"({"foo":1,"bar":2})"));
  EXPECT_FALSE(accepts_text(g, R"({"bar":2})"));
  EXPECT_TRUE(accepts_text(g, R"({"n":"x"})"));
  EXPECT_TRUE(accepts_text(g, R"({"n":1,"baz":0})"));
  EXPECT_FALSE(accepts_text(g, R"({"n":"x","baz":0})"));
  auto legacy = schema(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                           "dependencies": {"a": ["b"], "c": false}})");
  EXPECT_TRUE(accepts_text(legacy, R"({"b":1,"a":2})"));
  EXPECT_FALSE(accepts_text(legacy, R"({"a":2})"));
  EXPECT_FALSE(accepts_text(legacy, R"({"c":2})"));
}

// References by URI: $id bases (and draft 7's "#name" ids), $anchor, pointers within an embedded resource.
TEST(JsonSchema, ReferencesThroughIdsAndAnchors) {
  auto g = schema(R"({"$id": "http://example.com/root.json",
                      "properties": {"a": {"$ref": "#num"}, "b": {"$ref": "item.json"},
                                     "c": {"$ref": "item.json#/$defs/s"},
                                     "d": {"$ref": "http://example.com/root.json#/$defs/n"}},
                      "$defs": {"n": {"$anchor": "num", "type": "number"},
                                "i": {"$id": "item.json", "type": "array", "items": {"$ref": "#/$defs/s"},
                                      "$defs": {"s": {"type": "string"}}}}})");
  EXPECT_TRUE(accepts_text(g, R"({"a":1,"b":["x"],"c":"y","d":2})"));
  EXPECT_FALSE(accepts_text(g, R"({"a":"1"})"));
  EXPECT_FALSE(accepts_text(g, R"({"b":[1]})"));
  EXPECT_FALSE(accepts_text(g, R"({"c":1})"));
  auto legacy = schema(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                           "allOf": [{"$ref": "#foo"}], "definitions": {"A": {"$id": "#foo", "type": "integer"}}})");
  EXPECT_TRUE(accepts_text(legacy, "1"));
  EXPECT_FALSE(accepts_text(legacy, "\"a\""));
  EXPECT_NE(refusal(R"({"$ref": "http://example.com/other.json"})").find("'$ref'"), std::string::npos);
  EXPECT_NE(refusal(R"({"$ref": "#nowhere"})").find("'$ref'"), std::string::npos);
}

// unevaluatedProperties / unevaluatedItems hold for what the merged schema
// does not list; a subschema's own is never merged into another's.
TEST(JsonSchema, UnevaluatedPropertiesAndItems) {
  auto g = schema(R"({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}],
                      "anyOf": [{"properties": {"c": {}}}, {"required": ["d"]}], "unevaluatedProperties": false})");
  EXPECT_TRUE(accepts_text(g, R"({"a":1,"b":2,"c":3})"));
  EXPECT_FALSE(accepts_text(g, R"({"a":1,"e":2})"));
  EXPECT_FALSE(accepts_text(g, R"({"d":1})"));  // required does not evaluate d
  auto items = schema(R"({"allOf": [{"prefixItems": [true]}], "unevaluatedItems": {"type": "string"}})");
  EXPECT_TRUE(accepts_text(items, R"([1,"a"])"));
  EXPECT_FALSE(accepts_text(items, "[1,2]"));
  EXPECT_NE(refusal(R"({"allOf": [{"properties": {"a": {}}, "unevaluatedProperties": false}],
                         "properties": {"b": {}}})")
                .find("'unevaluatedProperties'"),
            std::string::npos);
}

// enum and const beside other keywords: each value is checked against them.
TEST(JsonSchema, EnumBesideOtherKeywordsKeepsTheValuesTheyAccept) {
  auto g = schema(R"({"enum": ["a", "bb", "ccc", 1, 2.5, {"x": 1}, {"x": "y"}], "maxLength": 2, "minimum": 2,
                      "properties": {"x": {"type": "string"}}})");
  for (const char* ok : {"\"a\"", "\"bb\"", "2.5", R"({"x":"y"})"}) EXPECT_TRUE(accepts_text(g, ok)) << ok;
  for (const char* bad : {"\"ccc\"", "1", R"({"x":1})"}) EXPECT_FALSE(accepts_text(g, bad)) << bad;
  auto merged = schema(R"({"allOf": [{"enum": ["ab", "abc"]}, {"type": "string", "pattern": "c$"}]})");
  EXPECT_TRUE(accepts_text(merged, "\"abc\""));
  EXPECT_FALSE(accepts_text(merged, "\"ab\""));
  EXPECT_NE(refusal(R"({"const": 3, "multipleOf": 3})").find("'multipleOf'"), std::string::npos);
}

// What the error says when nothing satisfies a schema.
TEST(JsonSchema, ImpossibleSchemasSayWhy) {
  EXPECT_NE(refusal("false").find("'false'"), std::string::npos);
  EXPECT_NE(refusal(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})").find("'type'"), std::string::npos);
  EXPECT_NE(refusal(R"({"type": "array", "minItems": 2, "maxItems": 1})").find("'minItems'"), std::string::npos);
  EXPECT_NE(refusal(R"({"type": "object", "properties": {"a": false}, "required": ["a"]})").find("'required'"),
            std::string::npos);
}

TEST(JsonSchema, AnyJsonObject) {
  auto g = compile_any_json_object();
  EXPECT_TRUE(accepts_text(g, R"({"a": [1, 2.5e3, "x", null, {"b": {}}], "c": false})"));
  EXPECT_FALSE(accepts_text(g, "[1]"));
  EXPECT_FALSE(accepts_text(g, R"({"a": })"));
}

}  // namespace
}  // namespace skiff::grammar

namespace skiff::grammar {
namespace {

TEST(JsonSchema, BoundsThatLeaveNothingAreRefused) {
  for (const char* s : {R"({"type": "string", "minLength": 5, "maxLength": 2})",
                        R"({"type": "integer", "minimum": 5, "maximum": 2})",
                        R"({"type": "number", "exclusiveMinimum": 3, "maximum": 3})",
                        R"({"type": "integer", "minimum": 2.5, "maximum": 2.9})"})
    EXPECT_THROW(compile_json_schema(nlohmann::ordered_json::parse(s)), Error) << s;
  EXPECT_TRUE(accepts_text(compile_json_schema(nlohmann::ordered_json::parse(R"({"type": "integer", "minimum": 3, "maximum": 3})")), "3"));
}

}  // namespace
}  // namespace skiff::grammar

namespace skiff::grammar {
namespace {

TEST(JsonSchema, ZeroAsALowerBoundAdmitsOneDigitNumbers) {
  auto ge = compile_json_schema(nlohmann::ordered_json::parse(R"({"type": "number", "minimum": 0})"));
  auto gt = compile_json_schema(nlohmann::ordered_json::parse(R"({"type": "number", "exclusiveMinimum": 0})"));
  for (const char* ok : {"7", "2.5", "0.5", "13"}) {
    EXPECT_TRUE(accepts_text(ge, ok)) << ok;
    EXPECT_TRUE(accepts_text(gt, ok)) << ok;
  }
  EXPECT_TRUE(accepts_text(ge, "0"));
  EXPECT_FALSE(accepts_text(gt, "0"));
  EXPECT_FALSE(accepts_text(ge, "-1"));
}

// The mask takes whole slices of the vocabulary where a lexer state takes any
// text of their class (JSON string text, letters and digits), and reuses a
// lexeme's end for every token that shares it: each checked against trying
// every token, along texts that pass through those states.
TEST(JsonSchema, MasksEqualTryingEveryToken) {
  struct Case {
    const char* schema;
    std::vector<std::string> texts;
  };
  const std::vector<Case> cases = {
      // A length bound counts characters: near its end fewer tokens fit.
      {R"({"type": "string", "maxLength": 40})",
       {R"("Hello world, the length of this is 40..")", "\"\u00e9t\u00e9 \\n \u00e9\u00e9 bounded\""}},
      // Keys of an open object: a listed name, or any other string (after them).
      {R"({"type": "object", "properties": {"name": {"type": "string"}, "id": {"type": "integer"}}})",
       {R"({"name":"a b","id":2,"other key with spaces and more":1})", "{\n  \"name\": \"y\",\n  \"nam\": \"x\"\n}"}},
      // Strings of an enum are one lexeme.
      {R"({"type": "array", "items": {"enum": ["MIT", "Apache-2.0", "MIT-0", "BSD-3-Clause", 7, null]}})",
       {R"(["MIT-0","MIT",7,null,"BSD-3-Clause"])", "[\n  \"Apache-2.0\",\n  7\n]"}},
      // Many optional properties: after each value any later one may come.
      {R"({"type": "object", "additionalProperties": false, "properties": {
           "a": {"type": "boolean"}, "b": {"type": "boolean"}, "c": {"type": "integer"}, "d": {"type": "boolean"},
           "e": {"type": "string"}, "f": {"type": "boolean"}, "g": {"type": "boolean"}, "h": {"type": "boolean"}}})",
       {R"({"a":true,"c":3,"f":false,"h":true})", "{\n  \"b\": false,\n  \"e\": \"x\",\n  \"g\": true\n}"}},
      {R"({"type": "string", "pattern": "^[a-z0-9-]+$"})", {R"("arn-aws-kms-key-0123456789abcdef-long-name")"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.schema);
    ASSERT_NO_FATAL_FAILURE(expect_masks_along(schema(c.schema), c.texts, pieces_vocab(c.texts, true)));
  }
}

TEST(JsonSchema, LexerStatesThatTakeAnyTextOfAClass) {
  auto lexer_state_after = [](const std::shared_ptr<const Grammar>& g, const std::string& text) {
    // Greedy lexing, as the matcher does: where a lexeme cannot go on, it ends.
    const Lexer& lexer = g->lexer();
    EarleyParser parser(g);
    int32_t state = parser.lexer_start();
    for (char c : text) {
      int32_t next = lexer.next(state, static_cast<uint8_t>(c));
      if (next == Lexer::kDead) {
        EXPECT_TRUE(parser.scan(lexer.accepts(state))) << text;
        next = lexer.next(parser.lexer_start(), static_cast<uint8_t>(c));
      }
      EXPECT_NE(next, Lexer::kDead) << text;
      if (next == Lexer::kDead) return parser.lexer_start();
      state = next;
    }
    return state;
  };
  auto plain = schema(R"({"type": "string"})");
  EXPECT_TRUE(plain->lexer().takes_any_text(lexer_state_after(plain, "\"ab"), TextClass::JsonString));
  auto bounded = schema(R"({"type": "string", "maxLength": 100})");
  EXPECT_FALSE(bounded->lexer().takes_any_text(lexer_state_after(bounded, "\"ab"), TextClass::JsonString));
  auto open = schema(R"({"type": "object", "properties": {"name": {"type": "integer"}}})");
  EXPECT_TRUE(open->lexer().takes_any_text(lexer_state_after(open, "{\"na"), TextClass::JsonString));
  auto closed = schema(R"({"type": "object", "properties": {"name": {"type": "integer"}}, "additionalProperties": false})");
  EXPECT_FALSE(closed->lexer().takes_any_text(lexer_state_after(closed, "{\"na"), TextClass::JsonString));
  auto word = schema(R"({"type": "string", "pattern": "^[a-zA-Z0-9._-]+$"})");
  EXPECT_TRUE(word->lexer().takes_any_text(lexer_state_after(word, "\"a"), TextClass::Alphanumeric));
  EXPECT_FALSE(word->lexer().takes_any_text(lexer_state_after(word, "\"a"), TextClass::JsonString));
  auto lower = schema(R"({"type": "string", "pattern": "^[a-z0-9]+$"})");  // no capitals
  EXPECT_FALSE(lower->lexer().takes_any_text(lexer_state_after(lower, "\"a"), TextClass::Alphanumeric));
}

}  // namespace
}  // namespace skiff::grammar

// JSON Schema grammars on hand-written documents; the official test suite
// runs through `skiff grammar` in tests/python/test_json_schema_suite.py.
#include <gtest/gtest.h>

#include "base/error.h"
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

TEST(JsonSchema, AnyJsonObject) {
  auto g = compile_any_json_object();
  EXPECT_TRUE(accepts_text(g, R"({"a": [1, 2.5e3, "x", null, {"b": {}}], "c": false})"));
  EXPECT_FALSE(accepts_text(g, "[1]"));
  EXPECT_FALSE(accepts_text(g, R"({"a": })"));
}

}  // namespace
}  // namespace skiff::grammar

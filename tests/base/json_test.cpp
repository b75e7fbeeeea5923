#include "base/json.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace skiff {
namespace {

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string error_of(const std::string& text) {
  try {
    parse_json(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ParseJson, BoundsNestingDepth) {
  EXPECT_NO_THROW(parse_json(nested(kMaxJsonDepth)));
  EXPECT_NE(error_of(nested(kMaxJsonDepth + 1)).find("nested deeper than 64"), std::string::npos);
  // 60k levels would overflow the stack when the value is copied or printed.
  EXPECT_NE(error_of("{\"id\": " + nested(60000) + "}").find("nested deeper"), std::string::npos);
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100; ++i) s += "{\"a\":";
    return s + "1" + std::string(100, '}');
  }();
  EXPECT_NE(error_of(objects).find("nested deeper"), std::string::npos);
  EXPECT_EQ(parse_json(R"({"a": [1, {"b": [2]}]})")["a"][1]["b"][0], 2);
}

TEST(ParseJson, SyntaxErrorsAreSkiffErrorsWithoutTheLibraryTag) {
  const std::string e = error_of(R"({"prompt": )");
  EXPECT_EQ(e.rfind("invalid JSON: ", 0), 0u) << e;
  EXPECT_EQ(e.find("json.exception"), std::string::npos) << e;
  EXPECT_NE(error_of("\"\xff\"").find("invalid JSON"), std::string::npos);  // bad UTF-8
}

TEST(JsonExcerpt, CutsLongValuesOnACharacterBoundary) {
  EXPECT_EQ(json_excerpt(nlohmann::json::parse(R"([1,"a"])")), R"([1,"a"])");
  const std::string long_text = "\"" + std::string(1000, 'x') + "\"";
  EXPECT_EQ(json_excerpt(nlohmann::json::parse(long_text), 10), "\"xxxxxxxxx...");
  const nlohmann::json euros = "\u20ac\u20ac\u20ac\u20ac";
  const std::string cut = json_excerpt(euros, 5);  // '"' + one 3-byte euro, not half of the next
  EXPECT_EQ(cut, "\"\u20ac...");
}

}  // namespace
}  // namespace skiff

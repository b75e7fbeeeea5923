// api/request_body: a request's JSON read under a bound on its memory, with a
// completion prompt's token-id lists packed and every other value as JSON.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>

#include "api/api_model.h"
#include "api/completion_request.h"
#include "api/request_body.h"
#include "api/request_fields.h"
#include "stories_model.h"

namespace skiff {
namespace {

using Ids = std::vector<int32_t>;

ojson packed(const std::string& body) { return parse_request_body(body, PromptTokenLists::kPacked); }

RequestError refusal(const std::string& body) {
  try {
    packed(body);
  } catch (const RequestError& e) {
    return e;
  }
  ADD_FAILURE() << "no RequestError for " << body.substr(0, 80);
  return RequestError(0, "");
}

TEST(RequestBody, ThePromptsTokenListsArePacked) {
  const ojson one = packed(R"({"prompt": [5, 6, 2147483647], "n": 2})");
  ASSERT_TRUE(one["prompt"].is_binary());
  EXPECT_EQ(packed_token_ids(one["prompt"]), (Ids{5, 6, 2147483647}));
  EXPECT_EQ(one["n"], 2);

  const ojson several = packed(R"({"prompt": [[1, 2, 3], "Once", [4]], "stop_token_ids": [7, 8]})");
  const ojson& prompt = several["prompt"];
  ASSERT_TRUE(prompt.is_array() && prompt.size() == 3);
  EXPECT_EQ(packed_token_ids(prompt[0]), (Ids{1, 2, 3}));
  EXPECT_EQ(prompt[1], "Once");
  EXPECT_EQ(packed_token_ids(prompt[2]), (Ids{4}));
  EXPECT_EQ(several["stop_token_ids"], ojson::parse("[7, 8]"));  // only the prompt's lists
}

TEST(RequestBody, AnythingElseStaysJson) {
  for (const char* body : {R"({"prompt": [1, "x"]})", R"({"prompt": [[1, 2.5]]})", R"({"prompt": [[1, 4294967296]]})",
                           R"({"prompt": [[-1, -2147483649]]})", R"({"prompt": []})", R"({"prompt": [[], [1, null]]})",
                           R"({"prompt": [[1, [2]]]})", R"({"prompt": [[[1]]]})", R"({"prompt": [{"a": [1]}]})",
                           R"({"x": {"prompt": [1]}})", R"([{"prompt": [1]}, 1])"}) {
    const ojson expected = ojson::parse(body);
    if (!expected.is_object()) {
      EXPECT_EQ(refusal(body).status(), 400);
      continue;
    }
    EXPECT_EQ(packed(body), expected) << body;
    EXPECT_EQ(packed(body).dump(), expected.dump()) << body;  // integers' signedness as nlohmann reads them
  }
  EXPECT_EQ(parse_request_body(R"({"prompt": [1, 2]})"), ojson::parse(R"({"prompt": [1, 2]})"));  // kAsJson
}

// Past a few keys an object finds them by an index (a scan each would make
// n keys cost n²/2): the same members, in the same order, the last value of a
// key given twice, as nlohmann's own parser reads them.
TEST(RequestBody, ObjectsOfManyKeysReadAsNlohmannReadsThem) {
  std::string body = R"({"prompt": "x", "o": {)";
  for (int i = 0; i < 1000; ++i) body += fmt::format(R"("k{}": {}, )", i % 700, i);
  body += R"("k3": {"k3": 1, "k3": 2}}, "prompt": "y"})";
  const ojson expected = ojson::parse(body);
  EXPECT_EQ(packed(body).dump(), expected.dump());
  EXPECT_EQ(expected["o"].size(), 700u);
}

TEST(RequestBody, BadJsonIsA400) {
  EXPECT_NE(std::string(refusal(R"({"prompt": [1, 2)").what()).find("invalid JSON"), std::string::npos);
  EXPECT_NE(std::string(refusal(std::string(65, '[') + std::string(65, ']')).what()).find("nested deeper than 64"),
            std::string::npos);
  EXPECT_NE(std::string(refusal(R"("text")").what()).find("must be a JSON object, got string"), std::string::npos);
}

// Packed ids take 2 bytes per byte of their JSON; an array of empty objects
// would take 16 as a DOM: past the bound, refused before it is held.
TEST(RequestBody, ValuesPastTheBoundAre413) {
  const auto list = [](const char* element, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += std::string(i ? "," : "") + element;
    return s + "]";
  };
  const ojson ids = packed(R"({"prompt": )" + list("7", 1'000'000) + "}");
  EXPECT_EQ(packed_token_ids(ids["prompt"]).size(), 1'000'000u);
  const RequestError e = refusal(R"({"x": )" + list("{}", 1'000'000) + "}");
  EXPECT_EQ(e.status(), 413);
  EXPECT_NE(std::string(e.what()).find("MiB of memory"), std::string::npos) << e.what();
}

TEST(RequestBody, PackedPromptsReadAsTheirJson) {
  const ApiModel model{"stories", testing::stories_tokenizer(), 256, nullptr};
  const std::string body = R"({"prompt": [[1, 2, 3], "Once", [4]], "max_tokens": 3})";
  const CompletionRequest r = parse_completion_request(model, packed(body));
  EXPECT_EQ(r.prompts, parse_completion_request(model, ojson::parse(body)).prompts);
  EXPECT_EQ(r.prompt_texts[0], "");  // a list of ids keeps its text only for echo

  const auto status_of = [&](const std::string& b) {
    try {
      parse_completion_request(model, packed(b));
    } catch (const RequestError& e) {
      return e.status();
    }
    return 0;
  };
  EXPECT_EQ(status_of(R"({"prompt": [[1, 99999]]})"), 400);  // outside the vocabulary
  EXPECT_EQ(status_of(R"({"prompt": [1, -1]})"), 400);
  std::string too_long = R"({"prompt": [[1)";
  for (int i = 0; i < 300; ++i) too_long += ",1";
  EXPECT_EQ(status_of(too_long + "]]}"), 400);  // past the context of 256
}

}  // namespace
}  // namespace skiff

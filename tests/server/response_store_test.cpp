// server/response_store: responses kept for previous_response_id, bounded in
// count and in bytes, the oldest dropped first.
#include <gtest/gtest.h>

#include <string>

#include "server/response_store.h"

namespace skiff {
namespace {

StoredResponse response(const std::string& text) {
  return StoredResponse{nlohmann::ordered_json::array({{{"role", "user"}, {"content", text}}}),
                        {{"id", "resp"}, {"output", text}}};
}

TEST(ResponseStore, KeepsWhatItIsGiven) {
  ResponseStore store(4, 1 << 20);
  store.put("a", response("hello"));
  const auto found = store.find("a");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->items[0]["content"], "hello");
  EXPECT_EQ(found->response["output"], "hello");
  EXPECT_EQ(store.find("b"), nullptr);
}

TEST(ResponseStore, DropsTheOldestBeyondItsCount) {
  ResponseStore store(3, 1 << 20);
  for (const char* id : {"a", "b", "c", "d"}) store.put(id, response(id));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.find("a"), nullptr);
  for (const char* id : {"b", "c", "d"}) EXPECT_NE(store.find(id), nullptr) << id;
}

TEST(ResponseStore, DropsTheOldestBeyondItsBytes) {
  const StoredResponse one = response(std::string(100, 'x'));
  const size_t bytes = one.items.dump().size() + one.response.dump().size();
  ResponseStore store(100, 2 * bytes + bytes / 2);  // room for two
  for (const char* id : {"a", "b", "c"}) store.put(id, response(std::string(100, 'x')));
  EXPECT_EQ(store.find("a"), nullptr);
  EXPECT_NE(store.find("b"), nullptr);
  EXPECT_NE(store.find("c"), nullptr);
  // One response over the bound alone is not kept, and drops nothing.
  store.put("huge", response(std::string(4 * bytes, 'y')));
  EXPECT_EQ(store.find("huge"), nullptr);
  EXPECT_EQ(store.size(), 2u);
}

TEST(ResponseStore, AFoundResponseOutlivesItsDropping) {
  ResponseStore store(1, 1 << 20);
  store.put("a", response("first"));
  const auto held = store.find("a");
  store.put("b", response("second"));
  EXPECT_EQ(store.find("a"), nullptr);
  EXPECT_EQ(held->items[0]["content"], "first");
}

}  // namespace
}  // namespace skiff

// The responses /v1/responses keeps for previous_response_id (and GET
// /v1/responses/ID): in memory, each with the conversation's items that a
// next turn continues; bounded in count and in bytes, the oldest dropped
// first. Shared by the handler threads.
#pragma once
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

namespace skiff {

struct StoredResponse {
  nlohmann::ordered_json items;     // the input items so far, then the response's output items
  nlohmann::ordered_json response;  // the response object as it was answered
};

class ResponseStore {
 public:
  ResponseStore(size_t max_count, size_t max_bytes);

  // Keeps a response under id, dropping the oldest ones until both bounds
  // hold (one response over max_bytes alone is not kept).
  void put(const std::string& id, StoredResponse response);
  // Null where none is kept under id.
  std::shared_ptr<const StoredResponse> find(const std::string& id) const;
  size_t size() const;

 private:
  struct Entry {
    std::string id;
    size_t bytes;
  };
  const size_t max_count_, max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const StoredResponse>> by_id_;
  std::deque<Entry> oldest_first_;
  size_t bytes_ = 0;
};

}  // namespace skiff

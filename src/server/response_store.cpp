#include "server/response_store.h"

namespace skiff {

ResponseStore::ResponseStore(size_t max_count, size_t max_bytes) : max_count_(max_count), max_bytes_(max_bytes) {}

void ResponseStore::put(const std::string& id, StoredResponse response) {
  // The JSON text's size stands for the memory it holds (within a small factor).
  const size_t bytes = response.items.dump().size() + response.response.dump().size();
  if (bytes > max_bytes_ || max_count_ == 0) return;
  auto stored = std::make_shared<const StoredResponse>(std::move(response));
  const std::lock_guard lock(mutex_);
  while (!oldest_first_.empty() && (oldest_first_.size() >= max_count_ || bytes_ + bytes > max_bytes_)) {
    by_id_.erase(oldest_first_.front().id);
    bytes_ -= oldest_first_.front().bytes;
    oldest_first_.pop_front();
  }
  if (!by_id_.emplace(id, std::move(stored)).second) return;  // ids are random: a repeat is not kept twice
  oldest_first_.push_back({id, bytes});
  bytes_ += bytes;
}

std::shared_ptr<const StoredResponse> ResponseStore::find(const std::string& id) const {
  const std::lock_guard lock(mutex_);
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

size_t ResponseStore::size() const {
  const std::lock_guard lock(mutex_);
  return by_id_.size();
}

}  // namespace skiff

#include "api/request_body.h"

#include <fmt/core.h>

#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "api/request_fields.h"
#include "base/json.h"

namespace skiff {
namespace {

using ojson = nlohmann::ordered_json;

// What the DOM holds, roughly: every value its slot, every container a block
// of its own, strings past libstdc++'s inline 15 characters their text.
constexpr size_t kValueBytes = sizeof(ojson);
constexpr size_t kContainerBytes = 32;
constexpr size_t kInlineStringChars = 15;

// An object's keys → their members' positions, once it has this many.
using KeyIndex = std::unordered_map<std::string, size_t>;
constexpr size_t kScannedKeys = 32;
constexpr size_t kIndexEntryBytes = 64;  // a node: the key, the position, the hash, the links

size_t heap_bytes(const std::string& s) { return s.size() > kInlineStringChars ? s.size() + 1 : 0; }

// nlohmann's SAX events built into a DOM, as its own DOM parser does, and
// counted against the bound. A list that may be a prompt's token ids is held
// as packed ids while only integers come; anything else turns it back into
// JSON ("spills" it) and the parse goes on as usual.
class BoundedBodyReader {
 public:
  BoundedBodyReader(ojson& root, size_t max_bytes, PromptTokenLists token_lists)
      : root_(root), max_bytes_(max_bytes), pack_(token_lists == PromptTokenLists::kPacked) {}

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(int64_t v) { return packing_ && fits_int32(v) ? pack(static_cast<int32_t>(v)) : value(v); }
  bool number_unsigned(uint64_t v) {
    return packing_ && v <= uint64_t{std::numeric_limits<int32_t>::max()} ? pack(static_cast<int32_t>(v)) : value(v);
  }
  bool number_float(double v, const std::string&) { return value(v); }
  bool string(std::string& v) {
    count(heap_bytes(v));
    return value(std::move(v));
  }
  bool binary(ojson::binary_t& v) { return value(std::move(v)); }  // JSON text has none

  bool start_object(size_t) { return open(ojson::object()); }
  bool key(std::string& k) {
    count(sizeof(std::string) + heap_bytes(k));
    if (stack_.size() == 1) at_prompt_ = k == "prompt";
    member_ = &member(k);
    return true;
  }
  bool end_object() {
    close();
    return true;
  }

  bool start_array(size_t) {
    spill();
    const bool prompt_value = stack_.size() == 1 && at_prompt_;
    const bool prompt_element = stack_.size() == 2 && prompt_array_ && stack_.back() == prompt_array_;
    if (pack_ && (prompt_value || prompt_element)) {
      packing_ = true;  // no DOM array until something other than an id comes
      return true;
    }
    return open(ojson::array());
  }
  bool end_array() {
    if (packing_ && !ids_.empty()) {
      packing_ = false;
      count(kValueBytes);
      place(ojson::binary(std::exchange(ids_, {})));
      return true;
    }
    spill();  // an empty list stays an empty array
    if (stack_.back() == prompt_array_) prompt_array_ = nullptr;
    close();
    return true;
  }

  bool parse_error(size_t, const std::string&, const nlohmann::json::exception& e) {
    throw RequestError(400, "invalid JSON: " + json_error_text(e));
  }

 private:
  static bool fits_int32(int64_t v) {
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  }

  void count(size_t bytes) {
    held_ += bytes;
    if (held_ > max_bytes_)
      throw RequestError(413, fmt::format("the request's JSON would take more than {} MiB of memory to read "
                                          "({}x its size and 1 MiB): send fewer or smaller values",
                                          max_bytes_ >> 20, kParsedBytesPerBodyByte));
  }

  bool pack(int32_t id) {
    count(sizeof id);
    const size_t n = ids_.size();
    ids_.resize(n + sizeof id);
    std::memcpy(ids_.data() + n, &id, sizeof id);
    return true;
  }

  // The list being packed as the JSON array it was: ids read as nlohmann
  // reads them (non-negative integers unsigned).
  void spill() {
    if (!packing_) return;
    packing_ = false;
    const bool prompt_value = stack_.size() == 1;
    open(ojson::array());
    if (prompt_value) prompt_array_ = stack_.back();
    for (size_t at = 0; at < ids_.size(); at += sizeof(int32_t)) {
      int32_t id;
      std::memcpy(&id, ids_.data() + at, sizeof id);
      if (id >= 0) value(static_cast<uint64_t>(id));
      else value(static_cast<int64_t>(id));
    }
    held_ -= ids_.size();
    ids_ = {};
  }

  template <typename T>
  bool value(T&& v) {
    spill();
    count(kValueBytes);
    place(ojson(std::forward<T>(v)));
    return true;
  }

  bool open(ojson container) {
    spill();
    if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth))
      throw RequestError(400, fmt::format("invalid JSON: nested deeper than {} levels", kMaxJsonDepth));
    count(kValueBytes + kContainerBytes);
    stack_.push_back(place(std::move(container)));
    key_indexes_.emplace_back();
    return true;
  }

  void close() {
    stack_.pop_back();
    key_indexes_.pop_back();
  }

  // The slot of member k of the open object: a new one, or for a key given
  // twice the first one's (the last value wins, as in nlohmann's parser).
  // ordered_map finds a key by a scan, so that an object of n keys would cost
  // n²/2 comparisons (100,000 keys: 9 s): past a few, an index finds it.
  ojson& member(std::string& k) {
    ojson::object_t& members = stack_.back()->get_ref<ojson::object_t&>();
    if (members.size() < kScannedKeys) return members[k];
    KeyIndex& index = key_indexes_.back();
    if (index.empty())
      for (size_t i = 0; i < members.size(); ++i) add_to_index(index, members.begin()[i].first, i);
    const auto found = index.find(k);
    if (found != index.end()) return members.begin()[found->second].second;
    add_to_index(index, k, members.size());
    return members.emplace_back(std::move(k), nullptr).second;
  }

  void add_to_index(KeyIndex& index, const std::string& k, size_t at) {
    count(kIndexEntryBytes + heap_bytes(k));
    index.emplace(k, at);
  }

  // Where the value goes: the root, the open array's end, or the member whose key came last.
  ojson* place(ojson v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    ojson& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *member_ = std::move(v);
    return member_;
  }

  ojson& root_;
  const size_t max_bytes_;
  const bool pack_;
  size_t held_ = 0;
  std::vector<ojson*> stack_;  // the open containers, outermost first
  std::vector<KeyIndex> key_indexes_;  // each open container's (objects of kScannedKeys keys or more)
  ojson* member_ = nullptr;    // the slot of the object member being read
  bool at_prompt_ = false;     // the root's member being read is "prompt"
  ojson* prompt_array_ = nullptr;  // "prompt"'s array while it is open
  bool packing_ = false;
  std::vector<uint8_t> ids_;  // the packed list's ids so far
};

}  // namespace

ojson parse_request_body(std::string_view body, PromptTokenLists token_lists) {
  ojson j;
  BoundedBodyReader reader(j, kParsedBytesBase + kParsedBytesPerBodyByte * body.size(), token_lists);
  ojson::sax_parse(body.begin(), body.end(), &reader);
  if (!j.is_object()) throw RequestError(400, fmt::format("the request body must be a JSON object, got {}", j.type_name()));
  return j;
}

std::vector<int32_t> packed_token_ids(const ojson& v) {
  const ojson::binary_t& bytes = v.get_binary();
  std::vector<int32_t> ids(bytes.size() / sizeof(int32_t));
  std::memcpy(ids.data(), bytes.data(), ids.size() * sizeof(int32_t));
  return ids;
}

}  // namespace skiff

// An HTTP request's JSON body, read under a bound on the memory its values
// take: a DOM costs 8-20 bytes per byte of dense JSON (16 bytes per number,
// a heap block per object), so a 16 MiB body could take hundreds of MB. The
// parse counts what it holds and refuses a body past the bound (413), and
// holds the token-id lists of a completion's prompt packed, 4 bytes an id.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace skiff {

// What a body's values may take while held: this many bytes per byte of the
// body, and this many more (small requests' objects cost more than their text).
inline constexpr size_t kParsedBytesPerBodyByte = 8;
inline constexpr size_t kParsedBytesBase = size_t{1} << 20;

enum class PromptTokenLists { kAsJson, kPacked };

// The body: a JSON object with its keys in their order, or RequestError (400:
// not JSON, not an object, nested too deep; 413: its values would take more
// than the bound above). kPacked: the top-level "prompt"'s lists of token ids
// (the prompt itself, or each of its elements) that hold only integers that
// fit int32 become binary values (read them with packed_token_ids); other
// values stay JSON.
nlohmann::ordered_json parse_request_body(std::string_view body,
                                          PromptTokenLists token_lists = PromptTokenLists::kAsJson);

// A token list parse_request_body packed (v.is_binary()): its ids.
std::vector<int32_t> packed_token_ids(const nlohmann::ordered_json& v);

}  // namespace skiff

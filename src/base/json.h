// JSON from outside (request lines, config.json, tokenizer.json, safetensors
// headers): nlohmann's copy and dump() recurse once per nesting level, so a
// value nested 60k deep overflows the stack wherever it is copied or printed.
// Parsing bounds the depth; messages quote an excerpt, never a value whole.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace skiff {

// Real files nest a few levels (tokenizer.json: ~6); requests less.
inline constexpr int kMaxJsonDepth = 64;

// Parses text; throws Error "invalid JSON: ..." (nlohmann's position and
// reason, without its exception tag) or "JSON nested deeper than N levels".
nlohmann::json parse_json(std::string_view text, int max_depth = kMaxJsonDepth);
// The same, keeping objects' keys in their order (chat messages and tools:
// templates print them back).
nlohmann::ordered_json parse_ordered_json(std::string_view text, int max_depth = kMaxJsonDepth);

// nlohmann's message without its "[json.exception.type_error.302] " tag.
std::string json_error_text(const nlohmann::json::exception& e);

// Typed optional fields of an object: the fallback when absent or null, else
// the value, or Error "'key' must be a string/boolean, got ..." naming it.
std::string string_field(const nlohmann::json& object, const char* key, const std::string& fallback);
bool bool_field(const nlohmann::json& object, const char* key, bool fallback);
// An array of strings: empty when absent or null, else Error as above.
std::vector<std::string> string_array_field(const nlohmann::json& object, const char* key);

// v printed compactly, cut to about max_chars with "..." (invalid UTF-8 replaced).
std::string json_excerpt(const nlohmann::json& v, size_t max_chars = 80);

}  // namespace skiff

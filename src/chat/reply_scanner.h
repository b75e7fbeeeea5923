// Reading a model's reply for the chat syntaxes (chat_output.h): markers that
// may be cut off at the end of a partial text, and the extent of JSON values
// without parsing them, so that a partial parse can tell "not yet decided"
// (held back) from "not this syntax" (content).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::chat_syntax {

inline constexpr size_t kNone = std::string_view::npos;

// How far a piece of syntax reaches in the text.
enum class Reach {
  kWhole,   // all of it is there
  kCut,     // the text ends inside it: a longer text may complete it
  kAbsent,  // the text says otherwise
};

bool is_space(char c);
size_t skip_space(std::string_view text, size_t pos);
std::string_view trim(std::string_view text);
std::string_view trim_end(std::string_view text);

// Whether `literal` starts at pos (kCut: the text ends within a prefix of it).
Reach literal_at(std::string_view text, size_t pos, std::string_view literal);
// The same after skipping spaces; on kWhole, *end is just past the literal.
Reach literal_after_space(std::string_view text, size_t pos, std::string_view literal, size_t* end);

struct MarkerHit {
  size_t pos = kNone;
  size_t index = 0;  // which marker
};
// The first whole occurrence at or after `from` of any marker (the longest
// where several start at once); pos kNone when none.
MarkerHit find_marker(std::string_view text, size_t from, const std::vector<std::string>& markers);
// How many characters at the end of text (at or after `from`) are a proper
// prefix of a marker: what a partial parse holds back, since the next token
// may complete the marker.
size_t cut_marker_length(std::string_view text, size_t from, const std::vector<std::string>& markers);

// The text from pos up to the first of `markers`. Whole: *marker_pos and
// *index say where and which. Cut (the text ends first): *marker_pos is where
// the undecided end begins (a cut marker held back when partial).
Reach text_until(std::string_view text, size_t pos, const std::vector<std::string>& markers, bool partial,
                 size_t* marker_pos, size_t* index = nullptr);

struct JsonExtent {
  Reach reach = Reach::kAbsent;
  size_t end = 0;  // kWhole: just past the value; kAbsent: where it went wrong
};
// The JSON value at pos (after spaces), checked as RFC 8259 has it. A number
// at the very end of the text is cut when `partial` (more digits may come).
JsonExtent json_value_extent(std::string_view text, size_t pos, bool partial);

struct JsonMember {
  std::string key;
  size_t value_begin = 0;
  JsonExtent value;
};
// The members of the JSON object at pos (after spaces), in order. Cut: the
// members so far, the last possibly with a cut value.
struct JsonObjectWalk {
  Reach reach = Reach::kAbsent;
  size_t end = 0;
  std::vector<JsonMember> members;
};
JsonObjectWalk walk_json_object(std::string_view text, size_t pos);

// The string a whole JSON string token spells (quotes included in `token`);
// nullopt when it is not one.
std::optional<std::string> decode_json_string(std::string_view token);

}  // namespace skiff::chat_syntax

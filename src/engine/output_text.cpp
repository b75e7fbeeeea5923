#include "engine/output_text.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace skiff {

OutputText::OutputText(const Tokenizer& tokenizer, std::vector<std::string> stop, int min_tokens,
                       bool render_control)
    : decoder_(tokenizer, /*at_text_start=*/false, render_control),
      stop_(std::move(stop)),
      unchecked_tokens_(min_tokens) {
  for (const std::string& s : stop_) {
    if (s.empty()) fail("stop strings must not be empty");
    if (!unicode::is_valid_utf8(s)) fail("stop string is not valid UTF-8");
  }
}

std::string OutputText::push(int32_t token) {
  if (stopped()) fail("push after the stop string \"{}\"", stop_reason_);
  if (finished_) fail("push after finish");
  if (unchecked_tokens_ > 0) {
    --unchecked_tokens_;
    held_ += decoder_.push(token);
    return release(held_.size());
  }
  return take(decoder_.push(token), /*at_end=*/false);
}

std::string OutputText::finish() {
  if (stopped()) return "";
  finished_ = true;
  // The U+FFFD of an unfinished character could still complete a stop string.
  return take(decoder_.flush(), /*at_end=*/true);
}

std::string OutputText::take(const std::string& decoded, bool at_end) {
  held_ += decoded;
  // Every match starts in held_: streamed text never ends with a stop string's
  // beginning, so the search stays within a few dozen bytes.
  const Match match = earliest_stop();
  if (match.stop) {
    stop_reason_ = *match.stop;
    held_.resize(match.pos);
    return release(held_.size());
  }
  return release(held_.size() - (at_end ? 0 : possible_stop_start()));
}

// The first match in the text; on a tie, the stop string listed first.
OutputText::Match OutputText::earliest_stop() const {
  Match earliest{held_.size(), nullptr};
  for (const std::string& s : stop_) {
    const size_t pos = held_.find(s);
    if (pos != std::string::npos && pos < earliest.pos) earliest = {pos, &s};
  }
  return earliest;
}

// Length of the longest end of held_ that begins some stop string. A stop
// string is whole UTF-8 characters, so this never splits one.
size_t OutputText::possible_stop_start() const {
  size_t longest = 0;
  for (const std::string& s : stop_) {
    for (size_t n = std::min(s.size() - 1, held_.size()); n > longest; --n) {
      if (std::string_view(held_).ends_with(std::string_view(s).substr(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

// Streams the first n bytes of held_.
std::string OutputText::release(size_t n) {
  std::string piece = held_.substr(0, n);
  held_.erase(0, n);
  text_ += piece;
  return piece;
}

}  // namespace skiff

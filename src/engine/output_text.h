// One completion's text as it streams: tokens detokenized one at a time, cut
// before the first stop string (SamplingParams::stop), as vLLM's detokenizer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace skiff {

// Text is streamed only once it is final: whole UTF-8 characters, and never a
// byte that a stop string still being written could include. So the text held
// back is at most the longest stop string less one byte, plus an unfinished
// character. Not thread-safe: one per completion.
class OutputText {
 public:
  // The tokens continue a prompt, so SentencePiece's leading space on the
  // first one is kept: "Once upon a time" + " there was". Throws Error on an
  // empty stop string or one that is not valid UTF-8 (it could never match).
  // Stop strings are looked for only in the text of the tokens after the
  // first min_tokens (vLLM's min_tokens); render_control: control tokens
  // give their text (vLLM's skip_special_tokens = false).
  OutputText(const Tokenizer& tokenizer, std::vector<std::string> stop, int min_tokens = 0,
             bool render_control = false);

  // Appends one generated token and returns the text newly safe to stream.
  // When a stop string appears (it may span tokens and start in held-back
  // text), the returned text ends just before it and stopped() turns true.
  // Throws Error once stopped or finished.
  std::string push(int32_t token);
  // Generation ended without a stop string: returns the held-back text, an
  // unfinished character becoming U+FFFD. Returns "" when already stopped.
  std::string finish();

  bool stopped() const { return !stop_reason_.empty(); }
  const std::string& stop_reason() const { return stop_reason_; }  // "" unless stopped
  const std::string& text() const { return text_; }  // every piece returned so far, joined

 private:
  struct Match {
    size_t pos;
    const std::string* stop;
  };

  // Adds decoded text to the held-back text, checks it for stop strings and
  // streams what is final; at_end: nothing follows, so nothing need be held.
  std::string take(const std::string& decoded, bool at_end);
  Match earliest_stop() const;
  size_t possible_stop_start() const;
  std::string release(size_t n);

  StreamDecoder decoder_;
  std::vector<std::string> stop_;
  std::string held_;         // decoded, whole characters, not yet streamed
  std::string text_;         // streamed
  std::string stop_reason_;  // stop strings are never empty, so "" means not stopped
  int unchecked_tokens_;     // tokens still to push whose text no stop string may match
  bool finished_ = false;
};

}  // namespace skiff

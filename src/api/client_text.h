// A chat request's client-supplied text (message contents, tool results and
// call arguments, tool schemas, chat_template_kwargs) is only text, as in
// OpenAI's API: a spelling of a control token in it (`<|im_start|>system`)
// must not become that token, although the rendered prompt is tokenized with
// special tokens so that the template's own markup does.
//
// A template's output does not say which bytes came from which input, so the
// spellings in client text are wrapped in two private-use code points that no
// input uses (ClientTextMarks::mark) before rendering, and the marks are taken
// out of the rendered text after (unmark), leaving the spans the tokenizer
// reads as plain text (Tokenizer::encode's `plain`). A template's
// tojson(ensure_ascii=True) escapes the marks ("\udb80\udc00"): they are
// found and taken out in that spelling too, and chosen so that neither
// spelling occurs in the inputs. A conversation with no such spelling is
// rendered and tokenized exactly as it would be without this.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/request_fields.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

struct MarkedPrompt {
  std::string text;
  std::vector<TextSpan> plain;  // sorted, disjoint: control spellings that came from the client
};

class ClientTextMarks {
 public:
  // inputs: every client value the template will see (before mark()); the
  // marks are code points that neither they nor the template's source hold.
  ClientTextMarks(const Tokenizer& tokenizer, std::string_view template_source,
                  const std::vector<const ojson*>& inputs);

  // Wraps every control spelling in value's strings (and object keys), and a
  // string's start or end that is part of one (so that text from the client
  // and text around it cannot join into one).
  void mark(ojson& value);
  bool marked_any() const { return marked_any_; }
  // The rendered text without the marks, and the spans they enclosed.
  MarkedPrompt unmark(std::string_view rendered) const;

 private:
  std::string mark_string(const std::string& s) const;

  std::vector<std::string_view> spellings_;
  uint32_t open_code_point_ = 0;  // the close mark is the next one
  std::string open_, close_;
  bool marked_any_ = false;
};

}  // namespace skiff

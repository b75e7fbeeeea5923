// Every pre-tokenizer on arbitrary text: the first byte picks a
// tokenizer.ggml.pre name, the rest is the text. The words must concatenate to
// the text (ill-formed UTF-8 read as U+FFFD), whatever the regexes, the
// hand-written matchers or the custom splits (AFMoE's digits) make of it.
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skiff;
  if (size == 0) return 0;
  static const std::vector<std::string_view> names = pre_tokenizer_names();
  const PreTokenizer type = pre_tokenizer_from_name(names[data[0] % names.size()]).type;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string joined;
  for (const std::string& word : pre_tokenize(text, type)) {
    if (word.empty()) std::abort();  // an empty match only cuts; it makes no word
    joined += word;
  }
  const auto cps = unicode::decode_utf8(text);
  if (joined != unicode::encode_utf8(cps, 0, cps.size())) std::abort();
  return 0;
}

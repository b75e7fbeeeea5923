// What the libFuzzer harnesses share. Each harness feeds its bytes to one
// reader the way untrusted input reaches it; a skiff::Error is the expected
// answer to bad input, and anything else (another exception, a sanitizer
// report, a crash, a hang, memory past libFuzzer's limit) is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"
#include "tokenizer/tokenizer.h"

namespace skiff::fuzz {

// The fuzzer's bytes as a file for readers that take a path: a memfd, so
// nothing touches the disk. Its path (/proc/self/fd/N) is valid while it lives.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size);
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// ../shared/models (the SKIFF_MODELS environment variable, else the build's
// SKIFF_MODELS_DIR): the only files harnesses read besides their inputs.
std::string models_dir();
std::string shared_dir();  // ../shared itself: models_dir()/..

// Runs f(); a skiff::Error (bad input, clearly refused) is swallowed.
template <class F>
void refusing_errors(F&& f) {
  try {
    f();
  } catch (const Error&) {
  }
}

// Splits input at the first occurrence of sep: [before, after); no sep: all before.
std::pair<std::string_view, std::string_view> split_at(std::string_view input, std::string_view sep);

// Text for tokenizers made from fuzzed files: words, digits, accents, an
// invalid byte, control-token text, whitespace runs.
inline constexpr std::string_view kSampleText = "Hello world! 12345 \u00fcn\u00ef\xff <s></s>\n\t  x";

// Encodes text with the flags' add_special (bit 0) and parse_special (bit 1),
// decodes the ids whole and streamed (render_control: bit 2), then decodes the
// bytes of text read as int32 ids: within the vocabulary, or (bit 3) any value,
// which the tokenizer must refuse with an Error when out of range.
void exercise_tokenizer(const Tokenizer& tokenizer, std::string_view text, uint8_t flags);

// The body of the tokenizer-file harnesses: data as the file load() reads,
// then the tokenizer it makes on kSampleText and on ids.
void fuzz_tokenizer_file(const uint8_t* data, size_t size,
                         std::unique_ptr<Tokenizer> (*load)(const std::string& path));

// The body of the harnesses over real vocabularies (GGUF files in
// ../shared/models/vocab, each loaded on first use): byte 0 picks one of
// files, byte 1 is exercise_tokenizer's flags, the rest its text.
void fuzz_vocabularies(std::span<const char* const> files, const uint8_t* data, size_t size);

}  // namespace skiff::fuzz

// Tokenizer scaling on pathological input: one character repeated, a letter
// under a deep stack of combining marks, and ordinary text, each at N/4 and N
// bytes. A ratio near 4 between the two times is linear; near 16, quadratic.
// Runs every GGUF vocabulary given (encode, no special parsing) and every
// pre-tokenizer type alone.
//
//   bench_tokenizer [--bytes 1048576] [--skip-types] [--skip-vocabs] [--parse-special] [VOCAB.gguf ...]
//   (no vocabularies: those with vectors in $SKIFF_MODELS/vocab, by default
//   ../shared/models/vocab from the repository root)
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/timer.h"
#include "gguf/gguf.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace {

struct Input {
  std::string name;
  std::string unit;  // repeated to the size asked
};

std::vector<Input> inputs() {
  return {
      {"'a' x N", "a"},
      {"' ' x N", " "},
      {"'\\n' x N", "\n"},
      {"'1' x N", "1"},
      {"'.' x N", "."},
      {"'\\'' x N", "'"},
      {"U+00E9 x N", "\xC3\xA9"},
      {"U+4E2D x N", "\xE4\xB8\xAD"},
      {"a + U+0301 x N", "\xCC\x81"},  // the base letter is put in front below
      {"'a\\n' x N", "a\n"},          // many fragments between special tokens
      {"text", "Hello world, it's 2026! \xE4\xBD\xA0\xE5\xA5\xBD  \n\tcaf\xC3\xA9 12345 "},
  };
}

std::string make(const Input& input, size_t bytes) {
  std::string text = input.name.starts_with("a + ") ? "a" : "";
  while (text.size() + input.unit.size() <= bytes) text += input.unit;
  return text;
}

double seconds_of(const std::function<void(const std::string&)>& run, const std::string& text) {
  skiff::Timer timer;
  run(text);
  return timer.seconds();
}

void measure(const std::string& what, const std::function<void(const std::string&)>& run, size_t bytes) {
  for (const Input& input : inputs()) {
    const double small = seconds_of(run, make(input, bytes / 4));
    const double large = seconds_of(run, make(input, bytes));
    fmt::print("{:<28} {:<16} {:9.4f} s {:9.4f} s  x{:5.1f}\n", what, input.name, small, large,
               small > 0 ? large / small : 0.0);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = size_t{1} << 20;
  bool skip_types = false;
  bool parse_special = false;
  bool skip_vocabs = false;
  std::vector<std::string> vocabs;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--bytes") && i + 1 < argc) {
      bytes = std::stoull(argv[++i]);
    } else if (!std::strcmp(argv[i], "--skip-types")) {
      skip_types = true;
    } else if (!std::strcmp(argv[i], "--skip-vocabs")) {
      skip_vocabs = true;
    } else if (!std::strcmp(argv[i], "--parse-special")) {
      parse_special = true;
    } else {
      vocabs.push_back(argv[i]);
    }
  }
  if (vocabs.empty() && !skip_vocabs) {
    const char* env = std::getenv("SKIFF_MODELS");
    const std::string models = env && *env ? env : "../shared/models";
    for (const char* name : {"gpt-2", "llama-bpe", "qwen2", "qwen35", "command-r", "deepseek-coder", "mpt",
                             "llama-spm", "gemma-4"}) {
      vocabs.push_back(fmt::format("{}/vocab/ggml-vocab-{}.gguf", models, name));
    }
  }
  fmt::print("{:<28} {:<16} {:>11} {:>11}  ratio  (sizes {} and {} bytes)\n", "what", "input", "N/4", "N",
             bytes / 4, bytes);
  for (const std::string& path : vocabs) {
    const auto tokenizer = skiff::Tokenizer::from_gguf(skiff::gguf::GgufFile(path));
    const std::string name = path.substr(path.find_last_of('/') + 1);
    measure(name, [&](const std::string& text) { tokenizer->encode(text, false, parse_special); }, bytes);
  }
  if (skip_types) return 0;
  for (const std::string_view name : skiff::pre_tokenizer_names()) {
    const skiff::PreTokenizer type = skiff::pre_tokenizer_from_name(name).type;
    if (skiff::canonical_pre_tokenizer_name(type) != name) continue;  // one row per type
    measure(fmt::format("pre {}", name), [&](const std::string& text) { skiff::pre_tokenize(text, type); }, bytes);
  }
  return 0;
}

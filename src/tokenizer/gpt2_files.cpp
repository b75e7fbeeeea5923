// Tokenizer::from_gpt2_files: OpenAI's original layout of a byte-level BPE,
// encoder.json (text -> id) and vocab.bpe (a "#version" line, then one
// "left right" merge per line, best first). Neither names special tokens.
#include <sstream>

#include "base/error.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

namespace {

std::vector<std::string> read_merges(const std::string& path) {
  std::istringstream lines(hf::read_file(path));
  std::vector<std::string> merges;
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.starts_with("#version"))) continue;
    const size_t space = line.find(' ');
    if (space == 0 || space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      fail("{}:{}: expected 'left right', found '{}'", path, number, line);
    }
    merges.push_back(std::move(line));
  }
  return merges;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gpt2_files(const std::string& encoder_json,
                                                       const std::string& vocab_bpe, PreTokenizer pre) {
  Vocab vocab;
  vocab.kind = VocabKind::Bpe;
  vocab.pre = pre;
  vocab.ignore_merges = pre == PreTokenizer::Llama3;
  try {
    vocab.texts = hf::texts_from_id_map(hf::read_json(encoder_json));
  } catch (const Error& e) {
    fail("{}: {}", encoder_json, e.what());
  }
  vocab.merges = read_merges(vocab_bpe);
  return std::make_unique<Tokenizer>(std::move(vocab));
}

}  // namespace skiff

#include "tokenizer/vocab_vectors.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace skiff::test {

std::string models_dir() {
  const char* env = std::getenv("SKIFF_MODELS");
  return env && *env ? env : SKIFF_MODELS_DIR;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<VocabVector> read_vocab_vectors(const std::string& inp_path, const std::string& out_path) {
  static const std::string kSeparator = "\n__ggml_vocab_test__\n";
  const std::string inputs = read_file(inp_path);
  std::vector<VocabVector> vectors;
  // Strings end with the separator; some files leave it off the last one.
  size_t start = 0;
  for (size_t sep; (sep = inputs.find(kSeparator, start)) != std::string::npos; start = sep + kSeparator.size()) {
    vectors.push_back({inputs.substr(start, sep - start), {}});
  }
  if (start < inputs.size()) vectors.push_back({inputs.substr(start), {}});
  std::istringstream outputs(read_file(out_path));
  std::string line;
  size_t i = 0;
  for (; std::getline(outputs, line); ++i) {
    if (i >= vectors.size()) throw std::runtime_error(out_path + " has more lines than " + inp_path + " has strings");
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) vectors[i].ids.push_back(id);
  }
  if (i != vectors.size()) throw std::runtime_error(out_path + " has fewer lines than " + inp_path + " has strings");
  return vectors;
}

std::string join_ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (const int32_t id : ids) {
    if (!out.empty()) out += ' ';
    out += std::to_string(id);
  }
  return out;
}

}  // namespace skiff::test

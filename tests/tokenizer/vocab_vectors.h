// llama.cpp's tokenizer test vectors: a .inp file of strings separated by
// "\n__ggml_vocab_test__\n" and a .out file with one line of ids per string.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace skiff::test {

struct VocabVector {
  std::string text;
  std::vector<int32_t> ids;
};

std::string models_dir();  // SKIFF_MODELS env, else the build-time SKIFF_MODELS_DIR
std::string read_file(const std::string& path);
// Throws std::runtime_error when the files disagree on the number of strings.
std::vector<VocabVector> read_vocab_vectors(const std::string& inp_path, const std::string& out_path);
std::string join_ids(const std::vector<int32_t>& ids);  // "1 2 3"

}  // namespace skiff::test

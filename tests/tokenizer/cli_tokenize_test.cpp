// `skiff tokenize --ids` prints exactly the ids of the upstream test vectors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include "tokenizer/vocab_vectors.h"

namespace skiff {
namespace {

std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (const char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(CliTokenize, IdsMatchUpstreamVectors) {
  const std::string vocab = test::models_dir() + "/vocab/ggml-vocab-gpt-2.gguf";
  for (const auto& vector : test::read_vocab_vectors(vocab + ".inp", vocab + ".out")) {
    const CommandResult result =
        run(shell_quote(SKIFF_BINARY) + " tokenize --ids -m " + shell_quote(vocab) + " -- " + shell_quote(vector.text));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_EQ(result.output, test::join_ids(vector.ids) + "\n") << "text: '" << vector.text << "'";
  }
}

// Gemma 4's SentencePiece-style BPE through the command: ▁ shown as a space.
TEST(CliTokenize, Gemma4ShowsSpacesInPieces) {
  const std::string vocab = test::models_dir() + "/vocab/ggml-vocab-gemma-4.gguf";
  for (const auto& vector : test::read_vocab_vectors(vocab + ".inp", vocab + ".out")) {
    if (vector.text != " Hello world") continue;
    const CommandResult ids = run(shell_quote(SKIFF_BINARY) + " tokenize --ids -m " + shell_quote(vocab) + " ' Hello world'");
    ASSERT_EQ(ids.exit_code, 0) << ids.output;
    EXPECT_EQ(ids.output, test::join_ids(vector.ids) + "\n");
    const CommandResult pieces = run(shell_quote(SKIFF_BINARY) + " tokenize -m " + shell_quote(vocab) + " ' Hello world'");
    EXPECT_NE(pieces.output.find("\t' world'\n"), std::string::npos) << pieces.output;
    return;
  }
  FAIL() << "no ' Hello world' vector in " << vocab << ".inp";
}

TEST(CliTokenize, ListsOneTokenPerLine) {
  const std::string vocab = test::models_dir() + "/vocab/ggml-vocab-llama-spm.gguf";
  const CommandResult result = run(shell_quote(SKIFF_BINARY) + " tokenize -m " + shell_quote(vocab) + " 'Hello world'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "15043\t' Hello'\n3186\t' world'\n");
}

TEST(CliTokenize, MissingModelIsAnError) {
  const CommandResult result =
      run(shell_quote(SKIFF_BINARY) + " tokenize --ids -m /nonexistent/model.gguf hello 2>&1");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("/nonexistent/model.gguf"), std::string::npos) << result.output;
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
}

}  // namespace
}  // namespace skiff

// tokenizer.json and tokenizer.model loading, including corrupt files, which
// must give skiff::Error and never crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_vectors.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("skiff-tok-" + std::to_string(getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& contents) const {
    const fs::path file = path_ / name;
    std::ofstream(file, std::ios::binary) << contents;
    return file.string();
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

// The GPT-2 GGUF vocabulary rewritten as a Hugging Face tokenizer.json.
json gpt2_tokenizer_json() {
  const gguf::GgufFile file(test::models_dir() + "/vocab/ggml-vocab-gpt-2.gguf");
  const auto tokens = file.get_string_array("tokenizer.ggml.tokens");
  const auto merges = file.get_string_array("tokenizer.ggml.merges");
  json vocab = json::object();
  for (size_t id = 0; id < tokens.size(); ++id) vocab[tokens[id]] = id;
  json merge_list = json::array();
  for (size_t i = 0; i < merges.size(); ++i) {
    // Both spellings of a merge occur in the wild; use each for half.
    const size_t space = merges[i].find(' ');
    if (i % 2) {
      merge_list.push_back(merges[i]);
    } else {
      merge_list.push_back(json::array({merges[i].substr(0, space), merges[i].substr(space + 1)}));
    }
  }
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}}},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"added_tokens", json::array({{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}})}};
}

TEST(TokenizerJson, Gpt2MatchesUpstreamVectors) {
  TempDir dir;
  dir.write("tokenizer.json", gpt2_tokenizer_json().dump());
  const auto tokenizer = Tokenizer::from_hf_dir(dir.str());
  const std::string base = test::models_dir() + "/vocab/ggml-vocab-gpt-2.gguf";
  for (const auto& vector : test::read_vocab_vectors(base + ".inp", base + ".out")) {
    EXPECT_EQ(tokenizer->encode(vector.text, false, false), vector.ids) << vector.text;
  }
  EXPECT_EQ(tokenizer->encode("a<|endoftext|>", false, true).back(), 50256);
  EXPECT_TRUE(tokenizer->is_end_of_generation(50256));
}

// A byte-level vocabulary of the 256 byte characters plus "12", merged by "1 2".
json digits_tokenizer_json(const std::string& split_regex) {
  const gguf::GgufFile file(test::models_dir() + "/vocab/ggml-vocab-gpt-2.gguf");
  const auto tokens = file.get_string_array("tokenizer.ggml.tokens");
  json vocab = json::object();
  for (size_t id = 0; id < 256; ++id) vocab[tokens[id]] = id;
  vocab["12"] = 256;
  const json split = {{"type", "Split"}, {"pattern", {{"Regex", split_regex}}}, {"behavior", "Isolated"}};
  const json byte_level = {{"type", "ByteLevel"}, {"use_regex", false}};
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"1 2"})}}},
          {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", json::array({split, byte_level})}}}};
}

TEST(TokenizerJson, SplitRegexSelectsThePreTokenizer) {
  const std::string llama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const std::string qwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  TempDir dir;
  const auto grouped = Tokenizer::from_tokenizer_json(dir.write("llama3.json", digits_tokenizer_json(llama3).dump()));
  EXPECT_EQ(grouped->encode("12", false, false), std::vector<int32_t>{256});  // one word "12"
  const auto single = Tokenizer::from_tokenizer_json(dir.write("qwen2.json", digits_tokenizer_json(qwen2).dump()));
  EXPECT_EQ(single->encode("12", false, false).size(), 2u);  // words "1" and "2"
  EXPECT_THROW(Tokenizer::from_tokenizer_json(dir.write("other.json", digits_tokenizer_json("\\w+").dump())), Error);
  const std::string qwen35 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const auto marks = Tokenizer::from_tokenizer_json(dir.write("qwen35.json", digits_tokenizer_json(qwen35).dump()));
  EXPECT_EQ(marks->vocab().pre, PreTokenizer::Qwen35);
}

TEST(TokenizerJson, ByteFallbackBpeBecomesSentencePieceStyle) {
  const json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {"\xE2\x96\x81", 3}, {"a", 4},
                      {"b", 5}, {"\xE2\x96\x81" "a", 6}, {"ab", 7}, {"\xE2\x96\x81" "ab", 8}, {"<0x63>", 9}};
  const json root = {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"byte_fallback", true}, {"unk_token", "<unk>"},
                 {"merges", json::array({"\xE2\x96\x81 a", "a b", "\xE2\x96\x81" "a b"})}}},
      {"normalizer", {{"type", "Sequence"}, {"normalizers", json::array({{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}}})}}},
      {"added_tokens", json::array({{{"id", 1}, {"content", "<s>"}, {"special", true}},
                                    {{"id", 2}, {"content", "</s>"}, {"special", true}}})}};
  TempDir dir;
  const auto tokenizer = Tokenizer::from_tokenizer_json(dir.write("tokenizer.json", root.dump()));
  EXPECT_EQ(tokenizer->encode("ab", true, false), (std::vector<int32_t>{1, 8}));
  EXPECT_EQ(tokenizer->encode("c", false, false), (std::vector<int32_t>{3, 9}));  // "c" by byte fallback
  EXPECT_EQ(tokenizer->decode(std::vector<int32_t>{1, 8, 9}), "abc");
  EXPECT_EQ(tokenizer->eos_id(), 2);
}

// Found writing fuzz/tokenizer_json.cpp: a merge without its space was erased at
// npos (std::out_of_range, "basic_string::erase") in byte-fallback files. Found
// again by CI's fuzz_tokenizer_json (2026-12-03): the pair form ["", "a"] joined
// to " a", whose space the same erase missed. Both forms need two non-empty sides.
TEST(TokenizerJson, AMergeWithoutItsSpaceIsAnError) {
  TempDir dir;
  for (const bool byte_fallback : {true, false})
    for (const json& merge : {json("ab"), json(" ab"), json("ab "), json::array({"", "a"}), json::array({"a", ""})}) {
      const json root = {{"model", {{"type", "BPE"}, {"byte_fallback", byte_fallback},
                                    {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", json::array({merge})}}}};
      EXPECT_THROW(Tokenizer::from_tokenizer_json(dir.write("tokenizer.json", root.dump())), Error)
          << byte_fallback << " " << merge.dump();
    }
}

TEST(TokenizerJson, CorruptFilesThrowError) {
  TempDir dir;
  const json good = digits_tokenizer_json(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
  ASSERT_NO_THROW(Tokenizer::from_tokenizer_json(dir.write("good.json", good.dump())));
  std::vector<std::string> bad = {"", "{", "[1, 2]", R"({"model": 3})", R"({"model": {"type": "Unigram"}})"};
  auto with = [&](const json::json_pointer& where, const json& value) {
    json copy = good;
    copy[where] = value;
    return copy.dump();
  };
  bad.push_back(with(json::json_pointer("/model/vocab"), json::array()));
  bad.push_back(with(json::json_pointer("/model/vocab/12"), "x"));
  bad.push_back(with(json::json_pointer("/model/vocab/12"), 1LL << 40));
  bad.push_back(with(json::json_pointer("/model/vocab/12"), -5));
  bad.push_back(with(json::json_pointer("/model/merges"), "1 2"));
  bad.push_back(with(json::json_pointer("/model/merges"), json::array({json::array({1, 2})})));
  bad.push_back(with(json::json_pointer("/model/merges"), json::array({"12"})));
  bad.push_back(with(json::json_pointer("/added_tokens"), json::array({{{"id", 1LL << 40}, {"content", "x"}}})));
  bad.push_back(with(json::json_pointer("/pre_tokenizer"), nullptr));
  const std::string text = good.dump();
  bad.push_back(text.substr(0, text.size() / 2));
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_THROW(Tokenizer::from_tokenizer_json(dir.write("bad.json", bad[i])), Error) << i << ": " << bad[i].substr(0, 200);
  }
}

TEST(SentencePieceModel, CorruptFilesThrowErrorOrLoad) {
  const std::string model = test::read_file(test::models_dir() + "/derived/stories260K-hf/tokenizer.model");
  TempDir dir;
  auto load = [&](const std::string& bytes) {
    return Tokenizer::from_sentencepiece_model(dir.write("tokenizer.model", bytes));
  };
  EXPECT_THROW(load(""), Error);
  EXPECT_THROW(load(std::string(64, '\xFF')), Error);
  EXPECT_THROW(load(model.substr(0, 100)), Error);  // cut inside the first pieces
  // Any cut or corruption must either load or give skiff::Error: no crash, no other exception.
  auto survives = [&](const std::string& bytes) {
    try {
      load(bytes)->encode("Once upon a time 😀", true, true);
    } catch (const Error&) {
    }
  };
  for (size_t length = 0; length < model.size(); length += 37) survives(model.substr(0, length));
  std::mt19937 random(1234);
  for (int trial = 0; trial < 100; ++trial) {
    std::string corrupt = model;
    for (int flips = 0; flips < 4; ++flips) corrupt[random() % corrupt.size()] = static_cast<char>(random());
    survives(corrupt);
  }
}

TEST(FromPath, MissingPathsThrowError) {
  EXPECT_THROW(Tokenizer::from_path("/nonexistent/model.gguf"), Error);
  TempDir empty;
  EXPECT_THROW(Tokenizer::from_path(empty.str()), Error);
}

}  // namespace
}  // namespace skiff

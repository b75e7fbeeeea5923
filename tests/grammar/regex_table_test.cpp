// compile_regex against Python's re.fullmatch(pattern, text, re.ASCII) as the
// reference: tests/grammar/data/regex_cases.json (made by
// tools/grammar_regex_cases.py) holds patterns with texts that Python says
// match or not, and patterns skiff must refuse.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "grammar/compile.h"
#include "grammar_test_support.h"

namespace skiff::grammar {
namespace {

const std::string kCases = std::string(SKIFF_SOURCE_DIR) + "/tests/grammar/data/regex_cases.json";

nlohmann::json read_cases() {
  std::ifstream in(kCases);
  if (!in) throw std::runtime_error("cannot open " + kCases);
  return nlohmann::json::parse(in);
}

// A text as a quoted string with control characters escaped, for messages.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02x}", c);
    else out += char(c);
  }
  return out + "\"";
}

TEST(RegexTable, MatchesAsPythonFullmatchDoes) {
  const nlohmann::json cases = read_cases();
  size_t n_patterns = 0, n_texts = 0;
  for (const nlohmann::json& c : cases) {
    if (c.value("refused", false)) continue;
    const std::string pattern = c["pattern"].get<std::string>();
    ++n_patterns;
    std::shared_ptr<const Grammar> g;
    try {
      g = compile_regex(pattern);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "pattern " << quoted(pattern) << " refused: " << e.what();
      continue;
    }
    for (const nlohmann::json& t : c["texts"]) {
      const std::string text = t[0].get<std::string>();
      const bool expected = t[1].get<bool>();
      ++n_texts;
      EXPECT_EQ(accepts_text(g, text), expected)
          << "pattern " << quoted(pattern) << " text " << quoted(text) << ": Python says "
          << (expected ? "match" : "no match");
    }
  }
  EXPECT_GT(n_patterns, 100u);
  EXPECT_GT(n_texts, 1000u);
}

TEST(RegexTable, RefusesWhatItCannotEnforce) {
  const nlohmann::json cases = read_cases();
  size_t n_refused = 0;
  for (const nlohmann::json& c : cases) {
    if (!c.value("refused", false)) continue;
    const std::string pattern = c["pattern"].get<std::string>();
    ++n_refused;
    try {
      compile_regex(pattern);
      ADD_FAILURE() << "pattern " << quoted(pattern) << " compiled; it should be refused";
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "pattern " << quoted(pattern) << " threw something other than skiff::Error: " << e.what();
    }
  }
  EXPECT_GT(n_refused, 50u);
}

}  // namespace
}  // namespace skiff::grammar

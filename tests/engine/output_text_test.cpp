// OutputText: streaming detokenization cut before stop strings, checked piece
// by piece against StreamDecoder and against a brute-force reference.
#include "engine/output_text.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace skiff {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

const Tokenizer& stories() {  // SentencePiece, 512 pieces, byte fallback
  static const std::unique_ptr<Tokenizer> tokenizer =
      Tokenizer::from_path(SKIFF_MODELS_DIR "/derived/stories260K-f32.gguf");
  return *tokenizer;
}

const Tokenizer& llama2() {  // the full Llama-2 vocabulary
  static const std::unique_ptr<Tokenizer> tokenizer =
      Tokenizer::from_path(SKIFF_MODELS_DIR "/gguf/llama-2-tiny-random.gguf");
  return *tokenizer;
}

std::vector<int32_t> ids_of(const Tokenizer& tokenizer, const std::string& text) {
  return tokenizer.encode(text, /*add_special=*/false, /*parse_special=*/false);
}

// One run: the piece each push returned, then finish()'s unless it stopped.
struct Streamed {
  std::vector<std::string> pieces;
  std::string text;
  bool stopped = false;
  std::string stop_reason;
};

// Pushes ids until a stop string ends the text, checking the invariants that
// hold for every run: valid UTF-8 pieces that join to text().
Streamed stream(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, std::vector<std::string> stop) {
  OutputText out(tokenizer, std::move(stop));
  Streamed result;
  std::string joined;
  for (const int32_t id : ids) {
    result.pieces.push_back(out.push(id));
    joined += result.pieces.back();
    EXPECT_EQ(out.text(), joined);
    if (out.stopped()) break;
  }
  if (!out.stopped()) {
    result.pieces.push_back(out.finish());
    joined += result.pieces.back();
  }
  for (const std::string& piece : result.pieces) EXPECT_TRUE(unicode::is_valid_utf8(piece)) << piece;
  EXPECT_EQ(out.text(), joined);
  result.text = out.text();
  result.stopped = out.stopped();
  result.stop_reason = out.stop_reason();
  return result;
}

TEST(OutputText, ContinuesThePromptWithItsLeadingSpace) {
  const std::vector<int32_t> prompt = ids_of(stories(), "Once upon a time");
  const std::vector<int32_t> all = ids_of(stories(), "Once upon a time there was");
  ASSERT_EQ(std::vector<int32_t>(all.begin(), all.begin() + prompt.size()), prompt);
  const Streamed r = stream(stories(), std::vector<int32_t>(all.begin() + prompt.size(), all.end()), {});
  EXPECT_EQ(r.text, " there was");
  EXPECT_EQ(r.pieces, (std::vector<std::string>{" there", " was", ""}));
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.stop_reason, "");
}

// With no stop strings nothing is held back beyond StreamDecoder's unfinished
// characters, so the pieces are StreamDecoder's, one for one.
TEST(OutputText, WithoutStopStringsGivesStreamDecoderPieces) {
  const char* const texts[] = {"Once upon a time, the cat sat.\n\nThe end",
                               "Emoji 😀 and CJK 你好世界 and accents: café, naïve", "", "é"};
  for (const Tokenizer* tokenizer : {&stories(), &llama2()}) {
    for (const char* text : texts) {
      std::vector<int32_t> ids = ids_of(*tokenizer, text);
      for (const bool cut_last : {false, true}) {  // cut: may end inside a character
        if (cut_last && !ids.empty()) ids.pop_back();
        StreamDecoder decoder(*tokenizer, /*at_text_start=*/false);
        std::vector<std::string> expected;
        for (const int32_t id : ids) expected.push_back(decoder.push(id));
        expected.push_back(decoder.flush());
        EXPECT_EQ(stream(*tokenizer, ids, {}).pieces, expected) << text << " cut " << cut_last;
      }
    }
  }
}

TEST(OutputText, HoldsBackAPossibleStopStartUntilRuledOut) {
  const Streamed r = stream(stories(), ids_of(stories(), "Once upon a time, the cat"), {"time!"});
  // "time" could be the start of "time!" until "," arrives; the last "t"
  // until finish() says nothing follows.
  EXPECT_EQ(r.pieces, (std::vector<std::string>{" Once", " upon", " a", " ", "time,", " the", " c", "a", "t"}));
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, " Once upon a time, the cat");
}

TEST(OutputText, StopStringSpanningTokensIsNeverStreamed) {
  // "upon a ti" starts in held-back text and ends inside the fourth token.
  const Streamed r = stream(stories(), ids_of(stories(), "Once upon a time there was"), {"upon a ti"});
  EXPECT_EQ(r.pieces, (std::vector<std::string>{" Once", " ", "", ""}));
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.stop_reason, "upon a ti");
  EXPECT_EQ(r.text, " Once ");
}

TEST(OutputText, StopsOnceAndThenRefusesTokens) {
  OutputText out(stories(), {"upon"});
  const std::vector<int32_t> ids = ids_of(stories(), "Once upon a time");
  EXPECT_EQ(out.push(ids[0]), " Once");
  EXPECT_EQ(out.push(ids[1]), " ");
  EXPECT_TRUE(out.stopped());
  EXPECT_THROW(out.push(ids[2]), Error);
  EXPECT_EQ(out.finish(), "");
  EXPECT_EQ(out.text(), " Once ");
}

// min_tokens: the first tokens' text is streamed at once and never matched;
// from the next token on, stop strings are looked for in the new text.
TEST(OutputText, StopStringsWaitForMinTokens) {
  const std::vector<int32_t> ids = ids_of(stories(), "Once upon a time upon a hill");
  OutputText out(stories(), {"upon"}, /*min_tokens=*/3);
  std::string text;
  for (const int32_t id : ids) {
    text += out.push(id);
    if (out.stopped()) break;
  }
  EXPECT_TRUE(out.stopped());
  EXPECT_EQ(out.text(), " Once upon a time ");
}

TEST(OutputText, RendersControlTokensWhenAsked) {
  const int32_t eos = stories().eos_id();
  const std::vector<int32_t> ids = {ids_of(stories(), "Once")[0], eos};
  for (const bool render : {false, true}) {
    OutputText out(stories(), {}, 0, render);
    std::string text;
    for (const int32_t id : ids) text += out.push(id);
    text += out.finish();
    EXPECT_EQ(text, render ? " Once" + stories().token_to_piece(eos, true) : " Once");
    if (render) {
      EXPECT_FALSE(stories().token_to_piece(eos, true).empty());
    }
  }
}

TEST(OutputText, RefusesTokensAfterFinish) {
  OutputText out(stories(), {"Once!"});
  EXPECT_EQ(out.push(ids_of(stories(), "Once")[0]), " ");
  EXPECT_EQ(out.finish(), "Once");
  EXPECT_THROW(out.push(1), Error);
}

TEST(OutputText, EarliestMatchWins) {
  const std::vector<int32_t> ids = ids_of(stories(), "Once upon a time there was");
  // "a time" and "time" complete on the same token; "a time" starts first.
  for (const auto& stop : {std::vector<std::string>{"time", "a time", "was"},
                           std::vector<std::string>{"was", "a time", "time"}}) {
    const Streamed r = stream(stories(), ids, stop);
    EXPECT_EQ(r.stop_reason, "a time");
    EXPECT_EQ(r.text, " Once upon ");
  }
  // Generation ends at the first token that completes any stop string: "a"
  // wins over "upon a time", which started earlier but is not complete yet.
  const Streamed r = stream(stories(), ids, {"upon a time", "a"});
  EXPECT_EQ(r.stop_reason, "a");
  EXPECT_EQ(r.text, " Once upon ");
  EXPECT_EQ(r.pieces.size(), 3u);
}

TEST(OutputText, MatchesStartingTogetherGoToTheOneListedFirst) {
  const std::vector<int32_t> ids = ids_of(stories(), "the cat");  // " the" is one token
  ASSERT_EQ(stories().token_to_piece(ids[0]), " the");
  EXPECT_EQ(stream(stories(), ids, {"the", "th"}).stop_reason, "the");
  EXPECT_EQ(stream(stories(), ids, {"th", "the"}).stop_reason, "th");
}

TEST(OutputText, MultiByteCharactersFromByteTokens) {
  // 😀 is four byte-fallback tokens; ï is its own token.
  const std::vector<int32_t> ids = ids_of(llama2(), "café 😀 naïve 😁!");
  Streamed r = stream(llama2(), ids, {"😀"});
  EXPECT_EQ(r.text, " café ");
  EXPECT_EQ(r.stop_reason, "😀");
  // 😁 shares three bytes with 😀 but is not it.
  r = stream(llama2(), ids, {"😁"});
  EXPECT_EQ(r.text, " café 😀 naïve ");
  r = stream(llama2(), ids, {"naïve"});
  EXPECT_EQ(r.text, " café 😀 ");
  r = stream(llama2(), ids, {"é 😀 n"});
  EXPECT_EQ(r.text, " caf");
  r = stream(llama2(), ids, {"ï!"});
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, " café 😀 naïve 😁!");
}

TEST(OutputText, FinishTurnsAnUnfinishedCharacterIntoReplacement) {
  std::vector<int32_t> ids = ids_of(llama2(), "café 😀");
  ids.pop_back();  // the emoji's last byte
  Streamed r = stream(llama2(), ids, {"😀"});
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, " café " + kReplacement);
  // The replacement character is text like any other: it can complete a stop string.
  r = stream(llama2(), ids, {" " + kReplacement});
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, " café");
}

TEST(OutputText, RejectsStopStringsThatCouldNeverMatch) {
  EXPECT_THROW(OutputText(stories(), {"ok", ""}), Error);
  EXPECT_THROW(OutputText(stories(), {"\xC3"}), Error);  // half of é
}

// The brute-force reference: after each token, decode everything so far and
// look for every stop string everywhere. Before a stop, what may be streamed
// is the whole characters less the longest end that begins a stop string.
struct Expected {
  std::vector<std::string> streamed;  // after each push, until the stop
  std::string text;
  std::string stop_reason;
};

Expected reference(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                   const std::vector<std::string>& stop) {
  Expected expected;
  std::string decoded;
  for (const int32_t id : ids) {
    decoded += tokenizer.token_to_piece(id);
    const std::string whole = decoded.substr(0, decoded.size() - unicode::incomplete_utf8_suffix(decoded));
    size_t first = std::string::npos;
    for (const std::string& s : stop) {
      const size_t pos = whole.find(s);
      if (pos < first) {
        first = pos;
        expected.stop_reason = s;
      }
    }
    if (first != std::string::npos) {
      expected.text = whole.substr(0, first);
      expected.streamed.push_back(expected.text);
      return expected;
    }
    size_t held = 0;
    for (const std::string& s : stop) {
      for (size_t n = 1; n < s.size() && n <= whole.size(); ++n) {
        if (whole.compare(whole.size() - n, n, s, 0, n) == 0) held = std::max(held, n);
      }
    }
    expected.streamed.push_back(whole.substr(0, whole.size() - held));
  }
  expected.text = decoded;  // the texts are whole characters
  return expected;
}

std::string random_string(std::mt19937& rng, const std::vector<std::string>& fragments, int max_fragments) {
  std::string s;
  const int n = std::uniform_int_distribution<int>(1, max_fragments)(rng);
  for (int i = 0; i < n; ++i) s += fragments[rng() % fragments.size()];
  return s;
}

TEST(OutputText, RandomTextsMatchTheReference) {
  // Few distinct fragments, so stop strings often match, overlap and begin
  // many times before they match.
  const std::vector<std::string> text_fragments = {"a", "b", "ab", " ", " the", " cat", "é", "😀", "\n"};
  const std::vector<std::string> stop_fragments = {"a", "b", " ", "t", "he", "é", "😀", "\n"};
  std::mt19937 rng(1234);
  int stops_seen = 0;
  for (const Tokenizer* tokenizer : {&stories(), &llama2()}) {
    for (int trial = 0; trial < 400; ++trial) {
      const std::vector<int32_t> ids = ids_of(*tokenizer, random_string(rng, text_fragments, 30));
      std::vector<std::string> stop;
      for (int i = rng() % 4; i > 0; --i) stop.push_back(random_string(rng, stop_fragments, 3));
      const Expected expected = reference(*tokenizer, ids, stop);
      SCOPED_TRACE(testing::Message() << "trial " << trial << " text [" << expected.text << "]");

      OutputText out(*tokenizer, stop);
      std::string streamed;
      for (size_t i = 0; i < expected.streamed.size(); ++i) {
        streamed += out.push(ids[i]);
        ASSERT_EQ(streamed, expected.streamed[i]) << "after token " << i;
        // Never any of the eventual stop string, not even its first byte.
        ASSERT_EQ(expected.text.compare(0, streamed.size(), streamed), 0);
      }
      streamed += out.finish();
      EXPECT_EQ(streamed, expected.text);
      EXPECT_EQ(out.text(), expected.text);
      EXPECT_EQ(out.stopped(), !expected.stop_reason.empty());
      EXPECT_EQ(out.stop_reason(), expected.stop_reason);
      stops_seen += out.stopped();
    }
  }
  EXPECT_GT(stops_seen, 200);  // the test exercises stopping, not just streaming
}

}  // namespace
}  // namespace skiff

#include "tokenizer/pretokenizer.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "base/error.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

namespace skiff {

namespace {

// llama.cpp's regexes (llm_tokenizer_bpe's regex_exprs), in its adapted
// forms: (?i:...) spelled out as [sS] pairs, \p{Lu}-style classes as
// lookaheads where llama.cpp rewrote them.
constexpr std::string_view kGpt2 = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";
constexpr std::string_view kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kNewlineRuns = R"re([^\n]+|[\n]+)re";
constexpr std::string_view kCjk = R"re([一-龥ࠀ-一가-퟿]+)re";
constexpr std::string_view kPoro = R"re( ?[^(\s|.,!?…。，、।۔،)]+)re";
constexpr std::string_view kDeepseek3Words =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Kimi K2: llama.cpp splits it with custom code, which keeps the Han runs
// (the CJK ideograph blocks of its unicode_cpt_is_han) and contractions of
// tokenization_kimi.py's regex but takes letters of any case other than Han
// as one run (the regex splits "HelloWorld"); this regex does the same.
constexpr std::string_view kKimiK2 =
    R"re([\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2EBEF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]+|[^\r\n\p{L}\p{N}]?(?:(?![\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2EBEF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}])\p{L})+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Not a regex: llama.cpp's name for its custom AFMoE digit split (split_afmoe_digits).
constexpr std::string_view kAfmoeDigits = R"re(\p{AFMoE_digits})re";

std::vector<std::string_view> regexes_of(PreTokenizer type) {
  using T = PreTokenizer;
  switch (type) {
    case T::Default: return {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", R"re([0-9][0-9][0-9])re"};
    case T::Gpt2: return {kGpt2};
    case T::DeepseekCoder: return {R"re([\r\n])re", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kCjk, R"re(\p{N})re"};
    case T::Llama3: return {kLlama3};
    case T::Qwen2: return {kQwen2};
    case T::Qwen35:
      return {R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::Starcoder: return {R"re(\p{N})re", kGpt2};
    case T::Falcon: return {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, R"re([0-9][0-9][0-9])re"};
    case T::DeepseekLlm:
      // \x{...} for the characters (Greek with tonos, Ohm and Kelvin signs)
      // that Unicode normalization would silently change in a source file.
      return {R"re([\r\n])re",
              R"re(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\x{1F7D}ᾀ-ᾴᾶ-ᾼ\x{1FBE}ῂ-ῄῆ-ῌῐ-\x{1FD3}ῖ-\x{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\x{2126}ℨ\x{212A}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)re",
              R"re(\s?[!-/:-~！-／：-～‘-‟　-。]+)re", R"re(\s+$)re", kCjk, R"re(\p{N}+)re"};
    case T::Deepseek3Llm:
      return {R"re(\p{N}{1,3})re", R"re([一-龥぀-ゟ゠-ヿ]+)re", kDeepseek3Words};
    case T::Spark25:
      return {R"re(\p{N}{1,3})re", R"re([一-龥぀-ゟ゠-ヿ]+)re",
              R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+)re",
              R"re(\p{N})re"};
    case T::Youtu:
      return {R"re([가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+)re",
              R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::Jais2:
      return {R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})re"};
    case T::Poro: return {kPoro};
    case T::Viking: return {kPoro, R"re(\p{N})re"};
    case T::Tekken:
      return {R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::Chameleon:
      return {R"re(<sentinel:[0-9]+>)re", R"re((IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z)re", R"re(([\t\n]|    |  ))re",
              R"re(\p{N})re", R"re([\p{P}!-/:-@\[-`{-~])re", kGpt2};
    case T::Gpt4o:
      return {R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::GraniteEmbMulti:
      return {R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::TinyAya:
      return {R"re(\d{1,3}(?=(?:\d{3})*\b))re",
              R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::Superbpe: return {R"re(\p{N}+)re", R"re((?=(\d{3})+(?!\d)))re"};
    case T::Bailingmoe:
      return {R"re('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re"};
    case T::SeedCoder:
      return {R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::Ufakzeka:
      return {R"re([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::Laguna: return {kNewlineRuns, kQwen2};
    case T::ExaoneMoe:
      return {R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)re"};
    case T::Minicpm5:
      return {R"re(\p{N}{1,3})re",
              R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case T::KimiK2: return {kKimiK2};
    case T::Afmoe:
      // CJK, kana, Thai, Lao, Khmer, Myanmar and Hangul runs, as llama.cpp's
      // source spells them: its third range starts at U+8C48, the canonical
      // form of the U+F900 meant, so it also takes Yi, Hangul and the rest below U+FB00.
      return {kAfmoeDigits,
              R"re([\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{8C48}-\x{FAFF}\x{3040}-\x{309F}\x{30A0}-\x{30FF}\x{FF65}-\x{FF9F}\x{2F00}-\x{2FDF}\x{0E40}-\x{0E7F}\x{0E80}-\x{0EFF}\x{1780}-\x{17FF}\x{1000}-\x{109F}\x{AA60}-\x{AA7F}\x{A9E0}-\x{A9FF}\x{AC00}-\x{D7AF}\x{1100}-\x{11FF}]+)re",
              kDeepseek3Words};
    case T::Gemma4:
    case T::SarvamMoe: return {kNewlineRuns};
    case T::Whitespace: return {R"re(\S+)re"};
  }
  return {};
}

constexpr PreTokenizer kLastType = PreTokenizer::Whitespace;
constexpr size_t kTypeCount = static_cast<size_t>(kLastType) + 1;

using Codepoints = std::vector<uint32_t>;
struct Range {
  size_t begin;
  size_t end;
};

// Hand-written matchers for the most used regexes, as llama.cpp has custom
// code for them: many times faster than the regex engine, and checked against
// it (pretokenizer_test.cpp). Each returns the match length at pos, 0 for none
// (none of these regexes can match empty).
using Matcher = size_t (*)(const Codepoints& cps, size_t pos, size_t end);

using unicode::is_letter;
using unicode::is_number;
using unicode::is_whitespace;

bool is_newline(uint32_t cp) { return cp == '\r' || cp == '\n'; }
// [^\s\p{L}\p{N}]
bool is_other(uint32_t cp) { return !is_whitespace(cp) && !is_letter(cp) && !is_number(cp); }

template <typename Pred>
size_t run_length(const Codepoints& cps, size_t pos, size_t end, Pred pred) {
  size_t n = 0;
  while (pos + n < end && pred(cps[pos + n])) ++n;
  return n;
}

// 's|'t|'re|'ve|'m|'ll|'d, optionally ignoring case.
size_t match_contraction(const Codepoints& cps, size_t pos, size_t end, bool ignore_case) {
  if (cps[pos] != '\'') return 0;
  auto at = [&](size_t i) -> uint32_t {
    if (i >= end) return 0;
    const uint32_t cp = cps[i];
    return ignore_case && cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp;
  };
  const uint32_t a = at(pos + 1);
  const uint32_t b = at(pos + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// \s+(?!\S)|\s+ at a whitespace run: a run followed by text leaves its last
// space to prefix the next word.
size_t match_whitespace_run(const Codepoints& cps, size_t pos, size_t end) {
  const size_t n = run_length(cps, pos, end, is_whitespace);
  if (n == 0) return 0;
  return pos + n == end || n == 1 ? n : n - 1;
}

// kGpt2. A lone whitespace before text, which the regex leaves unmatched,
// comes out as its own word either way.
size_t match_gpt2(const Codepoints& cps, size_t pos, size_t end) {
  if (const size_t n = match_contraction(cps, pos, end, false)) return n;
  const size_t space = cps[pos] == ' ' && pos + 1 < end ? 1 : 0;
  for (auto* in_class : {is_letter, is_number, is_other}) {
    if (in_class(cps[pos + space])) return space + run_length(cps, pos + space, end, in_class);
  }
  return match_whitespace_run(cps, pos, end);
}

// kLlama3 (max_digits 3) and kQwen2 (max_digits 1).
size_t match_llama3_family(const Codepoints& cps, size_t pos, size_t end, size_t max_digits) {
  if (const size_t n = match_contraction(cps, pos, end, true)) return n;
  const uint32_t cp = cps[pos];
  if (is_letter(cp)) return run_length(cps, pos, end, is_letter);
  if (!is_newline(cp) && !is_number(cp) && pos + 1 < end && is_letter(cps[pos + 1])) {
    return 1 + run_length(cps, pos + 1, end, is_letter);
  }
  // Bounded before scanning: measuring a megabyte of digits per match would be quadratic.
  if (is_number(cp)) return run_length(cps, pos, std::min(end, pos + max_digits), is_number);
  const size_t space = cp == ' ' && pos + 1 < end ? 1 : 0;
  if (is_other(cps[pos + space])) {
    const size_t n = space + run_length(cps, pos + space, end, is_other);
    return n + run_length(cps, pos + n, end, is_newline);
  }
  // \s*[\r\n]+ ends at the last newline of the whitespace run.
  const size_t run = run_length(cps, pos, end, is_whitespace);
  for (size_t n = run; n > 0; --n) {
    if (is_newline(cps[pos + n - 1])) return n;
  }
  return match_whitespace_run(cps, pos, end);
}

size_t match_llama3(const Codepoints& cps, size_t pos, size_t end) { return match_llama3_family(cps, pos, end, 3); }
size_t match_qwen2(const Codepoints& cps, size_t pos, size_t end) { return match_llama3_family(cps, pos, end, 1); }

Matcher fast_matcher_for(std::string_view regex) {
  if (regex == kGpt2) return match_gpt2;
  if (regex == kLlama3) return match_llama3;
  if (regex == kQwen2) return match_qwen2;
  return nullptr;
}

// A pass no regex states: it splits a range into words itself.
using Splitter = void (*)(const Codepoints& cps, const Range& range, std::vector<Range>& out);

// llama.cpp's AFMoE digit split (unicode_regex_split_custom_afmoe): each run
// of \p{N} in groups of 3 from the right, its first group (1-3 digits) ending
// the word that holds the text before the run; text after the last run is a
// word of its own. Later passes split that text off again.
void split_afmoe_digits(const Codepoints& cps, const Range& range, std::vector<Range>& out) {
  size_t word = range.begin, pos = range.begin;
  while (pos < range.end) {
    if (!is_number(cps[pos])) {
      ++pos;
      continue;
    }
    const size_t run = run_length(cps, pos, range.end, is_number);
    for (size_t done = 0, group = run % 3 == 0 ? 3 : run % 3; done < run; done += group, group = 3) {
      out.push_back({word, pos + done + group});
      word = pos + done + group;
    }
    pos += run;
  }
  if (word < range.end) out.push_back({word, range.end});
}

// One regex of a list: its own splitter, its hand-written matcher, or the compiled regex.
struct Pass {
  Splitter custom = nullptr;
  Matcher fast = nullptr;
  std::optional<Regex> regex;
};

// fast_paths false: the regex engine for every real regex (regex_split).
Pass make_pass(std::string_view regex, bool fast_paths) {
  Pass pass;
  if (regex == kAfmoeDigits) pass.custom = split_afmoe_digits;
  else if (fast_paths) pass.fast = fast_matcher_for(regex);
  if (!pass.custom && !pass.fast) pass.regex.emplace(regex);
  return pass;
}

// One stretch split as llama.cpp's unicode_regex_split does it: every match
// and every stretch between matches becomes a range of its own. An empty
// match only cuts the text where it is (llama.cpp makes an empty word there,
// which tokenizes to nothing). match_at(pos) is the match length or -1.
template <typename MatchAt>
void split_range(const Range& range, MatchAt&& match_at, std::vector<Range>& out) {
  size_t unmatched = range.begin;
  size_t pos = range.begin;
  while (pos < range.end) {
    const ptrdiff_t n = match_at(pos);
    if (n < 0) {
      ++pos;
      continue;
    }
    if (unmatched < pos) out.push_back({unmatched, pos});
    if (n == 0) {
      unmatched = pos++;
      continue;
    }
    out.push_back({pos, pos + static_cast<size_t>(n)});
    pos += static_cast<size_t>(n);
    unmatched = pos;
  }
  if (unmatched < range.end) out.push_back({unmatched, range.end});
}

std::vector<Range> split(const Codepoints& cps, const std::vector<Range>& ranges, const Pass& pass) {
  std::vector<Range> out;
  for (const Range& range : ranges) {
    if (pass.custom) {
      pass.custom(cps, range, out);
    } else if (pass.fast) {
      split_range(range, [&](size_t pos) {
        const size_t n = pass.fast(cps, pos, range.end);
        return n == 0 ? ptrdiff_t{-1} : static_cast<ptrdiff_t>(n);
      }, out);
    } else {
      RegexSearch search(*pass.regex, cps, range.begin, range.end);
      split_range(range, [&](size_t pos) { return search.match_at(pos); }, out);
    }
  }
  return out;
}

std::vector<std::string> split_words(std::string_view text, const std::vector<Pass>& passes) {
  const Codepoints cps = unicode::decode_utf8(text);
  std::vector<Range> ranges{{0, cps.size()}};
  if (cps.empty()) ranges.clear();
  for (const Pass& pass : passes) ranges = split(cps, ranges, pass);
  std::vector<std::string> words;
  words.reserve(ranges.size());
  for (const Range& r : ranges) words.push_back(unicode::encode_utf8(cps, r.begin, r.end));
  return words;
}

struct TypeTables {
  std::array<std::vector<std::string_view>, kTypeCount> regexes;
  std::array<std::vector<Pass>, kTypeCount> passes;
};

// Every type's regexes compiled once, on first use.
const TypeTables& type_tables() {
  static const TypeTables tables = [] {
    TypeTables t;
    for (size_t i = 0; i < kTypeCount; ++i) {
      t.regexes[i] = regexes_of(static_cast<PreTokenizer>(i));
      for (const std::string_view regex : t.regexes[i]) t.passes[i].push_back(make_pass(regex, true));
    }
    return t;
  }();
  return tables;
}

}  // namespace

const std::vector<std::string_view>& pre_tokenizer_regexes(PreTokenizer type) {
  return type_tables().regexes.at(static_cast<size_t>(type));
}

bool pre_tokenizer_byte_encodes(PreTokenizer type) {
  return type != PreTokenizer::Gemma4 && type != PreTokenizer::SarvamMoe && type != PreTokenizer::Whitespace;
}

std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer type) {
  return split_words(text, type_tables().passes.at(static_cast<size_t>(type)));
}

std::vector<std::string> regex_split(std::string_view text, const std::vector<std::string_view>& regexes) {
  std::vector<Pass> passes;
  for (const std::string_view regex : regexes) passes.push_back(make_pass(regex, false));
  return split_words(text, passes);
}

}  // namespace skiff

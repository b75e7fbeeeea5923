#include "tokenizer/pretokenizer.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace skiff {

PreTokenizer pre_tokenizer_from_name(std::string_view name) {
  static const std::pair<std::string_view, PreTokenizer> kNames[] = {
      {"default", PreTokenizer::Default},
      {"gpt-2", PreTokenizer::Gpt2},
      {"gpt2", PreTokenizer::Gpt2},
      {"mpt", PreTokenizer::Gpt2},
      {"olmo", PreTokenizer::Gpt2},
      {"jais", PreTokenizer::Gpt2},
      {"deepseek-coder", PreTokenizer::DeepseekCoder},
      {"llama3", PreTokenizer::Llama3},
      {"llama-v3", PreTokenizer::Llama3},
      {"llama-bpe", PreTokenizer::Llama3},
      {"dbrx", PreTokenizer::Llama3},
      {"smaug-bpe", PreTokenizer::Llama3},
      {"qwen2", PreTokenizer::Qwen2},
      {"stablelm2", PreTokenizer::Qwen2},
  };
  for (const auto& [known, type] : kNames) {
    if (name == known) return type;
  }
  fail("unsupported pre-tokenizer '{}' (supported: default, gpt-2, mpt, olmo, jais, "
       "deepseek-coder, llama3/llama-bpe, dbrx, smaug-bpe, qwen2, stablelm2)", name);
}

namespace {

using Codepoints = std::vector<uint32_t>;
struct Range {
  size_t begin;
  size_t end;
};
// Length of the match that starts at pos and stays before end; 0 for none.
using Matcher = size_t (*)(const Codepoints& cps, size_t pos, size_t end);

using unicode::is_letter;
using unicode::is_number;
using unicode::is_punctuation;
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

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t match_gpt2(const Codepoints& cps, size_t pos, size_t end) {
  if (const size_t n = match_contraction(cps, pos, end, false)) return n;
  const size_t space = cps[pos] == ' ' && pos + 1 < end ? 1 : 0;
  for (auto* in_class : {is_letter, is_number, is_other}) {
    if (in_class(cps[pos + space])) return space + run_length(cps, pos + space, end, in_class);
  }
  return match_whitespace_run(cps, pos, end);
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t match_llama3_family(const Codepoints& cps, size_t pos, size_t end, size_t max_digits) {
  if (const size_t n = match_contraction(cps, pos, end, true)) return n;
  const uint32_t cp = cps[pos];
  if (is_letter(cp)) return run_length(cps, pos, end, is_letter);
  if (!is_newline(cp) && !is_number(cp) && pos + 1 < end && is_letter(cps[pos + 1])) {
    return 1 + run_length(cps, pos + 1, end, is_letter);
  }
  if (is_number(cp)) return std::min(max_digits, run_length(cps, pos, end, is_number));
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

size_t match_llama3(const Codepoints& cps, size_t pos, size_t end) {
  return match_llama3_family(cps, pos, end, 3);
}
size_t match_qwen2(const Codepoints& cps, size_t pos, size_t end) {
  return match_llama3_family(cps, pos, end, 1);
}

// \s?X+ for a character class X.
template <bool (*in_class)(uint32_t)>
size_t match_optional_space_then_run(const Codepoints& cps, size_t pos, size_t end) {
  const size_t space = is_whitespace(cps[pos]) && pos + 1 < end ? 1 : 0;
  if (!in_class(cps[pos + space])) return 0;
  return space + run_length(cps, pos + space, end, in_class);
}

size_t match_one_newline(const Codepoints& cps, size_t pos, size_t) { return is_newline(cps[pos]) ? 1 : 0; }
size_t match_one_number(const Codepoints& cps, size_t pos, size_t) { return is_number(cps[pos]) ? 1 : 0; }

// [一-龥ࠀ-一가-퟿]+
bool is_deepseek_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x0800 && cp <= 0x4E00) ||
         (cp >= 0xAC00 && cp <= 0xD7FF);
}
size_t match_cjk_run(const Codepoints& cps, size_t pos, size_t end) {
  return run_length(cps, pos, end, is_deepseek_cjk);
}

// [\p{P}\$\+<=>\^~\|]+
bool is_default_punctuation(uint32_t cp) {
  return is_punctuation(cp) || cp == '$' || cp == '+' || cp == '<' || cp == '=' || cp == '>' ||
         cp == '^' || cp == '~' || cp == '|';
}
size_t match_punctuation_run(const Codepoints& cps, size_t pos, size_t end) {
  return run_length(cps, pos, end, is_default_punctuation);
}
size_t match_number_run(const Codepoints& cps, size_t pos, size_t end) {
  return run_length(cps, pos, end, is_number);
}
bool is_ascii_digit(uint32_t cp) { return cp >= '0' && cp <= '9'; }
size_t match_three_digits(const Codepoints& cps, size_t pos, size_t end) {
  return run_length(cps, pos, std::min(end, pos + 3), is_ascii_digit) == 3 ? 3 : 0;
}

// One regex pass as llama.cpp's unicode_regex_split applies it: every match
// and every stretch between matches becomes a range of its own.
std::vector<Range> split(const Codepoints& cps, const std::vector<Range>& ranges, Matcher match) {
  std::vector<Range> out;
  for (const Range& range : ranges) {
    size_t unmatched = range.begin;
    size_t pos = range.begin;
    while (pos < range.end) {
      const size_t n = match(cps, pos, range.end);
      if (n == 0) {
        ++pos;
        continue;
      }
      if (unmatched < pos) out.push_back({unmatched, pos});
      out.push_back({pos, pos + n});
      pos += n;
      unmatched = pos;
    }
    if (unmatched < range.end) out.push_back({unmatched, range.end});
  }
  return out;
}

std::vector<Matcher> passes_of(PreTokenizer type) {
  switch (type) {
    case PreTokenizer::Default:
      return {match_punctuation_run, match_gpt2, match_number_run, match_three_digits};
    case PreTokenizer::Gpt2:
      return {match_gpt2};
    case PreTokenizer::DeepseekCoder:
      return {match_one_newline, match_optional_space_then_run<is_letter>,
              match_optional_space_then_run<is_punctuation>, match_cjk_run, match_one_number};
    case PreTokenizer::Llama3:
      return {match_llama3};
    case PreTokenizer::Qwen2:
      return {match_qwen2};
  }
  return {};
}

}  // namespace

std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer type) {
  const Codepoints cps = unicode::decode_utf8(text);
  std::vector<Range> ranges{{0, cps.size()}};
  if (cps.empty()) ranges.clear();
  for (Matcher match : passes_of(type)) ranges = split(cps, ranges, match);
  std::vector<std::string> words;
  words.reserve(ranges.size());
  for (const Range& r : ranges) words.push_back(unicode::encode_utf8(cps, r.begin, r.end));
  return words;
}

}  // namespace skiff

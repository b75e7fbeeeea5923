// Pre-tokenizers of byte-level BPE vocabularies: split text into the words
// that BPE merges never cross. llama.cpp names one per GGUF
// tokenizer.ggml.pre value (about 90 names, about 60 LLAMA_VOCAB_PRE_TYPE_*
// kinds); each kind is a list of regexes applied one after another, and many
// kinds share a list. A PreTokenizer here is one distinct list, named after
// the first llama.cpp kind that uses it; pretokenizer.cpp holds the regexes
// as llama.cpp states them, pretokenizer_names.cpp the names.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace skiff {

enum class PreTokenizer {
  Default,        // llama.cpp's fallback: punctuation runs, the GPT-2 regex, digit runs, 3 digits
  Gpt2,           // GPT-2's regex; also mpt, olmo, jais, trillion, granite-docling
  DeepseekCoder,  // newlines, letters, punctuation, CJK runs, single digits
  Llama3,         // case-free contractions, digit groups of at most 3; also dbrx, smaug, chatglm4
  Qwen2,          // the Llama 3 regex with single digits; also stablelm2, hunyuan, solar-open, grok-2
  Qwen35,         // Qwen2's, with combining marks (\p{M}) joining letters
  Starcoder,      // single digits, then GPT-2's; also refact, command-r, smollm, codeshell, exaone, minerva, mellum2
  Falcon,         // punctuation runs (with `), GPT-2's, 3 digits
  DeepseekLlm,    // newlines, Latin/Greek/Cyrillic... letters, ASCII/fullwidth punctuation, CJK, digits
  Deepseek3Llm,   // digit groups, CJK/kana, then a letter/punctuation regex; also hunyuan-dense, joyai, hy_v4
  Spark25,
  Youtu,
  Jais2,          // Llama 3's with whitespace runs cut into powers of two
  Poro,           // words up to spaces and punctuation; also bloom, gpt3-finnish
  Viking,         // Poro's, then single digits
  Tekken,         // case-aware letters (upper then lower), single digits
  Chameleon,      // sentinel and image tokens, tabs/newlines/space pairs, digits, punctuation, GPT-2's
  Gpt4o,          // Tekken's with contractions and digit groups of 3; also llama4, minimax-m2
  GraniteEmbMulti,  // Gpt4o's with combining marks in letters
  TinyAya,        // digit groups of 3 from the right, then Gpt4o's shape
  Superbpe,       // digit runs, then cuts before each group of 3 digits from the right
  Bailingmoe,
  SeedCoder,
  Ufakzeka,       // Qwen2's without contractions
  Laguna,         // newline runs apart, then Qwen2's
  ExaoneMoe,      // letters joined across single spaces
  Minicpm5,
  KimiK2,         // Han runs, and Llama 3's words with Han kept out of their letter runs
  Afmoe,          // digit groups of 3 from the right (llama.cpp's custom split), CJK/Asian runs, Deepseek3's words
  Gemma4,         // SentencePiece-style BPE: only newline runs apart, no byte mapping
  SarvamMoe,      // Gemma4's split without its whole-newline-token rule
  Whitespace,     // runs of non-space, no byte mapping
};

// What a tokenizer.ggml.pre name selects in llama.cpp's vocabulary loader.
struct PreTokenizerChoice {
  PreTokenizer type = PreTokenizer::Default;
  bool ignore_merges = false;       // a word that is a whole token is not merged
  bool add_bos = false;             // llama.cpp sets add_bos (the file's key still wins)
  bool escape_whitespaces = false;  // spaces become U+2581 before splitting (Gemma 4)
  bool no_default_bos = false;      // the BOS id defaults to none (chatglm)
};

// Maps a tokenizer.ggml.pre name as llama.cpp does; throws Error naming an
// unknown one.
PreTokenizerChoice pre_tokenizer_from_name(std::string_view name);
// The canonical name of a type: the first name that selects it.
std::string_view canonical_pre_tokenizer_name(PreTokenizer type);
// Every name llama.cpp maps to a pre-tokenizer.
std::vector<std::string_view> pre_tokenizer_names();

// The regexes of a type, in the order they split.
const std::vector<std::string_view>& pre_tokenizer_regexes(PreTokenizer type);
// False for the SentencePiece-style types (words keep their UTF-8, not GPT-2's byte alphabet).
bool pre_tokenizer_byte_encodes(PreTokenizer type);

// The words of text, in order; their concatenation is text (with ill-formed
// UTF-8 replaced by U+FFFD).
std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer type);
// The same split for any list of regexes, each run by the regex engine
// (regex.h) with no hand-written fast path; for tests and new regexes.
// "\p{AFMoE_digits}" stands for llama.cpp's custom AFMoE digit split, which
// no regex states.
std::vector<std::string> regex_split(std::string_view text, const std::vector<std::string_view>& regexes);

}  // namespace skiff

// skiff grammar: the grammar engine's own check and benchmark, with no
// forward pass. Each input line (a JSON-encoded string) is tokenized with the
// model's tokenizer and fed token by token; every token is checked against
// the mask computed before it. One JSON line per input, then a summary of the
// compile time and the mask times (one thread, microseconds). With --cases,
// each input line is a case of its own ({"json_schema" | "regex" | "choice" |
// "gbnf": ..., "texts": [...]}): one output line per case, its error or its
// texts' results, so a test suite of many schemas loads the vocabulary once.
// --times adds each case's compile_us and, per text, each token's mask_us and
// byte length (token_bytes) and how many of its tokens jump-forward would
// have appended (tokens_forced), for finding the slow masks (tools/bench_grammar.py).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/json.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "engine/grammar_vocab.h"
#include "grammar/compile.h"
#include "grammar/compiled_grammar.h"
#include "grammar/lark.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/tokenizer.h"

namespace skiff::cli {
namespace {

struct GrammarOptions {
  std::string model;
  std::string json_schema_file;
  std::string regex;
  std::string choices;
  std::string gbnf_file;
  // The same, as text (a --cases line).
  std::string json_schema_text, gbnf_text;
  std::vector<std::string> choice_list;
  std::string input = "-";
  std::string cases;
  bool times = false;
};

std::vector<std::string> split_choices(const std::string& list) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (true) {
    size_t comma = list.find(',', begin);
    out.push_back(list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

std::shared_ptr<const grammar::Grammar> compile(const GrammarOptions& o) {
  if (!o.json_schema_file.empty() || !o.json_schema_text.empty())
    return grammar::compile_json_schema(
        parse_ordered_json(o.json_schema_text.empty() ? hf::read_file(o.json_schema_file) : o.json_schema_text));
  if (!o.regex.empty()) return grammar::compile_regex(o.regex);
  if (!o.choices.empty()) return grammar::compile_choice(split_choices(o.choices));
  if (!o.choice_list.empty()) return grammar::compile_choice(o.choice_list);
  return grammar::compile_gbnf_or_lark(o.gbnf_text.empty() ? hf::read_file(o.gbnf_file) : o.gbnf_text);
}

double percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// Times and counts over every text of the run.
struct RunStats {
  std::vector<double> mask_us, compile_us;
  size_t tokens = 0, tokens_forced = 0;

  nlohmann::json summary() {
    std::sort(mask_us.begin(), mask_us.end());
    std::sort(compile_us.begin(), compile_us.end());
    double mean = 0;
    for (double v : mask_us) mean += v;
    if (!mask_us.empty()) mean /= static_cast<double>(mask_us.size());
    nlohmann::json s = {
        {"mask_us", {{"mean", mean}, {"p50", percentile(mask_us, 0.5)}, {"p90", percentile(mask_us, 0.9)},
                     {"p99", percentile(mask_us, 0.99)}, {"max", mask_us.empty() ? 0.0 : mask_us.back()},
                     {"count", mask_us.size()}}},
        {"jump_forward_share", tokens ? static_cast<double>(tokens_forced) / static_cast<double>(tokens) : 0.0}};
    if (compile_us.size() == 1) s["compile_us"] = compile_us[0];
    else s["compile_us"] = {{"p50", percentile(compile_us, 0.5)}, {"p90", percentile(compile_us, 0.9)},
                            {"max", compile_us.empty() ? 0.0 : compile_us.back()}, {"count", compile_us.size()}};
    return {{"summary", s}};
  }
};

// Feeds one text token by token, checking each token against the mask before it.
nlohmann::json check_text(const std::shared_ptr<const grammar::CompiledGrammar>& compiled, const Tokenizer& tokenizer,
                          const std::string& text, RunStats& stats, bool times = false) {
  std::vector<int32_t> ids = tokenizer.encode(text, /*add_special=*/false, /*parse_special=*/false);
  const grammar::TokenTrie& vocab = *compiled->vocab();
  grammar::Matcher matcher(compiled);
  std::vector<uint32_t> bits((vocab.n_vocab() + 31) / 32);
  nlohmann::json result = {{"accepted", true}, {"tokens", ids.size()}, {"rejected_at", nullptr}};
  std::vector<double> token_us;
  std::vector<size_t> token_bytes;
  size_t forced_here = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    Timer t;
    matcher.fill_mask(bits);
    stats.mask_us.push_back(t.seconds() * 1e6);
    if (times) {
      token_us.push_back(stats.mask_us.back());
      token_bytes.push_back(vocab.bytes_of(ids[i]).size());
    }
    bool allowed = bits[ids[i] >> 5] >> (ids[i] & 31) & 1;
    std::string forced = matcher.forced_bytes();
    const std::string& piece = vocab.bytes_of(ids[i]);
    if (!piece.empty() && forced.size() >= piece.size() && forced.compare(0, piece.size(), piece) == 0)
      ++stats.tokens_forced, ++forced_here;
    ++stats.tokens;
    bool taken = allowed && matcher.accept_token(ids[i]);
    if (allowed != taken) fail("the mask allowed token {} that the matcher then refused", ids[i]);
    if (!taken) {
      result["accepted"] = false;
      result["rejected_at"] = i;
      break;
    }
  }
  bool complete = result["accepted"].get<bool>() && matcher.is_complete();
  result["complete"] = complete;
  result["accepted"] = complete;
  if (times) {
    result["mask_us"] = token_us;
    result["token_bytes"] = token_bytes;
    result["tokens_forced"] = forced_here;
  }
  return result;
}

std::shared_ptr<const grammar::CompiledGrammar> compile_timed(const GrammarOptions& o,
                                                              const std::shared_ptr<const grammar::TokenTrie>& vocab,
                                                              RunStats& stats) {
  Timer t;
  auto g = compile(o);
  stats.compile_us.push_back(t.seconds() * 1e6);
  return std::make_shared<grammar::CompiledGrammar>(g, vocab);
}

int run_cases(const Tokenizer& tokenizer, const std::shared_ptr<const grammar::TokenTrie>& vocab, std::istream& in,
              bool times) {
  RunStats stats;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::ordered_json c = parse_ordered_json(line);
    GrammarOptions one;
    nlohmann::json out;
    try {
      if (c.contains("json_schema")) one.json_schema_text = c["json_schema"].dump();
      else if (c.contains("regex")) one.regex = c["regex"].get<std::string>();
      else if (c.contains("choice")) one.choice_list = c["choice"].get<std::vector<std::string>>();
      else if (c.contains("gbnf")) one.gbnf_text = c["gbnf"].get<std::string>();
      else fail("a case needs one of json_schema, regex, choice, gbnf");
      auto compiled = compile_timed(one, vocab, stats);
      if (times) out["compile_us"] = stats.compile_us.back();
      out["results"] = nlohmann::json::array();
      for (const auto& text : c.value("texts", nlohmann::ordered_json::array()))
        out["results"].push_back(check_text(compiled, tokenizer, text.get<std::string>(), stats, times));
    } catch (const Error& e) {
      out = {{"error", e.what()}};
    }
    std::printf("%s\n", out.dump().c_str());
  }
  std::printf("%s\n", stats.summary().dump().c_str());
  return 0;
}

int run_grammar(const GrammarOptions& o) {
  auto tokenizer = Tokenizer::from_path(o.model);
  auto vocab = grammar_vocab(*tokenizer);
  std::ifstream file;
  const std::string& path = o.cases.empty() ? o.input : o.cases;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) fail("cannot read {}", path);
  }
  std::istream& in = path == "-" ? std::cin : file;
  if (!o.cases.empty()) return run_cases(*tokenizer, vocab, in, o.times);

  RunStats stats;
  std::shared_ptr<const grammar::CompiledGrammar> compiled;
  try {
    compiled = compile_timed(o, vocab, stats);
  } catch (const Error& e) {
    std::fprintf(stderr, "skiff grammar: %s\n", e.what());
    return 2;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::string text = parse_json(line).get<std::string>();
    std::printf("%s\n", check_text(compiled, *tokenizer, text, stats).dump().c_str());
  }
  std::printf("%s\n", stats.summary().dump().c_str());
  return 0;
}

}  // namespace

void add_grammar_command(CLI::App& app) {
  auto options = std::make_shared<GrammarOptions>();
  CLI::App* command = app.add_subcommand(
      "grammar", "Check texts against a constraint token by token and time its token masks (no model run)");
  command->add_option("-m,--model", options->model, "GGUF file (a vocabulary-only one will do) or HF directory")
      ->required();
  auto* schema = command->add_option("--json-schema", options->json_schema_file, "JSON Schema file");
  auto* regex = command->add_option("--regex", options->regex, "regular expression the whole text must match");
  auto* choice = command->add_option("--choice", options->choices, "comma-separated list of allowed texts");
  auto* gbnf = command->add_option("--gbnf,--lark", options->gbnf_file,
                                   "grammar file: GBNF (llama.cpp's format) or Lark (llguidance's), told apart by '::='");
  schema->excludes(regex, choice, gbnf);
  regex->excludes(choice, gbnf);
  choice->excludes(gbnf);
  command->add_option("--input", options->input, "file of candidate texts, one JSON string a line (default: stdin)");
  command->add_option("--cases", options->cases,
                      "file of cases, one JSON object a line: a constraint (json_schema, regex, choice or gbnf) and its texts")
      ->excludes(schema, regex, choice, gbnf);
  command->add_flag("--times", options->times,
                    "with --cases: each case's compile_us, and per text each token's mask_us and token_bytes");
  command->callback([options] {
    if (options->json_schema_file.empty() && options->regex.empty() && options->choices.empty() &&
        options->gbnf_file.empty() && options->cases.empty())
      throw CLI::ValidationError("one of --json-schema, --regex, --choice, --gbnf, --cases is required");
    int code = run_grammar(*options);
    if (code != 0) std::exit(code);
  });
}

}  // namespace skiff::cli

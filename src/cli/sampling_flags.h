// The sampling flags shared by skiff run and skiff batch, with llama.cpp's
// defaults (skiff run's): what a user of either command types the same way.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "base/error.h"
#include "engine/sampling_params.h"
#include "tokenizer/hf_files.h"

namespace skiff::cli {

inline SamplingParams llama_cpp_sampling() {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 40;
  p.top_p = 0.95f;
  p.min_p = 0.05f;
  return p;
}

// The flags write straight into s. help_prefix starts each description
// ("default " where a request's own fields override the flags).
inline void add_sampling_flags(CLI::App* cmd, SamplingParams& s, const std::string& help_prefix) {
  const auto help = [&](const char* text) { return help_prefix + text; };
  cmd->add_option("--temp", s.temperature, help("temperature (0: greedy)"))
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--top-k", s.top_k, help("top-k (0: off)"))
      ->capture_default_str()->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--top-p", s.top_p, help("top-p (1: off)"))
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--min-p", s.min_p, help("min-p (0: off)"))
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--repeat-penalty", s.repetition_penalty, help("repetition penalty (1: off)"))
      ->capture_default_str();
  cmd->add_option("--frequency-penalty", s.frequency_penalty, help("frequency penalty (0: off)"))
      ->capture_default_str();
  cmd->add_option("--presence-penalty", s.presence_penalty, help("presence penalty (0: off)"))
      ->capture_default_str();
}

// A constraint on the output (structured outputs), one of the three.
struct ConstraintFlags {
  std::string json_schema_file, grammar_file, regex;

  void add_to(CLI::App* cmd) {
    auto* schema = cmd->add_option("--json-schema", json_schema_file, "the output is JSON valid for this JSON Schema file");
    auto* grammar = cmd->add_option("--grammar-file", grammar_file, "the output follows this GBNF grammar file");
    auto* regex_flag = cmd->add_option("--regex", regex, "the output matches this regular expression");
    schema->excludes(grammar, regex_flag);
    grammar->excludes(regex_flag);
  }
  void apply(SamplingParams& p) const {
    if (!json_schema_file.empty()) p.structured_outputs.json = hf::read_file(json_schema_file), p.structured_outputs.field = "--json-schema";
    if (!grammar_file.empty()) p.structured_outputs.grammar = hf::read_file(grammar_file), p.structured_outputs.field = "--grammar-file";
    if (!regex.empty()) p.structured_outputs.regex = regex, p.structured_outputs.field = "--regex";
  }
};

}  // namespace skiff::cli

#include "engine/structured_output.h"

#include "base/error.h"
#include "base/json.h"
#include "engine/grammar_vocab.h"
#include "grammar/call_grammar.h"
#include "grammar/compile.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/lark.h"

namespace skiff {
namespace {

std::string key_of(const StructuredOutputs& so) {
  const std::string ws = so.disable_any_whitespace ? "compact\x01" : "";
  if (so.calls) {
    const CallsFormat& f = *so.calls;
    std::string key = ws + "calls\x01" + f.prefix + '\x01' + f.separator + '\x01' + f.suffix + (f.parallel ? "\x01p" : "\x01s") +
                      '\x01' + f.parameter_begin + '\x01' + f.parameter_end;
    for (const CallsFormat::Call& c : f.calls) key += '\x02' + c.begin + '\x01' + c.arguments_schema + '\x01' + c.end;
    return key;  // the trigger and `after` change when the grammar starts, not the grammar
  }
  if (!so.json.empty()) return ws + "json\x01" + so.json;
  if (so.json_object) return ws + "json_object";
  if (!so.regex.empty()) return "regex\x01" + so.regex;
  if (!so.grammar.empty()) return "grammar\x01" + so.grammar;
  std::string key = "choice";
  for (const std::string& c : so.choice) key += "\x01" + c;
  return key;
}

std::shared_ptr<const grammar::Grammar> compile(const StructuredOutputs& so) {
  grammar::JsonGrammarOptions json;
  if (so.disable_any_whitespace) json.max_whitespace = 0;
  if (!so.json.empty()) return grammar::compile_json_schema(parse_ordered_json(so.json), {}, json);
  if (so.json_object) return grammar::compile_any_json_object({}, json);
  if (so.calls) {
    grammar::CallGrammarSpec spec{so.calls->prefix, so.calls->separator, so.calls->suffix, {}, so.calls->parallel,
                                  std::nullopt};
    if (!so.calls->parameter_end.empty()) spec.parameters = {so.calls->parameter_begin, so.calls->parameter_end};
    for (const CallsFormat::Call& c : so.calls->calls)
      spec.calls.push_back({c.begin, parse_ordered_json(c.arguments_schema), c.end});
    return grammar::compile_calls(spec, {}, json);
  }
  if (!so.regex.empty()) return grammar::compile_regex(so.regex);
  if (!so.grammar.empty()) return grammar::compile_gbnf_or_lark(so.grammar);
  return grammar::compile_choice(so.choice);
}

}  // namespace

GrammarCache::GrammarCache(const Tokenizer& tokenizer, size_t capacity, size_t max_bytes)
    : tokenizer_(tokenizer), capacity_(capacity), max_bytes_(max_bytes) {}

const std::shared_ptr<const grammar::TokenTrie>& GrammarCache::vocab() {
  if (!vocab_) vocab_ = grammar_vocab(tokenizer_);
  return vocab_;
}

std::shared_ptr<const grammar::CompiledGrammar> GrammarCache::get(const StructuredOutputs& so) {
  if (so.empty()) return nullptr;
  std::string key = key_of(so);
  std::shared_ptr<const grammar::TokenTrie> trie;
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_key_.find(key); it != by_key_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      evict();
      return lru_.front().second;
    }
    trie = vocab();
  }
  std::shared_ptr<const grammar::Grammar> g;
  try {
    g = compile(so);
  } catch (const Error& e) {
    if (so.field.empty()) throw;
    throw FieldError(so.field, fmt::format("{}: {}", so.field, e.what()));
  }
  auto compiled = std::make_shared<const grammar::CompiledGrammar>(g, trie);
  std::lock_guard lock(mutex_);
  if (by_key_.count(key)) return by_key_[key]->second;
  lru_.emplace_front(key, compiled);
  by_key_[key] = lru_.begin();
  evict();
  return compiled;
}

void GrammarCache::evict() {
  size_t bytes = 0;
  for (const auto& [key, compiled] : lru_) bytes += compiled->memory_bytes();
  while (lru_.size() > 1 && (lru_.size() > capacity_ || bytes > max_bytes_)) {
    bytes -= std::min(bytes, lru_.back().second->memory_bytes());
    by_key_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

}  // namespace skiff

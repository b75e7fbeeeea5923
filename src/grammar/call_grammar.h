// Calls written in a fixed layout, each with a JSON value (tool calls: a
// family's call syntax around each function's arguments schema): prefix,
// then one call or more separated by `separator`, then suffix. A call is one
// of `calls`: its begin text, a value of its schema, its end text. "{index}"
// in a begin text stands for any decimal number (templates that number calls).
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/json_schema.h"

namespace skiff::grammar {

struct CallGrammarSpec {
  struct Call {
    std::string begin;
    nlohmann::ordered_json arguments_schema;
    std::string end;
  };
  std::string prefix, separator, suffix;
  std::vector<Call> calls;
  bool parallel = true;  // more than one call may follow
};

std::shared_ptr<const Grammar> compile_calls(const CallGrammarSpec& spec, Limits limits = {},
                                             JsonGrammarOptions options = {});

}  // namespace skiff::grammar

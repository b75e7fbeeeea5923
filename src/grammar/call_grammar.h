// Calls written in a fixed layout, each with a JSON value (tool calls: a
// family's call syntax around each function's arguments schema): prefix,
// then one call or more separated by `separator`, then suffix. A call is one
// of `calls`: its begin text, its arguments (a JSON value of its schema, or
// the schema's properties as XML parameters), its end text. "{index}"
// in a begin text stands for any decimal number (templates that number calls).
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
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
  // Set: each call's arguments are written a parameter at a time (XML
  // families), not as a JSON object.
  std::optional<XmlParameterLayout> parameters;
};

std::shared_ptr<const Grammar> compile_calls(const CallGrammarSpec& spec, Limits limits = {},
                                             JsonGrammarOptions options = {});

}  // namespace skiff::grammar

#include "grammar/call_grammar.h"

#include "base/error.h"

namespace skiff::grammar {
namespace {

// Literal text, where "{index}" is any decimal number.
void add_text(GrammarBuilder& b, const std::string& text, std::vector<Symbol>& body) {
  static const std::string kIndex = "{index}";
  size_t at = 0;
  while (at < text.size()) {
    size_t index = text.find(kIndex, at);
    std::string piece = text.substr(at, index == std::string::npos ? std::string::npos : index - at);
    if (!piece.empty()) body.push_back(b.literal(piece));
    if (index == std::string::npos) break;
    body.push_back(b.regex(regex_fullmatch("0|[1-9][0-9]*"), TextEncoding::Utf8, "index"));
    at = index + kIndex.size();
  }
}

}  // namespace

std::shared_ptr<const Grammar> compile_calls(const CallGrammarSpec& spec, Limits limits, JsonGrammarOptions options) {
  if (spec.calls.empty()) fail("tool calls: no function to call");
  GrammarBuilder b(limits);
  int32_t call = b.add_rule("call");
  for (const CallGrammarSpec::Call& c : spec.calls) {
    std::vector<Symbol> body;
    add_text(b, c.begin, body);
    body.push_back(spec.parameters ? add_xml_parameters(b, c.arguments_schema, *spec.parameters, options)
                                   : add_json_schema(b, c.arguments_schema, options));
    add_text(b, c.end, body);
    b.add_production(call, std::move(body));
  }
  Symbol calls = call;
  if (spec.parallel) {
    int32_t list = b.add_rule("calls");  // left-recursive: Earley's cheap case
    b.add_production(list, {call});
    std::vector<Symbol> more{list};
    add_text(b, spec.separator, more);
    more.push_back(call);
    b.add_production(list, std::move(more));
    calls = list;
  }
  std::vector<Symbol> root;
  add_text(b, spec.prefix, root);
  root.push_back(calls);
  add_text(b, spec.suffix, root);
  return b.build(b.rule_of("tool calls", {root}));
}

}  // namespace skiff::grammar

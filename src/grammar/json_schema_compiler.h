// The JSON Schema compiler's state, shared by its files: json_schema.cpp
// (schemas: references, combinators, keywords, types),
// json_schema_values.cpp (the JSON text of strings, numbers, arrays,
// literals) and json_schema_objects.cpp (objects).
#pragma once
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/json_schema.h"
#include "grammar/json_schema_internal.h"

namespace skiff::grammar {

inline bool has(const ojson& s, const char* key) { return s.is_object() && s.contains(key); }
inline std::string child_path(const std::string& path, std::string_view key) { return path + "/" + std::string(key); }
// A count keyword's value (minItems, maxLength, ...), or fallback when absent.
uint64_t count_field(const ojson& schema, const char* key, uint64_t fallback, const std::string& path);
// A `pattern`, as a search: the Error names it and its place.
RegexNode search_regex(const std::string& pattern, const std::string& path);

class SchemaCompiler {
 public:
  // nesting: how many compilers around this one check enum values (they
  // pass their root on, its references already rewritten, and their budget
  // for merges).
  SchemaCompiler(const ojson& root, Limits limits, JsonGrammarOptions options = {}, int nesting = 0,
                 MergeBudget* merge_budget = nullptr);
  // Into a grammar being built elsewhere (JSON inside other text: tool calls).
  SchemaCompiler(GrammarBuilder& builder, const ojson& root, JsonGrammarOptions options);
  std::shared_ptr<const Grammar> compile();
  // The root schema's values, no whitespace around; throws Error when none.
  Symbol root_value();
  // The grammar of one subschema's values, with no whitespace around; null
  // when no value satisfies it.
  std::shared_ptr<const Grammar> compile_alone(const ojson& schema, const std::string& path);
  std::shared_ptr<const Grammar> compile_any_object();
  // add_xml_parameters and string_only_properties of the root (json_schema_xml.cpp).
  Symbol xml_parameters(const XmlParameterLayout& layout);
  std::vector<std::string> string_only_properties();

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxNesting = 4;
  static constexpr uint64_t kMaxUnrolled = 2000;  // array positions written out for min/maxItems, prefixItems
  static constexpr size_t kMaxOneOfPairwise = 1000;  // oneOf branches checked pair by pair (~0.1 s)

  [[noreturn]] static void refuse(std::string_view key, const std::string& path,
                                  std::string_view why = "cannot be enforced");
  const ojson& own(ojson v);
  // Notes why a schema accepts nothing (the last such reason is the error
  // when the root does: its own, or its last part's), and returns nullopt.
  std::nullopt_t impossible(std::string why);

  // What a schema accepts, or nullopt when nothing does (false, impossible types).
  std::optional<Symbol> compile_value(const ojson& schema, const std::string& path, int depth);
  std::optional<Symbol> memoized(const ojson& schema, std::optional<Symbol> value);
  std::optional<Symbol> finish(const ojson& schema, int32_t rule, std::vector<std::vector<Symbol>> alternatives);
  void setup();
  void check_keywords(const ojson& schema, const std::string& path) const;
  ojson expand_dependencies(const ojson& schema, const std::string& path) const;
  ojson merge_in(const ojson& outer, const ojson& inner, const std::string& path) const;
  void check_one_of_disjoint(const ojson& base, const ojson& list, const std::string& path) const;
  std::vector<ojson> enum_values(const ojson& schema, const std::string& path) const;
  std::vector<std::string> types_of(const ojson& schema, const std::string& path) const;
  bool type_allows(const ojson& schema, const ojson& v) const;

  std::optional<Symbol> typed_value(const std::string& type, const ojson& schema, const std::string& path, int depth);
  Symbol string_value(const ojson& schema, const std::string& path);
  // What a string schema asks of the decoded text, each part a regex; key
  // gets what tells them apart from other strings' parts.
  std::vector<RegexNode> string_parts(const ojson& schema, const std::string& path, std::string& key);
  // The schema a property's pure $refs lead to, and whether its values can only be strings.
  const ojson& through_refs(const ojson& schema, const std::string& path) const;
  bool string_only(const ojson& schema) const;
  // A string property's raw text followed by `end`, whose tag it never holds: one lexeme.
  std::optional<Symbol> raw_string_then(const ojson& schema, const std::string& end, const std::string& path);
  Symbol number_value(const ojson& schema, bool integer, const std::string& path);
  std::optional<Symbol> object_value(const ojson& schema, const std::string& path, int depth);
  std::vector<RegexNode> name_parts(const ojson& names, const std::string& path, int depth);
  std::optional<Symbol> object_of_members(const std::vector<std::pair<Symbol, bool>>& members,
                                          std::vector<std::vector<Symbol>>& extra, uint64_t min_members,
                                          uint64_t max_members, const std::string& path);
  std::optional<Symbol> array_value(const ojson& schema, const std::string& path, int depth);
  std::optional<Symbol> array_containing(const ojson& items, const ojson& contains, uint64_t at_least,
                                         const std::string& path, int depth);
  Symbol literal_value(const ojson& v, int depth);
  Symbol number_literal(const ojson& v);
  Symbol any_value();
  Symbol any_object();
  Symbol json_string_of(const RegexNode& content, const std::string& key);
  // Zero or more items separated by "," and whitespace, left-recursive
  // (Earley's cheap case): item ("," ws item)*.
  Symbol separated_list(Symbol item, const std::string& name);

  const ojson root_;  // its references rewritten as JSON pointers
  const Limits limits_;
  const JsonGrammarOptions options_;
  const int nesting_;
  std::unique_ptr<GrammarBuilder> own_builder_;  // unless building into another's
  GrammarBuilder& builder_;
  MergeBudget own_merge_budget_;
  MergeBudget* merge_budget_;  // this one's, or the compiler's around it
  Symbol ws_;
  bool legacy_ = false;  // drafts 4, 6, 7: $ref replaces its siblings; items may be an array
  bool draft4_ = false;  // exclusiveMinimum/Maximum are booleans
  std::unordered_map<const ojson*, std::optional<Symbol>> memo_;
  std::deque<ojson> owned_;  // merged schemas, at stable addresses for memo_
  std::optional<Symbol> any_value_, any_object_;
  std::string impossible_;
  int n_objects_ = 0;  // tells each object's key lexemes apart
};

}  // namespace skiff::grammar

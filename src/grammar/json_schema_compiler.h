// The JSON Schema compiler's state, shared by its two files: json_schema.cpp
// (schemas: references, combinators, keywords, types) and
// json_schema_values.cpp (the JSON text of each type: strings, numbers,
// objects, arrays, literals).
#pragma once
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/json_schema_internal.h"

namespace skiff::grammar {

inline bool has(const ojson& s, const char* key) { return s.is_object() && s.contains(key); }
inline std::string child_path(const std::string& path, std::string_view key) { return path + "/" + std::string(key); }

class SchemaCompiler {
 public:
  SchemaCompiler(const ojson& root, Limits limits);
  std::shared_ptr<const Grammar> compile();
  std::shared_ptr<const Grammar> compile_any_object();

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr uint64_t kMaxUnrolled = 2000;  // array positions written out for min/maxItems, prefixItems

  [[noreturn]] static void refuse(std::string_view key, const std::string& path,
                                  std::string_view why = "cannot be enforced");
  const ojson& own(ojson v);

  // What a schema accepts, or nullopt when nothing does (false, impossible types).
  std::optional<Symbol> compile_value(const ojson& schema, const std::string& path, int depth);
  std::optional<Symbol> memoized(const ojson& schema, std::optional<Symbol> value);
  std::optional<Symbol> finish(const ojson& schema, int32_t rule, std::vector<std::vector<Symbol>> alternatives);
  void check_keywords(const ojson& schema, const std::string& path) const;
  void check_one_of_disjoint(const ojson& base, const ojson& list, const std::string& path) const;
  std::vector<ojson> enum_values(const ojson& schema, const std::string& path) const;
  std::vector<std::string> types_of(const ojson& schema, const std::string& path) const;
  bool type_allows(const ojson& schema, const ojson& v) const;

  std::optional<Symbol> typed_value(const std::string& type, const ojson& schema, const std::string& path, int depth);
  Symbol string_value(const ojson& schema, const std::string& path);
  Symbol number_value(const ojson& schema, bool integer, const std::string& path);
  std::optional<Symbol> object_value(const ojson& schema, const std::string& path, int depth);
  std::optional<Symbol> array_value(const ojson& schema, const std::string& path, int depth);
  Symbol literal_value(const ojson& v, int depth);
  Symbol any_value();
  Symbol any_object();
  Symbol json_string_of(const RegexNode& content, const std::string& key);
  // Zero or more items separated by "," and whitespace, left-recursive
  // (Earley's cheap case): item ("," ws item)*.
  Symbol separated_list(Symbol item, const std::string& name);

  const ojson& root_;
  GrammarBuilder builder_;
  Symbol ws_;
  bool legacy_ = false;  // drafts 4, 6, 7: $ref replaces its siblings; items may be an array
  bool draft4_ = false;  // exclusiveMinimum/Maximum are booleans
  std::unordered_map<const ojson*, std::optional<Symbol>> memo_;
  std::deque<ojson> owned_;  // merged schemas, at stable addresses for memo_
  std::optional<Symbol> any_value_, any_object_;
};

}  // namespace skiff::grammar

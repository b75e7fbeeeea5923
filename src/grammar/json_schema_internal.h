// Shared by the JSON Schema compiler's files: the keyword lists and allOf's merge.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace skiff::grammar {

using ojson = nlohmann::ordered_json;

// The schema with each $ref that names a schema of it (by its $id base
// URIs, anchors and JSON pointers) rewritten as a JSON pointer from the
// root, "#/..."; references to other documents stay as they are.
ojson resolve_refs_to_pointers(const ojson& root);

// Resolves a "#..." reference within root (JSON pointer, percent-decoded);
// throws Error naming the reference otherwise.
const ojson& resolve_schema_ref(const ojson& root, const std::string& ref, const std::string& path);

// How many pairs of subschemas the merges of one compile may combine. Each
// merge follows its sides' properties, items and references, so schemas that
// reference the same subschemas along many paths (a DAG of $refs under allOf)
// cost work exponential in their depth, never bounded by their size. Real
// schemas make at most about a hundred (98 in the JSON-Schema-Test-Suite, 24
// in the schema corpus of tools/collect_schemas.py); 20,000 take about 50 ms.
struct MergeBudget {
  uint64_t left = 20'000;
};

// The schema that accepts what both a and b accept (allOf's meaning), where
// that is again a plain schema; throws Error naming what cannot be combined,
// or when the budget is spent.
ojson merge_schemas(const ojson& root, const ojson& a, const ojson& b, const std::string& path, MergeBudget& budget,
                    int depth = 0);

// Keywords that only annotate; a schema with nothing else accepts anything.
bool is_annotation_keyword(std::string_view key);

// Whether the root's $schema names a draft with this in its URI; drafts 4
// to 7 ("draft-0") are legacy: $ref replaces its siblings, and items may be
// an array, followed by additionalItems.
bool has_schema_uri(const ojson& root, std::string_view part);
bool is_legacy_draft(const ojson& root);

}  // namespace skiff::grammar

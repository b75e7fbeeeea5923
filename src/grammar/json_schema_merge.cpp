// allOf (and $ref beside other keywords in 2019-09 and later) as one schema:
// the keywords of both, each combined by its meaning.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "grammar/json_schema_internal.h"

namespace skiff::grammar {
namespace {

constexpr int kMaxMergeDepth = 32;

const std::set<std::string, std::less<>> kAnnotations = {
    "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema",
    "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "contentMediaType", "contentEncoding", "contentSchema",
    "$defs", "definitions", "then", "else"};

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

[[noreturn]] void cannot_merge(std::string_view key, const std::string& path) {
  fail("JSON Schema: 'allOf' at {}: cannot combine the '{}' of its schemas", path, key);
}

std::vector<std::string> type_list(const ojson& t) {
  std::vector<std::string> out;
  if (t.is_string()) out.push_back(t.get<std::string>());
  else
    for (const ojson& x : t) out.push_back(x.is_string() ? x.get<std::string>() : x.dump());
  return out;
}

ojson merge_types(const ojson& a, const ojson& b) {
  std::vector<std::string> ta = type_list(a), tb = type_list(b), out;
  auto in = [](const std::vector<std::string>& list, const std::string& t) {
    return std::find(list.begin(), list.end(), t) != list.end();
  };
  for (const std::string& t : ta) {
    if (in(tb, t)) out.push_back(t);
    else if (t == "integer" && in(tb, "number")) out.push_back(t);
    else if (t == "number" && in(tb, "integer")) out.push_back("integer");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;  // an empty list: no type, so nothing matches
}

// The schema one side gives a property it does not list.
const ojson& unlisted(const ojson& s, const ojson& fallback) {
  if (s.contains("additionalProperties")) return s["additionalProperties"];
  return fallback;
}

// An array schema's items as positions: the i-th item meets prefix[i], or
// rest past the prefix (prefixItems and items; drafts 4 to 7: items as an
// array and additionalItems, which means nothing without that array).
struct ItemShape {
  std::vector<ojson> prefix;
  ojson rest = true;
  bool has_rest = false;  // written, not the default
};

const char* const kItemKeywords[] = {"prefixItems", "items", "additionalItems"};

ItemShape item_shape(const ojson& s, bool legacy) {
  ItemShape shape;
  const char* prefix_key = legacy ? "items" : "prefixItems";
  const char* rest_key = legacy ? "additionalItems" : "items";
  if (s.contains(prefix_key) && s[prefix_key].is_array()) {
    shape.prefix.assign(s[prefix_key].begin(), s[prefix_key].end());
    if (s.contains(rest_key)) shape.rest = s[rest_key], shape.has_rest = true;
  } else if (s.contains("items")) {
    shape.rest = s["items"], shape.has_rest = true;
  }
  return shape;
}

}  // namespace

bool is_legacy_draft(const ojson& root) {
  return has_schema_uri(root, "draft-0");
}

bool has_schema_uri(const ojson& root, std::string_view part) {
  return root.is_object() && root.contains("$schema") && root["$schema"].is_string() &&
         root["$schema"].get<std::string>().find(part) != std::string::npos;
}

bool is_annotation_keyword(std::string_view key) { return kAnnotations.count(key) > 0; }

const ojson& resolve_schema_ref(const ojson& root, const std::string& ref, const std::string& path) {
  // resolve_refs_to_pointers made every reference to this document a pointer.
  if (ref.empty() || ref[0] != '#')
    fail("JSON Schema: '$ref' {} at {} names no schema of this document (other documents are not fetched)", ref, path);
  std::string pointer = percent_decode(ref.substr(1));
  if (!pointer.empty() && pointer[0] != '/') fail("JSON Schema: '$ref' {} at {}: no such anchor", ref, path);
  const ojson* at = &root;
  size_t i = 0;
  while (i < pointer.size()) {
    size_t next = pointer.find('/', i + 1);
    std::string token = pointer.substr(i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
    for (size_t k; (k = token.find("~1")) != std::string::npos;) token.replace(k, 2, "/");
    for (size_t k; (k = token.find("~0")) != std::string::npos;) token.replace(k, 2, "~");
    if (at->is_object() && at->contains(token)) {
      at = &(*at)[token];
    } else if (at->is_array() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
               token.size() < 9 && std::stoul(token) < at->size()) {
      at = &(*at)[std::stoul(token)];
    } else {
      fail("JSON Schema: '$ref' {} at {} points to nothing", ref, path);
    }
    i = next == std::string::npos ? pointer.size() : next;
  }
  return *at;
}

ojson merge_schemas(const ojson& root, const ojson& a_in, const ojson& b_in, const std::string& path, MergeBudget& budget,
                    int depth) {
  if (depth > kMaxMergeDepth) fail("JSON Schema: 'allOf' at {} nests or recurses too deeply to combine", path);
  if (budget.left == 0)
    fail("JSON Schema: 'allOf' at {}: its schemas take too much work to combine (they reference the same "
         "subschemas along too many paths)", path);
  --budget.left;
  if (a_in.is_boolean()) return a_in.get<bool>() ? b_in : a_in;
  if (b_in.is_boolean()) return b_in.get<bool>() ? a_in : b_in;
  if (!a_in.is_object() || !b_in.is_object()) fail("JSON Schema: a schema at {} is not an object or a boolean", path);
  const bool legacy = is_legacy_draft(root);
  // Inline references first: the merge needs their keywords.
  auto inline_ref = [&](const ojson& s) {
    if (!s.contains("$ref") || !s["$ref"].is_string()) return s;
    const ojson& target = resolve_schema_ref(root, s["$ref"].get<std::string>(), path);
    if (legacy) return target;  // drafts 4 to 7: $ref replaces its siblings
    ojson rest = s;
    rest.erase("$ref");
    return merge_schemas(root, rest, target, path, budget, depth + 1);
  };
  ojson a = inline_ref(a_in), b = inline_ref(b_in);
  if (a.is_boolean() || b.is_boolean()) return merge_schemas(root, a, b, path, budget, depth + 1);
  // What a subschema's unevaluatedProperties or unevaluatedItems sees is
  // its own: merged, it would see the other side's too.
  for (const char* key : {"unevaluatedProperties", "unevaluatedItems"})
    if (a.contains(key) || b.contains(key)) cannot_merge(key, path);
  // Without contains, minContains and maxContains mean nothing: dropped, so
  // they cannot meet the other side's contains. With it, minContains is 1
  // unless written (drafts 2019-09 on), so that the larger one is kept.
  for (ojson* s : {&a, &b}) {
    if (!s->contains("contains")) s->erase("minContains"), s->erase("maxContains");
    else if (!legacy && !s->contains("minContains")) (*s)["minContains"] = 1;
  }
  if (a.contains("allOf") || b.contains("allOf")) {
    for (ojson* s : {&a, &b}) {
      if (!s->contains("allOf")) continue;
      ojson list = (*s)["allOf"];
      s->erase("allOf");
      for (const ojson& part : list) *s = merge_schemas(root, *s, part, path, budget, depth + 1);
    }
    return merge_schemas(root, a, b, path, budget, depth + 1);
  }

  static const ojson kTrue = true;
  // Items position by position: the i-th item meets both sides' schemas for it.
  ojson items_out;
  bool has_items = false;
  for (const char* key : kItemKeywords) has_items = has_items || a.contains(key) || b.contains(key);
  if (has_items) {
    ItemShape sa = item_shape(a, legacy), sb = item_shape(b, legacy);
    // Items past the prefix, written even as true (unevaluatedItems sees them).
    bool has_rest = sa.has_rest || sb.has_rest;
    ojson prefix = ojson::array();
    for (size_t i = 0; i < std::max(sa.prefix.size(), sb.prefix.size()); ++i)
      prefix.push_back(merge_schemas(root, i < sa.prefix.size() ? sa.prefix[i] : sa.rest,
                                     i < sb.prefix.size() ? sb.prefix[i] : sb.rest, path + "/items", budget, depth + 1));
    ojson rest = merge_schemas(root, sa.rest, sb.rest, path + "/items", budget, depth + 1);
    items_out = ojson::object();
    if (!prefix.empty()) {
      items_out[legacy ? "items" : "prefixItems"] = prefix;
      if (has_rest) items_out[legacy ? "additionalItems" : "items"] = rest;
    } else if (has_rest) {
      items_out["items"] = rest;
    }
    for (const char* key : kItemKeywords) a.erase(key), b.erase(key);
  }
  // additionalProperties holds for the names its own side's properties and
  // patterns leave; with other patterns beside it, it would reach fewer.
  auto patterns_of = [&](const ojson& s) {
    return s.contains("patternProperties") ? s["patternProperties"] : ojson::object();
  };
  if (patterns_of(a) != patterns_of(b))
    for (const ojson* s : {&a, &b})
      if (s->contains("additionalProperties") && (*s)["additionalProperties"] != kTrue)
        cannot_merge("patternProperties", path);
  ojson out = a;
  if (has_items) out.update(items_out);
  for (auto& [key, bv] : b.items()) {
    if (!a.contains(key)) {
      out[key] = bv;
      continue;
    }
    const ojson& av = a[key];
    if (av == bv || is_annotation_keyword(key)) continue;
    if (key == "type") {
      out[key] = merge_types(av, bv);
    } else if (key == "required") {
      ojson all = av;
      for (const ojson& name : bv)
        if (std::find(all.begin(), all.end(), name) == all.end()) all.push_back(name);
      out[key] = all;
    } else if (key == "minimum" || key == "exclusiveMinimum" || key == "minLength" || key == "minItems" ||
               key == "minProperties" || key == "minContains") {
      if (!av.is_number() || !bv.is_number()) cannot_merge(key, path);
      out[key] = av.get<double>() >= bv.get<double>() ? av : bv;
    } else if (key == "maximum" || key == "exclusiveMaximum" || key == "maxLength" || key == "maxItems" ||
               key == "maxProperties" || key == "maxContains") {
      if (!av.is_number() || !bv.is_number()) cannot_merge(key, path);
      out[key] = av.get<double>() <= bv.get<double>() ? av : bv;
    } else if (key == "pattern") {
      ojson all = av.is_array() ? av : ojson::array({av});
      if (bv.is_array()) all.insert(all.end(), bv.begin(), bv.end());
      else all.push_back(bv);
      out[key] = all;
    } else if (key == "enum" || key == "const") {
      ojson va = key == "enum" ? av : ojson::array({av}), vb = key == "enum" ? bv : ojson::array({bv});
      ojson both = ojson::array();
      for (const ojson& v : va)
        if (std::find(vb.begin(), vb.end(), v) != vb.end()) both.push_back(v);
      out.erase("const");
      out["enum"] = both;
    } else if (key == "additionalProperties") {
      out[key] = merge_schemas(root, av, bv, path + "/additionalProperties", budget, depth + 1);
    } else if (key == "anyOf") {
      if (av.size() * bv.size() > 256) cannot_merge(key, path);
      ojson product = ojson::array();
      for (const ojson& x : av)
        for (const ojson& y : bv) product.push_back(merge_schemas(root, x, y, path + "/anyOf", budget, depth + 1));
      out[key] = product;
    } else if (key != "properties") {
      cannot_merge(key, path);
    }
  }
  if (out.contains("const") && out.contains("enum")) {
    ojson c = out["const"];
    out.erase("const");
    ojson kept = ojson::array();
    if (std::find(out["enum"].begin(), out["enum"].end(), c) != out["enum"].end()) kept.push_back(c);
    out["enum"] = kept;
  }
  // Properties: a name one side lists meets the other side's schema for it,
  // which is its additionalProperties when it does not list the name.
  if (a.contains("properties") || b.contains("properties")) {
    if ((a.contains("patternProperties") || b.contains("patternProperties")))
      cannot_merge("patternProperties", path);
    const ojson empty = ojson::object();
    const ojson& pa = a.contains("properties") ? a["properties"] : empty;
    const ojson& pb = b.contains("properties") ? b["properties"] : empty;
    ojson props = ojson::object();
    for (auto& [name, s] : pa.items())
      props[name] = merge_schemas(root, s, pb.contains(name) ? pb[name] : unlisted(b, kTrue), path + "/properties/" + name,
                                  budget, depth + 1);
    for (auto& [name, s] : pb.items())
      if (!pa.contains(name))
        props[name] = merge_schemas(root, unlisted(a, kTrue), s, path + "/properties/" + name, budget, depth + 1);
    out["properties"] = props;
  }
  return out;
}

}  // namespace skiff::grammar

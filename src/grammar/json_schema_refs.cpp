// $ref by URI: the base URIs $id sets (id in draft 4), the anchors $anchor
// and $dynamicAnchor name ($id "#name" in drafts 6 and 7), and every $ref
// that reaches a schema of this document rewritten as a JSON pointer from
// its root ("#/..."), which the compiler follows. A reference to another
// document stays as written, and is refused where it is compiled.
#include <map>
#include <optional>
#include <string>

#include "grammar/json_schema_internal.h"

namespace skiff::grammar {
namespace {

// RFC 3986's five parts; the has_* flags tell an empty part from none.
struct Uri {
  std::string scheme, authority, path, query, fragment;
  bool has_scheme = false, has_authority = false, has_query = false, has_fragment = false;

  std::string text(bool with_fragment = true) const {
    std::string out;
    if (has_scheme) out += scheme + ":";
    if (has_authority) out += "//" + authority;
    out += path;
    if (has_query) out += "?" + query;
    if (with_fragment && has_fragment) out += "#" + fragment;
    return out;
  }
};

Uri parse_uri(const std::string& s) {
  Uri u;
  size_t i = 0;
  size_t colon = s.find_first_of(":/?#");
  if (colon != std::string::npos && colon > 0 && s[colon] == ':') {
    u.has_scheme = true;
    u.scheme = s.substr(0, colon);
    i = colon + 1;
  }
  if (s.compare(i, 2, "//") == 0) {
    size_t end = s.find_first_of("/?#", i + 2);
    if (end == std::string::npos) end = s.size();
    u.has_authority = true;
    u.authority = s.substr(i + 2, end - i - 2);
    i = end;
  }
  size_t end = s.find_first_of("?#", i);
  if (end == std::string::npos) end = s.size();
  u.path = s.substr(i, end - i);
  i = end;
  if (i < s.size() && s[i] == '?') {
    end = s.find('#', i);
    if (end == std::string::npos) end = s.size();
    u.has_query = true;
    u.query = s.substr(i + 1, end - i - 1);
    i = end;
  }
  if (i < s.size() && s[i] == '#') {
    u.has_fragment = true;
    u.fragment = s.substr(i + 1);
  }
  return u;
}

// RFC 3986 5.2.4.
std::string remove_dot_segments(std::string in) {
  std::string out;
  while (!in.empty()) {
    if (in.rfind("../", 0) == 0) in.erase(0, 3);
    else if (in.rfind("./", 0) == 0 || in.rfind("/./", 0) == 0) in.erase(0, 2);
    else if (in == "/.") in = "/";
    else if (in.rfind("/../", 0) == 0 || in == "/..") {
      in = "/" + in.substr(in == "/.." ? 3 : 4);
      size_t slash = out.rfind('/');
      out.erase(slash == std::string::npos ? 0 : slash);
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      size_t next = in.find('/', in[0] == '/' ? 1 : 0);
      if (next == std::string::npos) next = in.size();
      out += in.substr(0, next);
      in.erase(0, next);
    }
  }
  return out;
}

// RFC 3986 5.2.2: the reference resolved against the base.
std::string resolve_uri(const std::string& base_text, const std::string& ref_text) {
  Uri base = parse_uri(base_text), r = parse_uri(ref_text), t;
  if (r.has_scheme) {
    t = r;
    t.path = remove_dot_segments(r.path);
  } else {
    t.has_scheme = base.has_scheme, t.scheme = base.scheme;
    if (r.has_authority) {
      t.has_authority = true, t.authority = r.authority, t.path = remove_dot_segments(r.path);
      t.has_query = r.has_query, t.query = r.query;
    } else {
      t.has_authority = base.has_authority, t.authority = base.authority;
      if (r.path.empty()) {
        t.path = base.path;
        t.has_query = r.has_query || base.has_query, t.query = r.has_query ? r.query : base.query;
      } else {
        if (r.path[0] == '/') {
          t.path = remove_dot_segments(r.path);
        } else {
          std::string merged = base.has_authority && base.path.empty() ? "/" + r.path
                               : base.path.substr(0, base.path.rfind('/') + 1) + r.path;
          t.path = remove_dot_segments(merged);
        }
        t.has_query = r.has_query, t.query = r.query;
      }
    }
  }
  t.has_fragment = r.has_fragment, t.fragment = r.fragment;
  return t.text();
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else if (c == '%') out += "%25";  // resolve_schema_ref percent-decodes
    else out += c;
  }
  return out;
}

const char* const kSubschema[] = {"additionalProperties", "additionalItems", "contains", "propertyNames", "not",
                                  "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"};
const char* const kSubschemaLists[] = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};
const char* const kSubschemaMaps[] = {"properties", "patternProperties", "$defs", "definitions",
                                      "dependentSchemas", "dependencies"};

class RefResolver {
 public:
  explicit RefResolver(const ojson& root)
      : legacy_(is_legacy_draft(root)), id_key_(has_schema_uri(root, "draft-04") ? "id" : "$id") {}

  ojson rewrite(ojson root) {
    resources_[kDocument] = "";
    walk(root, kDocument, "", false);
    walk(root, kDocument, "", true);
    return root;
  }

 private:
  static constexpr const char* kDocument = "skiff:/schema.json";  // the base of a root without $id

  // Visits a schema and its subschemas: first to note resources and
  // anchors, then to rewrite references.
  void walk(ojson& s, std::string base, const std::string& pointer, bool rewriting) {
    if (!s.is_object()) return;
    bool ignores_id = legacy_ && s.contains("$ref");  // $ref's siblings mean nothing there
    if (s.contains(id_key_) && s[id_key_].is_string() && !ignores_id) {
      std::string id = s[id_key_].get<std::string>();
      Uri resolved = parse_uri(resolve_uri(base, id));
      if (id.empty() || id[0] != '#') {
        base = resolved.text(false);
        if (!rewriting) resources_.emplace(base, pointer);
      }
      if (!rewriting && resolved.has_fragment && !resolved.fragment.empty())
        anchors_.emplace(base + "#" + resolved.fragment, pointer);
    }
    if (!rewriting) {
      for (const char* key : {"$anchor", "$dynamicAnchor"})
        if (s.contains(key) && s[key].is_string()) anchors_.emplace(base + "#" + s[key].get<std::string>(), pointer);
    } else if (s.contains("$ref") && s["$ref"].is_string()) {
      if (std::optional<std::string> target = find(resolve_uri(base, s["$ref"].get<std::string>())))
        s["$ref"] = "#" + *target;
    }
    auto into = [&](ojson& sub, const std::string& key) {
      walk(sub, base, pointer + "/" + pointer_token(key), rewriting);
    };
    for (const char* key : kSubschema)
      if (s.contains(key)) into(s[key], key);
    for (const char* key : kSubschemaLists) {
      if (!s.contains(key)) continue;
      if (!s[key].is_array()) {
        if (std::string_view(key) == "items") into(s[key], key);
        continue;
      }
      for (size_t i = 0; i < s[key].size(); ++i)
        walk(s[key][i], base, pointer + "/" + key + "/" + std::to_string(i), rewriting);
    }
    for (const char* key : kSubschemaMaps) {
      if (!s.contains(key) || !s[key].is_object()) continue;
      for (auto& [name, sub] : s[key].items())
        walk(sub, base, pointer + "/" + pointer_token(key) + "/" + pointer_token(name), rewriting);
    }
  }

  // The JSON pointer from the root of the schema an absolute URI names.
  std::optional<std::string> find(const std::string& uri) const {
    Uri u = parse_uri(uri);
    auto resource = resources_.find(u.text(false));
    if (resource == resources_.end()) return std::nullopt;
    if (u.fragment.empty() || u.fragment[0] == '/') return resource->second + u.fragment;
    auto anchor = anchors_.find(uri);
    if (anchor == anchors_.end()) return std::nullopt;
    return anchor->second;
  }

  bool legacy_;
  const char* id_key_;
  std::map<std::string, std::string> resources_;  // absolute URI (no fragment) -> pointer
  std::map<std::string, std::string> anchors_;    // URI#name -> pointer
};

}  // namespace

ojson resolve_refs_to_pointers(const ojson& root) { return RefResolver(root).rewrite(root); }

}  // namespace skiff::grammar

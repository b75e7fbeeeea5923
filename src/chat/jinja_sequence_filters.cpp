// Filters over sequences. Those that are Python generators in jinja2 (map,
// select, reject, selectattr, rejectattr, unique, items, batch, slice,
// reverse of a list) return generators here too, so `|length` on them fails
// and `|list` is needed, exactly as in jinja2.
#include <algorithm>

#include "chat/jinja_filters.h"
#include "chat/jinja_format.h"
#include "chat/jinja_methods.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_tests.h"
#include "chat/jinja_text.h"
#include "tokenizer/unicode.h"

namespace skiff::jinja {

Value lookup_attribute_path(Interpreter& interp, const Value& item, const Value& path) {
  if (path.is_none()) return item;
  if (!path.is_string()) return interp.getitem(item, path);
  Value v = item;
  for (const std::string& part : py_split(path.as_string(), std::string("."), -1)) {
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    v = interp.getitem(v, digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
  }
  return v;
}

namespace {

Value ignore_case(const Value& v) { return v.is_string() ? Value(py_lower(v.as_string())) : v; }

Value length(Interpreter&, const Value& v, CallArgs& args) {
  args.bind("length", {});
  switch (v.kind()) {
    case Value::Kind::kUndefined: return Value(0);
    case Value::Kind::kString: return Value(static_cast<int64_t>(code_point_count(v.as_string())));
    case Value::Kind::kDict: return Value(static_cast<int64_t>(v.as_dict().size()));
    case Value::Kind::kList:
      if (!v.is_generator()) return Value(static_cast<int64_t>(v.as_list().items.size()));
      [[fallthrough]];
    default: fail("object of type '{}' has no len()", type_name(v));
  }
}

Value first(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("first", {});
  if (v.is_generator()) {
    const ListData& list = v.as_list();
    if (list.consumed == list.items.size()) return Value::undefined("No first item, sequence was empty.");
    return list.items[list.consumed++];
  }
  std::vector<Value> items = interp.iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value last(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("last", {});
  if (v.is_generator()) fail("'generator' object is not reversible");
  std::vector<Value> items = interp.iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value to_list(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("list", {});
  return Value::list(interp.iterate(v));
}

Value join(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("join", {"d", "attribute"});
  Budget& budget = interp.budget();
  const std::string separator = a[0] ? to_str(*a[0], budget) : "";
  std::string out;
  bool first_item = true;
  for (const Value& item : interp.iterate(v)) {
    if (!first_item) out += separator;
    first_item = false;
    append_str(out, a[1] ? lookup_attribute_path(interp, item, *a[1]) : item, budget);
    budget.build_string(out.size());
  }
  return Value(std::move(out));
}

void check_hashable(const Value& v) {
  if ((v.is_list() && !v.as_list().is_tuple) || v.is_dict()) fail("unhashable type: '{}'", type_name(v));
}

Value unique(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("unique", {"case_sensitive", "attribute"});
  const bool case_sensitive = a[0] && a[0]->truthy();
  std::vector<Value> seen, kept;
  for (const Value& item : interp.iterate(v)) {
    Value key = a[1] ? lookup_attribute_path(interp, item, *a[1]) : item;
    if (!case_sensitive) key = ignore_case(key);
    check_hashable(key);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return values_equal(s, key, interp.budget()); })) {
      seen.push_back(std::move(key));
      kept.push_back(item);
    }
  }
  return Value::generator(std::move(kept));
}

// Python's sorted(items, key=key, reverse=reverse): stable, and reverse keeps
// equal items in their original order.
std::vector<Value> sorted_by_keys(Interpreter& interp, std::vector<Value> items, std::vector<Value> keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Budget& budget = interp.budget();
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return reverse ? value_less(keys[y], keys[x], budget) : value_less(keys[x], keys[y], budget);
  });
  std::vector<Value> out;
  out.reserve(items.size());
  for (const size_t i : order) out.push_back(std::move(items[i]));
  return out;
}

Value sort(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("sort", {"reverse", "case_sensitive", "attribute"});
  const bool case_sensitive = a[1] && a[1]->truthy();
  std::vector<Value> paths;
  if (a[2] && a[2]->is_string()) {
    for (const auto& part : py_split(a[2]->as_string(), std::string(","), -1)) paths.emplace_back(part);
  } else {
    paths.push_back(a[2] ? *a[2] : Value::none());
  }
  std::vector<Value> items = interp.iterate(v);
  std::vector<Value> keys;
  for (const Value& item : items) {
    std::vector<Value> parts;
    for (const Value& path : paths) {
      const Value key = lookup_attribute_path(interp, item, path);
      parts.push_back(case_sensitive ? key : ignore_case(key));
    }
    keys.push_back(Value::list(std::move(parts)));
  }
  return Value::list(sorted_by_keys(interp, std::move(items), std::move(keys), a[0] && a[0]->truthy()));
}

Value dictsort(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("dictsort", {"case_sensitive", "by", "reverse"});
  if (!v.is_dict()) fail("dictsort expects a mapping, got {}", type_name(v));
  const std::string by = a[1] && a[1]->is_string() ? a[1]->as_string() : "key";
  if (by != "key" && by != "value") fail("You can only sort by either \"key\" or \"value\"");
  std::vector<Value> items, keys;
  for (const auto& [key, value] : v.as_dict().items()) {
    items.push_back(Value::list({decode_dict_key(key), value}, /*is_tuple=*/true));
    const Value& sort_key = by == "key" ? items.back().as_list().items[0] : value;
    keys.push_back(a[0] && a[0]->truthy() ? sort_key : ignore_case(sort_key));
  }
  return Value::list(sorted_by_keys(interp, std::move(items), std::move(keys), a[2] && a[2]->truthy()));
}

Value items(Interpreter&, const Value& v, CallArgs& args) {
  args.bind("items", {});
  if (v.is_undefined()) return Value::generator({});
  if (!v.is_dict()) fail("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto& [key, value] : v.as_dict().items())
    pairs.push_back(Value::list({decode_dict_key(key), value}, /*is_tuple=*/true));
  return Value::generator(std::move(pairs));
}

Value reverse(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("reverse", {});
  if (v.is_string()) {
    auto cps = unicode::decode_utf8(v.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value(unicode::encode_utf8(cps, 0, cps.size()), v.is_markup());
  }
  std::vector<Value> all = interp.iterate(v);
  std::reverse(all.begin(), all.end());
  // reversed() of a list or dict is an iterator; a generator is listed first.
  return v.is_generator() ? Value::list(std::move(all)) : Value::generator(std::move(all));
}

// map(attribute=..., default=...) or map('filter', args...).
Value map(Interpreter& interp, const Value& v, CallArgs& args) {
  std::vector<Value> out;
  if (!v.truthy()) return Value::generator({});
  const std::vector<Value> all = interp.iterate(v);
  if (args.positional.empty()) {
    std::optional<Value> attribute, fallback;
    for (const auto& [key, value] : args.keyword) {
      if (key == "attribute") attribute = value;
      else if (key == "default") fallback = value;
      else fail("Unexpected keyword argument '{}'", key);
    }
    if (!attribute) fail("map requires a filter argument");
    for (const Value& item : all) {
      Value mapped = lookup_attribute_path(interp, item, *attribute);
      out.push_back(mapped.is_undefined() && fallback && !fallback->is_none() ? *fallback : mapped);
    }
    return Value::generator(std::move(out));
  }
  if (!args.positional[0].is_string()) fail("map's filter name must be a string");
  const std::string name = args.positional[0].as_string();
  const FilterFunction filter = find_filter(name);
  if (!filter) fail("No filter named '{}'.", name);
  for (const Value& item : all) {
    CallArgs rest{std::vector<Value>(args.positional.begin() + 1, args.positional.end()), args.keyword};
    out.push_back(filter(interp, item, rest));
  }
  return Value::generator(std::move(out));
}

// select/reject/selectattr/rejectattr: keep the items the test (or truth) accepts.
Value select_or_reject(Interpreter& interp, const Value& v, CallArgs& args, bool keep_matches, bool by_attribute) {
  if (!v.truthy()) return Value::generator({});
  size_t at = 0;
  std::optional<Value> attribute;
  if (by_attribute) {
    if (args.positional.empty()) fail("Missing parameter for attribute name");
    attribute = args.positional[at++];
  }
  TestFunction test = nullptr;
  if (at < args.positional.size()) {
    if (!args.positional[at].is_string()) fail("a test name must be a string");
    test = find_test(args.positional[at].as_string());
    if (!test) fail("No test named '{}'.", args.positional[at].as_string());
    ++at;
  }
  std::vector<Value> kept;
  for (const Value& item : interp.iterate(v)) {
    const Value subject = attribute ? lookup_attribute_path(interp, item, *attribute) : item;
    bool match = subject.truthy();
    if (test) {
      CallArgs rest{std::vector<Value>(args.positional.begin() + static_cast<std::ptrdiff_t>(at), args.positional.end()),
                    args.keyword};
      match = test(interp, subject, rest);
    }
    if (match == keep_matches) kept.push_back(item);
  }
  return Value::generator(std::move(kept));
}

Value select(Interpreter& i, const Value& v, CallArgs& a) { return select_or_reject(i, v, a, true, false); }
Value reject(Interpreter& i, const Value& v, CallArgs& a) { return select_or_reject(i, v, a, false, false); }
Value selectattr(Interpreter& i, const Value& v, CallArgs& a) { return select_or_reject(i, v, a, true, true); }
Value rejectattr(Interpreter& i, const Value& v, CallArgs& a) { return select_or_reject(i, v, a, false, true); }

Value batch(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("batch", {"linecount", "fill_with"});
  const int64_t size = integer_argument(a[0], 0, "batch's linecount");
  if (size <= 0) fail("batch's linecount must be positive");
  std::vector<Value> rows, row;
  for (const Value& item : interp.iterate(v)) {
    if (static_cast<int64_t>(row.size()) == size) rows.push_back(Value::list(std::exchange(row, {})));
    row.push_back(item);
  }
  if (!row.empty()) {
    if (a[1] && !a[1]->is_none())
      while (static_cast<int64_t>(row.size()) < size) row.push_back(*a[1]);
    rows.push_back(Value::list(std::move(row)));
  }
  return Value::generator(std::move(rows));
}

Value slice(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("slice", {"slices", "fill_with"});
  const int64_t slices = integer_argument(a[0], 0, "slice's count");
  if (slices <= 0 || slices > 100000) fail("slice's count must be between 1 and 100000");
  const std::vector<Value> all = interp.iterate(v);
  const auto n = static_cast<int64_t>(all.size());
  const int64_t per = n / slices, extra = n % slices;
  std::vector<Value> out;
  int64_t offset = 0;
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t start = offset + s * per;
    if (s < extra) ++offset;
    const int64_t end = offset + (s + 1) * per;
    std::vector<Value> part(all.begin() + start, all.begin() + end);
    if (a[1] && !a[1]->is_none() && s >= extra) part.push_back(*a[1]);
    out.push_back(Value::list(std::move(part)));
  }
  return Value::generator(std::move(out));
}

Value sum(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("sum", {"attribute", "start"});
  Value total = a[1] ? *a[1] : Value(0);
  if (total.is_string()) fail("sum() can't sum strings [use ''.join(seq) instead]");
  for (const Value& item : interp.iterate(v))
    total = binary_op("+", total, a[0] ? lookup_attribute_path(interp, item, *a[0]) : item, interp.budget());
  return total;
}

Value min_or_max(Interpreter& interp, const Value& v, CallArgs& args, bool want_max) {
  const auto a = args.bind(want_max ? "max" : "min", {"case_sensitive", "attribute"});
  const std::vector<Value> all = interp.iterate(v);
  if (all.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  auto key = [&](const Value& item) {
    const Value k = a[1] ? lookup_attribute_path(interp, item, *a[1]) : item;
    return a[0] && a[0]->truthy() ? k : ignore_case(k);
  };
  size_t best = 0;
  Value best_key = key(all[0]);
  for (size_t i = 1; i < all.size(); ++i) {
    Value k = key(all[i]);
    if (want_max ? value_less(best_key, k, interp.budget()) : value_less(k, best_key, interp.budget())) {
      best = i;
      best_key = std::move(k);
    }
  }
  return all[best];
}

Value min(Interpreter& i, const Value& v, CallArgs& a) { return min_or_max(i, v, a, false); }
Value max(Interpreter& i, const Value& v, CallArgs& a) { return min_or_max(i, v, a, true); }

Value attr(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("attr", {"name"});
  if (!a[0] || !a[0]->is_string()) fail("attr() needs an attribute name");
  if (v.is_dict() && !has_method(v, a[0]->as_string()))  // attr() never falls back to a dict's items
    return Value::undefined("'dict object' has no attribute '" + a[0]->as_string() + "'");
  return interp.getattr(v, a[0]->as_string());
}

}  // namespace

FilterTable sequence_filters() {
  return {{"length", length}, {"count", length}, {"first", first},     {"last", last},
          {"list", to_list},  {"join", join},    {"unique", unique},   {"sort", sort},
          {"dictsort", dictsort}, {"items", items}, {"reverse", reverse}, {"map", map},
          {"select", select}, {"reject", reject}, {"selectattr", selectattr}, {"rejectattr", rejectattr},
          {"batch", batch},   {"slice", slice},  {"sum", sum},         {"min", min},
          {"max", max},       {"attr", attr}};
}

}  // namespace skiff::jinja

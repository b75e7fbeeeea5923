#include "api/constraint_fields.h"

#include <fmt/format.h>

#include <set>

#include "base/json.h"

namespace skiff {
namespace {

// A schema given as an object, or as JSON text (vLLM accepts both).
std::string schema_text(const ojson& v, const std::string& field) {
  if (v.is_object() || v.is_boolean()) return v.dump();
  if (v.is_string()) {
    try {
      ojson parsed = parse_ordered_json(v.get<std::string>());
      if (parsed.is_object() || parsed.is_boolean()) return parsed.dump();
    } catch (const Error& e) {
      bad_field(field, fmt::format("{} is not valid JSON: {}", field, e.what()));
    }
  }
  bad_field(field, fmt::format("{} must be a JSON Schema (an object), got {}", field, json_excerpt(v)));
}

std::vector<std::string> strings(const ojson& v, const std::string& field) {
  if (!v.is_array() || v.empty()) bad_field(field, fmt::format("{} must be a non-empty array of strings", field));
  std::vector<std::string> out;
  for (const ojson& s : v) {
    if (!s.is_string() || s.get<std::string>().empty())
      bad_field(field, fmt::format("{} must hold non-empty strings, got {}", field, json_excerpt(s)));
    out.push_back(s.get<std::string>());
  }
  return out;
}

// A regex or grammar: the empty text would constrain nothing, and is refused
// rather than dropped.
std::string pattern_text(const ojson& v, const std::string& field) {
  std::string text = text_field(v, field);
  if (text.empty()) bad_field(field, fmt::format("{} is empty", field));
  return text;
}

// Records which field set the structured output; a second one is a 400.
StructuredOutputs& claim(SamplingParams& p, const std::string& field) {
  if (!p.structured_outputs.empty())
    bad_field(field, fmt::format("{} and {} both constrain the output: give one", p.structured_outputs.field, field));
  p.structured_outputs.field = field;
  return p.structured_outputs;
}

void read_response_format(const ojson& v, SamplingParams& p) {
  if (!v.is_object() || !v.contains("type") || !v["type"].is_string())
    bad_field("response_format", "response_format must be an object with a \"type\"");
  std::string type = v["type"].get<std::string>();
  if (type == "text") return;
  if (type == "json_object") {
    // llama-server's extension: a "schema" beside the type.
    if (v.contains("schema") && !v["schema"].is_null())
      claim(p, "response_format").json = schema_text(v["schema"], "response_format.schema");
    else claim(p, "response_format").json_object = true;
    return;
  }
  if (type != "json_schema")
    bad_field("response_format.type", fmt::format("response_format.type must be text, json_object or json_schema, got '{}'", type));
  const ojson* spec = v.contains("json_schema") ? &v["json_schema"] : nullptr;
  if (!spec || !spec->is_object())
    bad_field("response_format.json_schema", "response_format.json_schema must be an object with a \"schema\"");
  if (spec->contains("name") && !(*spec)["name"].is_string())
    bad_field("response_format.json_schema.name", "response_format.json_schema.name must be a string");
  // OpenAI allows a missing schema (any JSON object); strict changes nothing: skiff always enforces.
  if (!spec->contains("schema") || (*spec)["schema"].is_null()) claim(p, "response_format").json_object = true;
  else claim(p, "response_format").json = schema_text((*spec)["schema"], "response_format.json_schema.schema");
}

void read_structured_outputs(const ojson& v, SamplingParams& p) {
  if (!v.is_object()) bad_field("structured_outputs", "structured_outputs must be an object");
  for (const auto& [key, value] : v.items()) {
    std::string field = "structured_outputs." + key;
    if (value.is_null()) continue;
    if (key == "whitespace_pattern") bad_field(field, "structured_outputs.whitespace_pattern is not supported");
    if (key == "json") claim(p, field).json = schema_text(value, field);
    else if (key == "regex") claim(p, field).regex = pattern_text(value, field);
    else if (key == "choice") claim(p, field).choice = strings(value, field);
    else if (key == "grammar") claim(p, field).grammar = pattern_text(value, field);
    else if (key == "json_object") {
      if (boolean_field(value, field)) claim(p, field).json_object = true;
    } else if (key == "disable_any_whitespace") {
      p.structured_outputs.disable_any_whitespace = boolean_field(value, field);
    } else if (key.rfind("disable_", 0) == 0 || key == "backend") {
      // Backend choices (vLLM's disable_fallback, disable_additional_properties, ...): one engine here.
    } else {
      bad_field(field, fmt::format("{} is not supported (json, regex, choice, grammar, json_object are)", field));
    }
  }
}

std::vector<std::pair<int32_t, float>> logit_bias(const ojson& v) {
  if (!v.is_object()) bad_field("logit_bias", "logit_bias must be an object of token id → bias");
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, bias] : v.items()) {
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
    }
    if (used != key.size() || id < 0 || id > INT32_MAX)
      bad_field("logit_bias", fmt::format("logit_bias keys must be token ids, got \"{}\"", key));
    float value = number_field(bias, "logit_bias");
    if (!(value >= -100 && value <= 100))
      bad_field("logit_bias", fmt::format("logit_bias values must be in [-100, 100], got {}", value));
    out.push_back({static_cast<int32_t>(id), value});
  }
  return out;
}

}  // namespace

bool read_constraint_field(const std::string& key, const ojson& v, SamplingParams& p) {
  static const std::set<std::string, std::less<>> kFields = {
      "response_format", "structured_outputs", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
      "guided_decoding_backend", "guided_whitespace_pattern", "json_schema", "grammar", "logit_bias",
      "allowed_token_ids", "bad_words"};
  if (!kFields.contains(key)) return false;
  if (v.is_null()) return true;
  if (key == "response_format") read_response_format(v, p);
  else if (key == "structured_outputs") read_structured_outputs(v, p);
  else if (key == "guided_json" || key == "json_schema") claim(p, key).json = schema_text(v, key);
  else if (key == "guided_regex") claim(p, key).regex = pattern_text(v, key);
  else if (key == "guided_choice") claim(p, key).choice = strings(v, key);
  else if (key == "guided_grammar" || key == "grammar") claim(p, key).grammar = pattern_text(v, key);
  else if (key == "guided_whitespace_pattern") bad_field(key, "guided_whitespace_pattern is not supported");
  else if (key == "logit_bias") p.logit_bias = logit_bias(v);
  else if (key == "allowed_token_ids") {
    if (!v.is_array()) bad_field(key, "allowed_token_ids must be an array of token ids");
    p.allowed_token_ids.clear();
    for (const ojson& id : v) p.allowed_token_ids.push_back(static_cast<int32_t>(integer_field(id, key, 0, INT32_MAX)));
    if (p.allowed_token_ids.empty()) bad_field(key, "allowed_token_ids is empty: no token could be sampled");
  } else if (key == "bad_words") {
    p.bad_words = strings(v, key);
  }
  return true;
}

}  // namespace skiff

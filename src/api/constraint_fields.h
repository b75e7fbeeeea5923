// The constraint fields of a request, every spelling the OpenAI-compatible
// servers accept: OpenAI's response_format (json_object, json_schema) and
// logit_bias; vLLM's structured_outputs {json, regex, choice, grammar,
// json_object}, its older guided_json / guided_regex / guided_choice /
// guided_grammar, allowed_token_ids and bad_words; llama-server's json_schema
// and grammar. At most one structured output per request (RequestError 400
// naming both fields otherwise); it is compiled by the engine.
#pragma once
#include <string>

#include "api/request_fields.h"

namespace skiff {

// Sets p's field from v when key is one of them; false when it is none.
bool read_constraint_field(const std::string& key, const ojson& v, SamplingParams& p);

}  // namespace skiff

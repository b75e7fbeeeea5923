#include "api/api_model.h"

#include <fmt/core.h>

#include "api/request_fields.h"

namespace skiff {

void check_model_name(const ApiModel& model, const nlohmann::ordered_json& body) {
  const auto it = body.find("model");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_string()) bad_field("model", "model must be a string");
  if (it->get<std::string>() != model.name)
    throw RequestError(404, fmt::format("The model `{}` does not exist.", it->get<std::string>()), "model");
}

void check_context(const ApiModel& model, size_t prompt_tokens, int max_tokens) {
  const int64_t limit = model.max_model_len;
  if (static_cast<int64_t>(prompt_tokens) >= limit)
    throw RequestError(400, fmt::format("This model's maximum context length is {} tokens. However, your request "
                                        "has {} input tokens. Please reduce the length of the input messages.",
                                        limit, prompt_tokens));
  if (static_cast<int64_t>(prompt_tokens) + max_tokens > limit)
    throw RequestError(400, fmt::format("This model's maximum context length is {} tokens. However, you requested "
                                        "{} tokens ({} in the messages, {} in the completion). Please reduce the "
                                        "length of the messages or completion.",
                                        limit, prompt_tokens + max_tokens, prompt_tokens, max_tokens),
                       "max_tokens");
}

}  // namespace skiff

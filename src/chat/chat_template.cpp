#include "chat/chat_template.h"

#include "base/error.h"
#include "chat/jinja_ast.h"
#include "chat/jinja_interpreter.h"
#include "chat/jinja_validate.h"

namespace skiff {

namespace {

// transformers' names for a message's reasoning; templates read the first.
constexpr const char* kReasoningFields[] = {"reasoning_content", "thinking", "reasoning"};

// What apply_chat_template does to messages before the template sees them:
// keys whose value is null are dropped, and reasoning given under any of its
// names is also given as `thinking` and `reasoning_content`.
nlohmann::ordered_json normalize_message(const nlohmann::ordered_json& message) {
  if (!message.is_object()) fail("chat messages must be JSON objects, got {}", message.type_name());
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, value] : message.items())
    if (!value.is_null()) out[key] = value;
  const nlohmann::ordered_json* reasoning = nullptr;
  for (const char* field : kReasoningFields) {
    if (out.contains(field)) {
      reasoning = &out[field];
      break;
    }
  }
  if (!reasoning) return out;
  nlohmann::ordered_json aliased = nlohmann::ordered_json::object();
  if (!out.contains("thinking")) aliased["thinking"] = *reasoning;
  const nlohmann::ordered_json value = *reasoning;
  for (const auto& [key, item] : out.items()) aliased[key] = item;
  aliased["reasoning_content"] = value;
  return aliased;
}

std::tm local_time_now() {
  const std::time_t t = std::time(nullptr);
  std::tm now{};
  localtime_r(&t, &now);
  return now;
}

}  // namespace

ChatTemplate::ChatTemplate(std::string source) : source_(std::move(source)) {
  template_ = jinja::parse_template(source_);
  jinja::validate_template(*template_);
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const ChatTemplateInputs& inputs) const {
  if (!inputs.messages.is_array()) fail("chat messages must be a JSON array, got {}", inputs.messages.type_name());
  if (!inputs.extra.is_object()) fail("extra template variables must be a JSON object");
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  for (const auto& message : inputs.messages) messages.push_back(normalize_message(message));
  std::vector<std::pair<std::string, jinja::Value>> variables = {
      {"messages", jinja::from_json(messages)},
      {"tools", jinja::Value::none()},
      {"documents", jinja::Value::none()},
      {"add_generation_prompt", jinja::Value(inputs.add_generation_prompt)},
      {"bos_token", jinja::Value(inputs.bos_token)},
      {"eos_token", jinja::Value(inputs.eos_token)},
  };
  for (const auto& [key, value] : inputs.extra.items()) {
    jinja::Value v = jinja::from_json(value);
    bool replaced = false;
    for (auto& [name, existing] : variables)
      if (name == key) existing = v, replaced = true;
    if (!replaced) variables.emplace_back(key, std::move(v));
  }
  jinja::Interpreter interpreter(inputs.limits, inputs.now ? *inputs.now : local_time_now());
  return interpreter.render(*template_, std::move(variables));
}

}  // namespace skiff

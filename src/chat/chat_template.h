// Chat templates: a model's Jinja template turned into the prompt text for a
// conversation, rendered exactly as transformers' apply_chat_template renders
// it with Python's jinja2 (ImmutableSandboxedEnvironment, trim_blocks,
// lstrip_blocks, loopcontrols, its tojson, raise_exception and strftime_now).
#pragma once
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/template_limits.h"

namespace skiff {

namespace jinja {
struct Template;
}

struct ChatTemplateInputs {
  // OpenAI message objects. Ordered JSON: templates print tool schemas and
  // arguments with tojson, and Python keeps their keys in the order given
  // (a plain nlohmann::json converts, with its keys sorted).
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  bool add_generation_prompt = false;
  std::string bos_token, eos_token;
  // More top-level variables (tools, documents, enable_thinking, ...). As in
  // transformers, `tools` and `documents` are none unless given here.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  // The time strftime_now() formats; the local time now when unset.
  std::optional<std::tm> now;
  ChatTemplateLimits limits;
};

class ChatTemplate {
 public:
  // Parses once; throws skiff::Error naming line:column on a syntax error, or
  // naming a filter or test jinja2 does not have (jinja2 refuses those when it
  // compiles, except inside if blocks and conditional expressions).
  explicit ChatTemplate(std::string source);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // Throws skiff::Error: raise_exception's message alone, or a type error,
  // undefined value or exceeded limit naming its line:column. Safe to call
  // from several threads at once.
  std::string render(const ChatTemplateInputs& inputs) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::shared_ptr<const jinja::Template> template_;
};

// The model's own template: GGUF metadata `tokenizer.chat_template` (read from
// the header only, no weights), or in an HF directory `chat_template.jinja`,
// else tokenizer_config.json's `chat_template` (a string, or a list of
// {name, template}: the one named "default"). nullopt when the model has none.
std::optional<std::string> find_chat_template(const std::string& model_path);

}  // namespace skiff

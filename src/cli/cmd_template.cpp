// skiff template: renders a conversation through a chat template (the
// model's own, or a file) and prints the prompt, exactly, to stdout.
#include <cstdio>
#include <memory>
#include <string>

#include "base/error.h"
#include "base/json.h"
#include "chat/chat_template.h"
#include "cli/commands.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/tokenizer.h"

namespace skiff::cli {

namespace {

struct TemplateOptions {
  std::string model;
  std::string template_file;
  std::string messages_file;
  bool add_generation_prompt = false;
  std::optional<std::string> bos_token, eos_token;
};

std::string read_input(const std::string& path) {
  if (path != "-") return hf::read_file(path);
  std::string text;
  char buffer[65536];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) text.append(buffer, n);
  return text;
}

// The messages file: OpenAI's list of messages, or an object holding
// "messages" and more template variables (tools, ...), as a request body does.
void read_messages(const std::string& path, ChatTemplateInputs& inputs) {
  nlohmann::ordered_json j;
  try {
    j = parse_ordered_json(read_input(path));
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
  if (j.is_array()) {
    inputs.messages = std::move(j);
    return;
  }
  if (!j.is_object() || !j.contains("messages") || !j["messages"].is_array())
    fail("{}: expected a JSON list of messages, or an object with a \"messages\" list", path);
  for (auto& [key, value] : j.items()) {
    if (key == "messages") inputs.messages = value;
    else inputs.extra[key] = value;
  }
}

std::string template_source(const TemplateOptions& options) {
  if (!options.template_file.empty()) return hf::read_file(options.template_file);
  std::optional<std::string> source = find_chat_template(options.model);
  if (!source) fail("{} has no chat template; give one with --template FILE", options.model);
  return *source;
}

// The model's BOS/EOS texts, where it has those tokens.
void model_special_tokens(const std::string& model, ChatTemplateInputs& inputs) {
  const auto tokenizer = Tokenizer::from_path(model);
  if (tokenizer->bos_id() >= 0) inputs.bos_token = tokenizer->token_text(tokenizer->bos_id());
  if (tokenizer->eos_id() >= 0) inputs.eos_token = tokenizer->token_text(tokenizer->eos_id());
}

void run_template(const TemplateOptions& options) {
  if (options.model.empty() && options.template_file.empty()) fail("give a model (-m) or a template (--template)");
  ChatTemplateInputs inputs;
  read_messages(options.messages_file, inputs);
  inputs.add_generation_prompt = options.add_generation_prompt;
  if (!options.model.empty() && (!options.bos_token || !options.eos_token)) model_special_tokens(options.model, inputs);
  if (options.bos_token) inputs.bos_token = *options.bos_token;
  if (options.eos_token) inputs.eos_token = *options.eos_token;
  const ChatTemplate chat_template(template_source(options));
  const std::string prompt = chat_template.render(inputs);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void add_template_command(CLI::App& app) {
  auto options = std::make_shared<TemplateOptions>();
  CLI::App* command = app.add_subcommand("template", "Render a conversation through a chat template");
  command->add_option("-m,--model", options->model, "GGUF file or Hugging Face directory whose template to use");
  command->add_option("--template", options->template_file, "a Jinja chat template file (over the model's)");
  command->add_option("--messages", options->messages_file,
                      "JSON file (- for stdin): a list of messages, or an object with \"messages\" and more variables")
      ->required();
  command->add_flag("--add-generation-prompt", options->add_generation_prompt, "end with the assistant's turn opening");
  command->add_option("--bos-token", options->bos_token, "the text of bos_token (default: the model's, else empty)");
  command->add_option("--eos-token", options->eos_token, "the text of eos_token (default: the model's, else empty)");
  command->callback([options] { run_template(*options); });
}

}  // namespace skiff::cli

// Chat templates (src/chat): the template text up to the first NUL byte is
// parsed, then rendered with what follows it as JSON: a list of messages, or
// an object whose "messages" are the conversation and whose other keys are
// variables (tools, add_generation_prompt, ...). Limits below the defaults
// keep each run short; a template past them must fail with an Error.
#include "base/json.h"
#include "chat/chat_template.h"
#include "fuzz_support.h"

namespace {

using namespace skiff;

ChatTemplateInputs inputs_of(std::string_view text) {
  ChatTemplateInputs in;
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  in.now = std::tm{.tm_mday = 14, .tm_mon = 2, .tm_year = 125};
  in.limits.max_steps = 200'000;
  in.limits.max_output_bytes = 1 << 20;
  in.limits.max_loop_iterations = 20'000;
  nlohmann::ordered_json j = text.empty() ? nlohmann::ordered_json::array() : parse_ordered_json(text);
  if (!j.is_object()) {
    in.messages = std::move(j);
    return in;
  }
  for (auto& [key, value] : j.items()) {
    if (key == "messages") in.messages = value;
    else if (key == "add_generation_prompt" && value.is_boolean()) in.add_generation_prompt = value.get<bool>();
    else in.extra[key] = value;
  }
  return in;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [source, json] = fuzz::split_at({reinterpret_cast<const char*>(data), size}, {"\0", 1});
  fuzz::refusing_errors([&, source = source, json = json] {
    const ChatTemplate chat_template{std::string(source)};
    chat_template.render(inputs_of(json));
  });
  return 0;
}

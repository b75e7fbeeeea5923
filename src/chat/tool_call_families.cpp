// Every family's tool-call syntax, by name: the strings each writes, as data
// for the three shapes of call blocks (tool_call_format.h), and the layout
// its templates render calls in (chat_output.h's CallLayout).
#include "chat/functionary_format.h"
#include "chat/harmony_format.h"
#include "chat/json_call_blocks.h"
#include "chat/named_call_blocks.h"
#include "chat/tool_call_format.h"
#include "chat/xml_call_blocks.h"

namespace skiff::chat_syntax {

namespace {

using Syntaxes = std::vector<std::unique_ptr<CallBlockSyntax>>;

std::unique_ptr<ToolCallFormat> blocks(std::unique_ptr<CallBlockSyntax> syntax, std::optional<CallLayout> layout) {
  Syntaxes syntaxes;
  syntaxes.push_back(std::move(syntax));
  return std::make_unique<CallBlocksFormat>(std::move(syntaxes), std::move(layout));
}

// A JSON array of {"name", "arguments"} objects after `opener` (and before
// `closer`), as Granite, Firefunction, Apriel and Nemotron write them.
std::unique_ptr<ToolCallFormat> json_array_after(std::string opener, std::vector<std::string> closer,
                                                 CallLayout layout) {
  return blocks(make_json_call_blocks({.openers = {std::move(opener)}, .array = true, .closer = std::move(closer)}),
                std::move(layout));
}

// A reply that opens with a call object is read by `start` (a start-only
// format); any other by `blocks`. While a partial reply may still become such
// an object, `start` holds it back.
class StartOrBlocksFormat : public ToolCallFormat {
 public:
  StartOrBlocksFormat(std::unique_ptr<ToolCallFormat> start, std::unique_ptr<ToolCallFormat> blocks)
      : start_(std::move(start)), blocks_(std::move(blocks)) {}
  void parse(std::string_view text, bool partial, const StringParameters& strings, ChatReply& reply) const override {
    ChatReply trial = reply;
    start_->parse(text, partial, strings, trial);
    const bool blank = text.find_first_not_of(" \t\r\n") == std::string_view::npos;
    if (trial.tool_calls.size() > reply.tool_calls.size() || trial.call_open ||
        (partial && !blank && trial.content.size() == reply.content.size())) {
      reply = std::move(trial);
      return;
    }
    blocks_->parse(text, partial, strings, reply);
  }
  std::optional<CallLayout> call_layout() const override { return blocks_->call_layout(); }

 private:
  std::unique_ptr<ToolCallFormat> start_, blocks_;
};

// Hermes: one {"name", "arguments"} object in each <tool_call> block (Qwen2.5,
// QwQ, Granite 4, Hermes 2 Pro, MiMo, Bielik, Reka). Qwen2.5-Coder often
// writes the object in a ```json fence, or alone as its whole reply, instead
// (llama.cpp reads both too); a fence or reply whose object has no name and
// arguments stays content.
std::unique_ptr<ToolCallFormat> hermes() {
  Syntaxes syntaxes;
  syntaxes.push_back(make_json_call_blocks({.openers = {"<tool_call>"}, .closer = {"</tool_call>"}}));
  syntaxes.push_back(make_json_call_blocks({.openers = {"```json", "```"}, .closer = {"```"}}));
  auto tagged = std::make_unique<CallBlocksFormat>(
      std::move(syntaxes), CallLayout{.call_begin = "<tool_call>\n{\"name\": \"{name}\", \"arguments\": ",
                                      .call_end = "}\n</tool_call>",
                                      .separator = "\n",
                                      .trigger = "<tool_call>"});
  Syntaxes bare;
  bare.push_back(make_json_call_blocks({.openers = {""}, .separator = "\n"}));
  auto alone = std::make_unique<CallBlocksFormat>(std::move(bare), std::nullopt, /*reply_start_only=*/true);
  return std::make_unique<StartOrBlocksFormat>(std::move(alone), std::move(tagged));
}

// Llama 3.x: the reply is {"name", "parameters"} objects separated by ";",
// after <|python_tag|> or alone.
std::unique_ptr<ToolCallFormat> llama3_json() {
  Syntaxes syntaxes;
  syntaxes.push_back(make_json_call_blocks({.openers = {"<|python_tag|>", ""}, .separator = ";"}));
  return std::make_unique<CallBlocksFormat>(std::move(syntaxes),
                                            CallLayout{.call_begin = "{\"name\": \"{name}\", \"parameters\": ",
                                                       .call_end = "}",
                                                       .separator = "; ",
                                                       .trigger = "{\"name\": \""},
                                            /*reply_start_only=*/true);
}

// Mistral: [TOOL_CALLS] then a JSON array of calls (v3 tokenizers), or each
// call as [TOOL_CALLS]NAME[ARGS]{...} (v11+: Devstral, Mistral Small 3.2
// with [CALL_ID]ID before [ARGS], Ministral 3).
std::unique_ptr<ToolCallFormat> mistral() {
  Syntaxes syntaxes;
  syntaxes.push_back(make_json_call_blocks({.openers = {"[TOOL_CALLS]"}, .array = true}));
  syntaxes.push_back(make_named_call_blocks({.call_begin = "[TOOL_CALLS]",
                                             .name_ends = {"[ARGS]", "[CALL_ID]"},
                                             .id_marker = "[CALL_ID]",
                                             .arguments_begin = {"[ARGS]"},
                                             .arguments_begin_optional = true}));
  return std::make_unique<CallBlocksFormat>(
      std::move(syntaxes), CallLayout{.call_begin = "[TOOL_CALLS]{name}[ARGS]", .trigger = "[TOOL_CALLS]"});
}

// DeepSeek V3 and R1: each call names its type, then its arguments in a
// ```json fence.
std::unique_ptr<ToolCallFormat> deepseek_v3() {
  return blocks(make_named_call_blocks({.section_begin = "<｜tool▁calls▁begin｜>",
                                        .section_end = "<｜tool▁calls▁end｜>",
                                        .call_begin = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>",
                                        .name_ends = {"```"},
                                        .arguments_begin = {"```json"},
                                        .call_end = {"```", "<｜tool▁call▁end｜>"}}),
                CallLayout{.prefix = "<｜tool▁calls▁begin｜>",
                           .call_begin = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n",
                           .call_end = "\n```<｜tool▁call▁end｜>",
                           .separator = "\n",
                           .suffix = "<｜tool▁calls▁end｜>",
                           .trigger = "<｜tool▁calls▁begin｜>"});
}

// DeepSeek V3.1: the name, then the arguments after <｜tool▁sep｜>.
std::unique_ptr<ToolCallFormat> deepseek_v31() {
  return blocks(make_named_call_blocks({.section_begin = "<｜tool▁calls▁begin｜>",
                                        .section_end = "<｜tool▁calls▁end｜>",
                                        .call_begin = "<｜tool▁call▁begin｜>",
                                        .name_ends = {"<｜tool▁sep｜>"},
                                        .arguments_begin = {"<｜tool▁sep｜>"},
                                        .call_end = {"<｜tool▁call▁end｜>"}}),
                CallLayout{.prefix = "<｜tool▁calls▁begin｜>",
                           .call_begin = "<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>",
                           .call_end = "<｜tool▁call▁end｜>",
                           .suffix = "<｜tool▁calls▁end｜>",
                           .trigger = "<｜tool▁calls▁begin｜>"});
}

// Kimi K2: calls named "functions.NAME:INDEX", the index counting the
// conversation's calls.
std::unique_ptr<ToolCallFormat> kimi_k2() {
  return blocks(make_named_call_blocks({.section_begin = "<|tool_calls_section_begin|>",
                                        .section_end = "<|tool_calls_section_end|>",
                                        .call_begin = "<|tool_call_begin|>",
                                        .name_ends = {"<|tool_call_argument_begin|>"},
                                        .arguments_begin = {"<|tool_call_argument_begin|>"},
                                        .call_end = {"<|tool_call_end|>"},
                                        .name_prefix = "functions.",
                                        .name_has_index = true}),
                CallLayout{.prefix = "<|tool_calls_section_begin|>",
                           .call_begin = "<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>",
                           .call_end = "<|tool_call_end|>",
                           .suffix = "<|tool_calls_section_end|>",
                           .trigger = "<|tool_calls_section_begin|>"});
}

// Functionary v3.1 (Llama 3.1): <function=NAME>{...}</function>.
std::unique_ptr<ToolCallFormat> functionary_v31() {
  return blocks(
      make_named_call_blocks(
          {.call_begin = "<function=", .name_ends = {">"}, .arguments_begin = {">"}, .call_end = {"</function>"}}),
      CallLayout{.call_begin = "<function={name}>", .call_end = "</function>", .trigger = "<function="});
}

// Command-R: Action: then a ```json fenced array of {"tool_name", "parameters"}.
std::unique_ptr<ToolCallFormat> command_r() {
  return blocks(make_json_call_blocks({.openers = {"Action:"},
                                       .after_opener = {"```json"},
                                       .array = true,
                                       .closer = {"```"},
                                       .name_keys = {"tool_name"},
                                       .arguments_keys = {"parameters"}}),
                CallLayout{.prefix = "Action:\n```json\n[\n",
                           .call_begin = "    {\n        \"tool_name\": \"{name}\",\n        \"parameters\": ",
                           .call_end = "\n    }",
                           .separator = ",\n",
                           .suffix = "\n]```",
                           .trigger = "Action:"});
}

// Command R7B and Command A: <|START_ACTION|> then an array of
// {"tool_call_id", "tool_name", "parameters"}.
std::unique_ptr<ToolCallFormat> command_r7b() {
  return blocks(
      make_json_call_blocks({.openers = {"<|START_ACTION|>"},
                             .array = true,
                             .closer = {"<|END_ACTION|>"},
                             .name_keys = {"tool_name"},
                             .arguments_keys = {"parameters"}}),
      CallLayout{.prefix = "<|START_ACTION|>[",
                 .call_begin = "\n    {\"tool_call_id\": \"{index}\", \"tool_name\": \"{name}\", \"parameters\": ",
                 .call_end = "}",
                 .separator = ",",
                 .suffix = "\n]<|END_ACTION|>",
                 .trigger = "<|START_ACTION|>"});
}

// MiniMax M1: {"name", "arguments"} objects, one a line, in <tool_calls>.
std::unique_ptr<ToolCallFormat> minimax_m1() {
  return blocks(make_json_call_blocks({.openers = {"<tool_calls>"}, .closer = {"</tool_calls>"}}),
                CallLayout{.prefix = "<tool_calls>\n",
                           .call_begin = "{\"name\": \"{name}\", \"arguments\": ",
                           .call_end = "}",
                           .separator = "\n",
                           .suffix = "\n</tool_calls>",
                           .trigger = "<tool_calls>"});
}

CallLayout name_arguments_array(std::string prefix, std::string suffix) {
  std::string trigger = prefix.substr(0, prefix.size() - 1);  // without the "["
  return CallLayout{.prefix = std::move(prefix),
                    .call_begin = "{\"name\": \"{name}\", \"arguments\": ",
                    .call_end = "}",
                    .separator = ", ",
                    .suffix = std::move(suffix),
                    .trigger = std::move(trigger)};
}

// <function=NAME> and <parameter=P> tags in a block (Qwen3-Coder, Seed-OSS):
// Qwen3-Coder's template puts a newline each side of a value, Seed-OSS's none.
std::unique_ptr<ToolCallFormat> function_tags(const std::string& block_begin, const std::string& block_end,
                                              bool value_in_newlines) {
  const std::string around = value_in_newlines ? "\n" : "";
  return blocks(make_xml_call_blocks({.block_begin = block_begin,
                                      .block_end = block_end,
                                      .call_begin = "<function=",
                                      .name_ends = {">"},
                                      .name_close = ">",
                                      .parameter_begin = "<parameter=",
                                      .key_end = ">",
                                      .value_end = "</parameter>",
                                      .call_end = "</function>",
                                      .value_in_newlines = value_in_newlines}),
                CallLayout{.call_begin = block_begin + "\n<function={name}>\n",
                           .call_end = "</function>\n" + block_end,
                           .separator = "\n",
                           .trigger = block_begin,
                           .parameter_begin = "<parameter={key}>" + around,
                           .parameter_end = around + "</parameter>\n"});
}

// <invoke name="NAME"><parameter name="P">VALUE</parameter></invoke> in a
// block, the tags' names after `tag_prefix` (MiniMax M2, DeepSeek V3.2's DSML).
XmlCallBlockSpec invoke_spec(std::string block_begin, std::string block_end, const std::string& tag_prefix) {
  return {.block_begin = std::move(block_begin),
          .block_end = std::move(block_end),
          .call_begin = "<" + tag_prefix + "invoke name=\"",
          .name_ends = {"\""},
          .name_close = "\">",
          .parameter_begin = "<" + tag_prefix + "parameter name=\"",
          .key_end = "\"",
          .key_close = ">",
          .value_end = "</" + tag_prefix + "parameter>",
          .call_end = "</" + tag_prefix + "invoke>"};
}

// DeepSeek V3.2 and V4's DSML: invoke tags in a function_calls block (V4:
// tool_calls), parameters marked string="true" or "false". Both read either
// block; each writes its own.
std::unique_ptr<ToolCallFormat> dsml(const std::string& written_block) {
  Syntaxes syntaxes;
  for (const std::string block : {"function_calls", "tool_calls"})
    syntaxes.push_back(
        make_xml_call_blocks(invoke_spec("<｜DSML｜" + block + ">", "</｜DSML｜" + block + ">", "｜DSML｜")));
  return std::make_unique<CallBlocksFormat>(
      std::move(syntaxes), CallLayout{.prefix = "<｜DSML｜" + written_block + ">\n",
                                      .call_begin = "<｜DSML｜invoke name=\"{name}\">\n",
                                      .call_end = "</｜DSML｜invoke>\n",
                                      .suffix = "</｜DSML｜" + written_block + ">",
                                      .trigger = "<｜DSML｜" + written_block + ">",
                                      .parameter_begin = "<｜DSML｜parameter name=\"{key}\" string=\"{string}\">",
                                      .parameter_end = "</｜DSML｜parameter>\n"});
}

struct FamilyEntry {
  std::string_view name;
  std::unique_ptr<ToolCallFormat> (*make)();
};

const FamilyEntry kFamilies[] = {
    {"hermes", hermes},
    {"qwen3_coder", [] { return function_tags("<tool_call>", "</tool_call>", true); }},
    {"llama3_json", llama3_json},
    {"mistral", mistral},
    {"deepseek_v3", deepseek_v3},
    {"deepseek_v31", deepseek_v31},
    {"deepseek_v32", [] { return dsml("function_calls"); }},
    {"deepseek_v4", [] { return dsml("tool_calls"); }},
    {"granite", [] { return json_array_after("<|tool_call|>", {}, name_arguments_array("<|tool_call|>[", "]")); }},
    {"functionary_v3", [] { return std::unique_ptr<ToolCallFormat>(std::make_unique<FunctionaryV32Format>()); }},
    {"functionary_v31", functionary_v31},
    {"command_r", command_r},
    {"command_r7b", command_r7b},
    {"openai", [] { return std::unique_ptr<ToolCallFormat>(std::make_unique<HarmonyFormat>()); }},
    {"kimi_k2", kimi_k2},
    {"glm45",
     [] {
       return blocks(make_xml_call_blocks({.block_begin = "<tool_call>",
                                           .block_end = "</tool_call>",
                                           .name_ends = {"<arg_key>", "</tool_call>"},
                                           .parameter_begin = "<arg_key>",
                                           .key_end = "</arg_key>",
                                           .value_begin = "<arg_value>",
                                           .value_end = "</arg_value>"}),
                     CallLayout{.call_begin = "<tool_call>{name}\n",
                                .call_end = "</tool_call>",
                                .separator = "\n",
                                .trigger = "<tool_call>",
                                .parameter_begin = "<arg_key>{key}</arg_key>\n<arg_value>",
                                .parameter_end = "</arg_value>\n"});
     }},
    {"seed_oss", [] { return function_tags("<seed:tool_call>", "</seed:tool_call>", false); }},
    {"minimax_m1", minimax_m1},
    {"minimax_m2",
     [] {
       return blocks(make_xml_call_blocks(invoke_spec("<minimax:tool_call>", "</minimax:tool_call>", "")),
                     CallLayout{.prefix = "<minimax:tool_call>\n",
                                .call_begin = "<invoke name=\"{name}\">\n",
                                .call_end = "</invoke>\n",
                                .suffix = "</minimax:tool_call>",
                                .trigger = "<minimax:tool_call>",
                                .parameter_begin = "<parameter name=\"{key}\">",
                                .parameter_end = "</parameter>\n"});
     }},
    {"firefunction_v2", [] { return json_array_after("functools", {}, name_arguments_array("functools[", "]")); }},
    {"apriel",
     [] {
       return json_array_after("<tool_calls>", {"</tool_calls>"},
                               name_arguments_array("<tool_calls>[", "]</tool_calls>"));
     }},
    {"nemotron_v2",
     [] {
       return json_array_after("<TOOLCALL>", {"</TOOLCALL>"}, name_arguments_array("<TOOLCALL>[", "]</TOOLCALL>"));
     }},
    {"plain", [] { return std::unique_ptr<ToolCallFormat>(std::make_unique<PlainFormat>()); }},
};

}  // namespace

std::unique_ptr<ToolCallFormat> make_tool_call_format(std::string_view name) {
  for (const FamilyEntry& family : kFamilies)
    if (family.name == name) return family.make();
  return nullptr;
}

std::vector<std::string> tool_call_format_names() {
  std::vector<std::string> names;
  for (const FamilyEntry& family : kFamilies) names.emplace_back(family.name);
  return names;
}

}  // namespace skiff::chat_syntax

// Round trips through the real templates: a conversation whose last assistant
// turn makes two calls is rendered by skiff's ChatTemplate, the turn's text is
// cut out (the render with it less the prompt without it, less the end of
// turn), and the template's own syntax (chat_syntax_for_template) parses it
// back: the same calls, the content and reasoning the template wrote. Every
// prefix of the turn parses as a stream would see it, and each family's
// CallLayout writes the calls as the template does, and the grammar built
// from that layout accepts them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "base/error.h"
#include "chat/chat_output.h"
#include "chat/chat_template.h"
#include "../grammar/grammar_test_support.h"
#include "chat_test_support.h"
#include "grammar/call_grammar.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr const char* kContent = "Let me check.";
constexpr const char* kReasoning = "The user wants the weather and the time.";

const ordered_json kCalls = ordered_json::parse(R"([
  {"id": "call00001", "type": "function",
   "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
  {"id": "call00002", "type": "function",
   "function": {"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}}])");

const ordered_json kTools = ordered_json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "description": "The weather forecast for a city.",
   "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city."},
                  "days": {"type": "integer", "description": "How many days."}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "get_time", "description": "The time in a timezone.",
   "parameters": {"type": "object", "properties": {"timezone": {"type": "string", "description": "IANA name."}},
                  "required": ["timezone"]}}}])");

// What a template needs from the conversation, where it differs.
struct TemplateQuirks {
  bool single_call = false;       // raises on more than one call per turn (Llama 3.x)
  bool string_arguments = false;  // concatenates arguments as a string
  bool content_none = false;      // renders calls only without content (llama.cpp's DeepSeek R1)
  // Renders no calls as transformers passes messages: DeepSeek R1 Distill
  // writes them only for content None, which transformers drops, and then
  // fails on the missing content.
  bool renders_no_calls = false;
  bool no_reasoning = false;          // refuses reasoning beside content with calls (harmony)
  bool content_as_reasoning = false;  // renders content beside calls in the analysis channel (harmony)
  bool no_tools = false;              // fails as jinja2 does when given tools (tojson of a generator)
  std::string extra = "{}";           // variables it reads besides tools
  // The reply follows this template's last assistant header (Nemotron Nano
  // v2 renders a last turn's calls as a turn of their own), up to turn_end
  // (Command-R writes a system turn after the conversation, Firefunction a
  // generation prompt whatever add_generation_prompt says).
  std::string turn_header{};
  std::string turn_end{};
  // A line jinja2's immutable sandbox refuses (transformers fails on it too),
  // taken out of the template: Kimi K2's list.append, which only queues
  // the ids its tool messages answer.
  std::string unsafe_line{};
  bool layout_differs = false;          // Mistral Small 3.2 writes [CALL_ID]ID, which the layout leaves to the model
  bool layout_spacing_differs = false;  // other spaces between its calls than the family's layout
  // Its generation prompt opens reasoning that its history turns leave out
  // (DeepSeek R1, MiniMax M2, QwQ, Apriel 1.6): the model's reply closes it
  // first, with this marker.
  std::string dropped_reasoning_close{};
};

const std::map<std::string, TemplateQuirks> kQuirks = {
    {"meta-llama-Llama-3.1-8B-Instruct", {.single_call = true}},
    {"meta-llama-Llama-3.2-3B-Instruct", {.single_call = true}},
    {"meetkai-functionary-medium-v3.2", {.string_arguments = true}},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", {.renders_no_calls = true}},
    {"llama-cpp-deepseek-r1", {.content_none = true, .no_tools = true, .dropped_reasoning_close = "</think>"}},
    {"llm-jp-llm-jp-4.1-8b-thinking", {.no_reasoning = true, .content_as_reasoning = true}},
    {"fireworks-ai-llama-3-firefunction-v2",
     {.extra = R"({"functions": "[]", "datetime": "2025-03-14"})", .turn_end = "<|eot_id|>"}},
    {"NVIDIA-Nemotron-Nano-v2", {.turn_header = "<SPECIAL_11>Assistant\n"}},
    {"CohereForAI-c4ai-command-r-plus-tool_use",
     {.turn_header = "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
      .turn_end = "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>",
      .layout_spacing_differs = true}},
    {"Reka-Edge", {.layout_spacing_differs = true}},
    // Their family's layout is another template's: GLM 4.6's with newlines,
    // Qwen3-Coder's with a newline between calls.
    {"GLM-4.7-Flash", {.layout_spacing_differs = true}},
    {"Spark2.5", {.layout_spacing_differs = true}},
    {"poolside-Laguna-S-2.1", {.layout_spacing_differs = true}},
    {"inclusionai-ling-3.0-flash", {.layout_spacing_differs = true}},
    {"StepFun3.5-Flash", {.layout_spacing_differs = true}},
    {"MiniMax-M2", {.dropped_reasoning_close = "</think>"}},
    {"Qwen-QwQ-32B", {.dropped_reasoning_close = "</think>"}},
    {"Kimi-K2-Instruct", {.unsafe_line = "{%- set _ = tool_response_queue.ids.append(formatted_id) -%}"}},
    {"Kimi-K2-Thinking", {.unsafe_line = "{%- set _ = tool_response_queue.ids.append(formatted_id) -%}"}},
    {"Mistral-Small-3.2-24B-Instruct-2506", {.layout_differs = true}},
    {"Apriel-1.6-15b-Thinker-fixed", {.dropped_reasoning_close = "[BEGIN FINAL RESPONSE]"}},
};

// Tokens that end an assistant turn in some template: not the reply's.
const std::vector<std::string> kEndsOfTurn = {"<|im_end|>",
                                              "<|eot_id|>",
                                              "<|eom_id|>",
                                              "</s>",
                                              "<｜end▁of▁sentence｜>",
                                              "<|end_of_text|>",
                                              "<|end|>",
                                              "<|return|>",
                                              "<|END_OF_TURN_TOKEN|>",
                                              "<end_of_turn>",
                                              "<SPECIAL_12>",
                                              "<end_of_sentence>",
                                              "<|endoftext|>",
                                              "[e~[",
                                              "<seed:eos>",
                                              "<sep>",
                                              "<|role_end|>",
                                              "</assistant>"};

std::string trim(std::string text) {
  const size_t begin = text.find_first_not_of(" \n\t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \n\t\r") - begin + 1);
}

std::string json_quoted(std::string_view text) {
  return ordered_json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The reply the model wrote for the assistant turn, and the prompt it
// continued.
struct RenderedTurn {
  std::string prompt;  // with the generation prompt
  std::string reply;
};

// Renders the conversation without the assistant turn (with and without the
// generation prompt) and with it; the reply is what the turn adds after the
// generation prompt.
RenderedTurn render_turn(std::string source, const TemplateQuirks& quirks, bool thinking) {
  if (!quirks.unsafe_line.empty()) source.erase(source.find(quirks.unsafe_line), quirks.unsafe_line.size());
  ordered_json assistant = {{"role", "assistant"}, {"content", kContent}};
  if (quirks.content_none) assistant["content"] = nullptr;
  if (thinking && !quirks.no_reasoning) assistant["reasoning_content"] = kReasoning;
  ordered_json calls = kCalls;
  if (quirks.single_call) calls.erase(1);
  if (quirks.string_arguments)
    for (auto& call : calls) call["function"]["arguments"] = call["function"]["arguments"].dump();
  assistant["tool_calls"] = calls;
  ChatTemplateInputs inputs;
  inputs.messages.push_back({{"role", "system"}, {"content", "You are a helpful assistant."}});
  inputs.messages.push_back({{"role", "user"}, {"content", "What is the weather in Paris, and the time there?"}});
  inputs.extra = ordered_json::parse(quirks.extra);
  if (!quirks.no_tools) inputs.extra["tools"] = kTools;
  // The switches templates read: enable_thinking (Qwen3), thinking
  // (DeepSeek), reasoning (Cohere); add_thoughts has Apriel write reasoning.
  for (const char* name : {"enable_thinking", "thinking", "reasoning", "add_thoughts"}) inputs.extra[name] = thinking;
  inputs.bos_token = "<s>";
  inputs.eos_token = "</s>";
  inputs.now = testing::parse_iso_time("2025-03-14T09:26:53");
  const ChatTemplate chat_template(source);
  inputs.add_generation_prompt = true;
  const std::string prompt = chat_template.render(inputs);
  inputs.add_generation_prompt = false;
  const std::string prompt_without_header = chat_template.render(inputs);
  inputs.messages.push_back(assistant);
  const std::string full = chat_template.render(inputs);

  RenderedTurn turn{prompt, ""};
  if (!quirks.turn_header.empty()) {
    const size_t header = full.rfind(quirks.turn_header) + quirks.turn_header.size();
    turn.prompt = full.substr(0, header);
    turn.reply = full.substr(header);
  } else if (full.starts_with(prompt)) {
    turn.reply = full.substr(prompt.size());
  } else {
    // The template writes the turn's start otherwise than its generation
    // prompt (QwQ's and Cohere's thinking markers): the reply starts where
    // the render departs from the prompt, backed off to a whole tag.
    size_t begin = 0;
    while (begin < full.size() && begin < prompt.size() && full[begin] == prompt[begin]) ++begin;
    const size_t tag = full.find_last_of('<', begin);
    if (tag != std::string::npos && full.find('>', tag) >= begin) begin = tag;
    turn.reply = full.substr(begin);
  }
  if (!quirks.turn_end.empty()) turn.reply.resize(turn.reply.find(quirks.turn_end));
  const std::string& close = quirks.dropped_reasoning_close;
  if (!close.empty() && !trim(prompt).ends_with(close) && turn.reply.find(close) == std::string::npos)
    turn.reply = (thinking ? std::string(kReasoning) + "\n" : "") + close + "\n\n" + turn.reply;
  for (bool stripped = true; stripped;) {
    turn.reply = trim(turn.reply);
    stripped = false;
    for (const std::string& end : kEndsOfTurn) {
      if (turn.reply.ends_with(end)) {
        turn.reply.resize(turn.reply.size() - end.size());
        stripped = true;
      }
    }
  }
  return turn;
}

// Arguments as templates' tojson writes them: Python's json.dumps.
std::string python_json(const ordered_json& object) {
  std::string text = "{";
  for (const auto& [key, value] : object.items()) {
    if (text.size() > 1) text += ", ";
    text += ordered_json(key).dump() + ": " + value.dump();
  }
  return text + "}";
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string without_spaces(const std::string& text) {
  std::string out;
  for (const char c : text)
    if (c != ' ' && c != '\n' && c != '\t') out += c;
  return out;
}

// The calls as the layout writes them, their arguments as the template got
// them (a string as is, else as tojson writes them).
std::string layout_text(const CallLayout& layout, const ordered_json& calls) {
  std::string text = layout.prefix;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i > 0) text += layout.separator;
    const ordered_json& function = calls[i]["function"];
    const std::string begin = replace_all(layout.call_begin, "{name}", function["name"].get<std::string>());
    text += replace_all(begin, "{index}", std::to_string(i));
    const ordered_json& arguments = function["arguments"];
    if (!layout.parameter_end.empty()) {  // XML parameters: strings raw, the rest as JSON
      for (auto it = arguments.begin(); it != arguments.end(); ++it) {
        const std::string begin = replace_all(layout.parameter_begin, "{key}", it.key());
        text += replace_all(begin, "{string}", it->is_string() ? "true" : "false") +
                (it->is_string() ? it->get<std::string>() : it->dump()) + layout.parameter_end;
      }
    } else {
      text += arguments.is_string() ? arguments.get<std::string>() : python_json(arguments);
    }
    text += layout.call_end;
  }
  return text + layout.suffix;
}

// The grammar tool_choice "required" puts on a reply: the layout's calls of
// kTools' functions.
std::shared_ptr<const grammar::Grammar> calls_grammar(const CallLayout& layout) {
  grammar::CallGrammarSpec spec{layout.prefix, layout.separator, layout.suffix, {}, true, std::nullopt};
  if (!layout.parameter_end.empty()) spec.parameters = {layout.parameter_begin, layout.parameter_end};
  for (const ordered_json& tool : kTools) {
    const ordered_json& function = tool["function"];
    spec.calls.push_back({replace_all(layout.call_begin, "{name}", function["name"].get<std::string>()),
                          function["parameters"], layout.call_end});
  }
  return grammar::compile_calls(spec);
}

// Each prefix of the reply, parsed as partial, only ever adds: content and
// reasoning grow, and hold no marker text the final parse has not; calls are
// the final ones but for an open last one (call_open), whose arguments are a
// prefix of its final arguments. A call being written that were not open
// would differ from its final arguments.
void check_prefixes(const ChatSyntax& syntax, const std::string& reply, const ChatReply& final_reply) {
  ChatReply previous;
  for (size_t length = 0; length <= reply.size(); ++length) {
    const ChatReply partial = syntax.parse(std::string_view(reply).substr(0, length), true);
    SCOPED_TRACE("prefix " + json_quoted(std::string_view(reply).substr(0, length)));
    ASSERT_TRUE(partial.content.starts_with(previous.content)) << "content shrank to " << json_quoted(partial.content);
    ASSERT_TRUE(partial.reasoning.starts_with(previous.reasoning)) << "reasoning shrank to " << partial.reasoning;
    ASSERT_TRUE(final_reply.content.starts_with(partial.content)) << "content leaked: " << json_quoted(partial.content);
    ASSERT_TRUE(final_reply.reasoning.starts_with(partial.reasoning)) << "reasoning leaked: " << partial.reasoning;
    ASSERT_GE(partial.tool_calls.size(), previous.tool_calls.size());
    ASSERT_LE(partial.tool_calls.size(), final_reply.tool_calls.size());
    for (size_t i = 0; i < partial.tool_calls.size(); ++i) {
      const ToolCall& call = partial.tool_calls[i];
      const ToolCall& final_call = final_reply.tool_calls[i];
      ASSERT_EQ(call.name, final_call.name);
      if (partial.call_open && i + 1 == partial.tool_calls.size()) {
        ASSERT_TRUE(final_call.arguments.starts_with(call.arguments)) << call.arguments;
      } else {
        ASSERT_EQ(call.arguments, final_call.arguments);
      }
    }
    previous = partial;
  }
  // The whole reply, parsed as partial, already says what the final parse says.
  EXPECT_EQ(previous.content, final_reply.content);
  EXPECT_EQ(previous.reasoning, final_reply.reasoning);
  EXPECT_EQ(previous.tool_calls, final_reply.tool_calls);
}

struct RoundTripCase {
  std::string template_name;
  bool thinking = false;  // thinking switched on, and the turn has reasoning
};

void PrintTo(const RoundTripCase& c, std::ostream* out) { *out << c.template_name << (c.thinking ? " thinking" : ""); }

class ToolCallRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(ToolCallRoundTrip, TemplateRendersWhatItsSyntaxParses) {
  const std::string& name = GetParam().template_name;
  const std::string source = testing::read_text_file(testing::chat_templates_dir() + "/" + name + ".jinja");
  const auto quirks_entry = kQuirks.find(name);
  const TemplateQuirks quirks = quirks_entry == kQuirks.end() ? TemplateQuirks{} : quirks_entry->second;
  if (quirks.renders_no_calls) GTEST_SKIP() << "the template renders no calls";
  const RenderedTurn turn = render_turn(source, quirks, GetParam().thinking);
  SCOPED_TRACE("reply " + json_quoted(turn.reply));
  // As a server would: the template's syntax, told what the prompt opened.
  const std::unique_ptr<ChatSyntax> syntax = chat_syntax_for_template(source)->for_prompt(turn.prompt);

  const ChatReply reply = syntax->parse(turn.reply, false);
  ordered_json calls = kCalls;
  if (quirks.single_call) calls.erase(1);
  ASSERT_EQ(reply.tool_calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(reply.tool_calls[i].name, calls[i]["function"]["name"]);
    EXPECT_EQ(nlohmann::json::parse(reply.tool_calls[i].arguments), nlohmann::json(kCalls[i]["function"]["arguments"]));
  }
  EXPECT_FALSE(reply.call_open);
  // The content and reasoning the template wrote (some drop one or both).
  const bool wrote_content = turn.reply.find(kContent) != std::string::npos;
  const bool wrote_reasoning = turn.reply.find(kReasoning) != std::string::npos;
  if (quirks.content_as_reasoning) {
    EXPECT_EQ(reply.reasoning, kContent);
    EXPECT_EQ(reply.content, "");
  } else {
    EXPECT_EQ(reply.content, wrote_content ? kContent : "");
    EXPECT_EQ(reply.reasoning, wrote_reasoning ? kReasoning : "");
  }
  check_prefixes(*syntax, turn.reply, reply);

  const std::optional<CallLayout> layout = syntax->call_layout();
  if (!layout || quirks.layout_differs) return;
  if (quirks.string_arguments)
    for (auto& call : calls) call["function"]["arguments"] = call["function"]["arguments"].dump();
  const std::string written = layout_text(*layout, calls);
  EXPECT_TRUE((layout->prefix + layout->call_begin).starts_with(layout->trigger));
  // The grammar that holds a reply to the layout accepts what it writes; the
  // reply reads the same told which parameters are strings.
  EXPECT_TRUE(grammar::accepts_text(calls_grammar(*layout), written)) << "grammar refuses " << json_quoted(written);
  const StringParameters strings{{"get_weather", {"city"}}, {"get_time", {"timezone"}}};
  const ChatReply read_back = syntax->for_prompt(turn.prompt, strings)->parse(turn.reply, false);
  ASSERT_EQ(read_back.tool_calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i)
    EXPECT_EQ(nlohmann::json::parse(read_back.tool_calls[i].arguments), nlohmann::json(kCalls[i]["function"]["arguments"]));
  // Functionary v3.2's prompt writes the reply's first ">>>".
  const std::string calls_text = turn.prompt.ends_with(">>>") ? ">>>" + turn.reply : turn.reply;
  // Exactly as the template writes them, but for spaces around them (and
  // between them and in the JSON for some).
  EXPECT_TRUE(without_spaces(calls_text).ends_with(without_spaces(written)))
      << "layout writes " << json_quoted(written);
  if (!quirks.layout_spacing_differs) {
    EXPECT_TRUE(calls_text.ends_with(trim(written))) << "layout writes " << json_quoted(written);
  }
}

// Every template whose calls skiff parses, with thinking off and on.
std::vector<RoundTripCase> templates_with_calls() {
  std::vector<RoundTripCase> cases;
  for (const auto& entry : fs::directory_iterator(testing::chat_templates_dir())) {
    if (entry.path().extension() != ".jinja") continue;
    if (chat_syntax_for_template(testing::read_text_file(entry.path().string()))->name() == "plain") continue;
    const std::string name = entry.path().stem().string();
    for (const bool thinking : {false, true}) cases.push_back({name, thinking});
  }
  std::sort(cases.begin(), cases.end(), [](const RoundTripCase& a, const RoundTripCase& b) {
    return std::tie(a.template_name, a.thinking) < std::tie(b.template_name, b.thinking);
  });
  return cases;
}

std::string test_name(const ::testing::TestParamInfo<RoundTripCase>& info) {
  std::string name = info.param.template_name + (info.param.thinking ? "_thinking" : "");
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(RealTemplates, ToolCallRoundTrip, ::testing::ValuesIn(templates_with_calls()), test_name);

}  // namespace
}  // namespace skiff

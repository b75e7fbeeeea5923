// A model's reply as the chat APIs return it: reasoning, content and tool
// calls, parsed out of the generated text by the syntax the model's family
// writes (its chat template shows it). One ChatSyntax per family, named as
// vLLM's --tool-call-parser / --reasoning-parser names them, found from the
// template's source or named by the user.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skiff {

struct ToolCall {
  std::string name;
  std::string arguments;  // a JSON object's text, as OpenAI's function.arguments
  bool operator==(const ToolCall&) const = default;
};

// The parameters each function's schema allows only strings in (function
// name -> parameter names). Families that write parameters in XML tags write
// strings raw, so they read these as text ("3" stays the string "3"), as
// vLLM's Qwen3-Coder parser reads by the schema; any other value is JSON
// where it reads as JSON.
using StringParameters = std::map<std::string, std::set<std::string, std::less<>>, std::less<>>;

struct ChatReply {
  std::string reasoning;  // reasoning_content; empty when none
  std::string content;    // the text around the calls
  std::vector<ToolCall> tool_calls;
  // Parsing a partial text: it ends inside a block of calls, so the last call
  // may still be being written; its name is complete, and its arguments are
  // the text so far (a prefix of what the finished call will hold).
  bool call_open = false;
};

// How calls are written, for the grammar that
// constrains them (tool_choice required or named; auto once a call opens):
// prefix, then calls separated by `separator`, then suffix; a call is
// call_begin with {name} replaced, the arguments object, then call_end.
// call_begin may also hold {index}: the call's number, which the template
// counts over the conversation's calls from 0 (Kimi K2, Command R7B): any
// decimal number to a grammar. `trigger` is the text that opens the calls in
// a free reply (a prefix of prefix + call_begin, up to where the name starts).
struct CallLayout {
  std::string prefix{};
  std::string call_begin{};  // contains "{name}"
  std::string call_end{};
  std::string separator{};
  std::string suffix{};
  std::string trigger{};
  // Families that write arguments a parameter at a time in XML tags: each
  // parameter is parameter_begin with {key} replaced by its name, the value
  // (a string's text raw, any other value as JSON), then parameter_end;
  // parameter_end empty: the arguments are one JSON object. {string} in
  // parameter_begin: "true" for a string, else "false" (DeepSeek's DSML).
  std::string parameter_begin{};
  std::string parameter_end{};
};

class ChatSyntax {
 public:
  virtual ~ChatSyntax() = default;
  // The tool-call syntax's name ("plain" for none) and the reasoning's ("" for
  // none), as chat_syntax_named takes them.
  virtual std::string_view name() const = 0;
  virtual std::string_view reasoning_name() const = 0;
  // partial: the text may go on. Then a marker cut at the end (a proper
  // prefix of "<tool_call>", "<think>", ...) is held back from content and
  // reasoning, so that what partial parses report only ever grows.
  virtual ChatReply parse(std::string_view text, bool partial) const = 0;
  // nullopt when the family's calls are parsed but not constrained.
  virtual std::optional<CallLayout> call_layout() const = 0;
  // The text that ends the reasoning a reply starts inside ("</think>" when
  // the prompt opened it; harmony's final-channel header), after which a
  // structured output's constraint starts; "" when the reply starts outside
  // reasoning.
  virtual std::string_view reasoning_end() const = 0;
  // The syntax for replies to `prompt` (rendered, generation prompt
  // included): whether a reply starts inside reasoning is read from the
  // prompt's end (Qwen3, DeepSeek R1 and GLM 4.7 end it with <think> unless
  // thinking is off) instead of from the template's default rendering.
  // `strings`: the request's tools' string parameters.
  virtual std::unique_ptr<ChatSyntax> for_prompt(std::string_view prompt, StringParameters strings = {}) const = 0;
};

// The tool-call syntax a chat template renders (what its assistant turns with
// tool_calls look like), with the reasoning markers it uses; the plain one
// (all text is content) when it renders none.
std::unique_ptr<ChatSyntax> chat_syntax_for_template(std::string_view template_source);
// By vLLM's parser name (hermes, qwen3_coder, llama3_json, mistral,
// deepseek_v3, granite, functionary_v3, command_r, openai (gpt-oss/harmony),
// kimi_k2, glm45, ...) and reasoning parser name (deepseek_r1, qwen3, ...);
// empty names: none. Null when a name is unknown, or for harmony reasoning
// (openai_gptoss) with a tool syntax other than harmony's.
std::unique_ptr<ChatSyntax> chat_syntax_named(std::string_view tool_parser, std::string_view reasoning_parser);
// The names chat_syntax_named takes: tool-call syntaxes, reasoning syntaxes.
std::vector<std::string> chat_syntax_names();
std::vector<std::string> chat_reasoning_names();

}  // namespace skiff

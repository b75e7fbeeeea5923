// Constraints in the engine on stories260K: every output of a constrained
// request matches its constraint (checked by std::regex and nlohmann's JSON
// parser, independent of the grammar engine), greedy and sampled, with n > 1,
// with each drafter (greedy output identical to decoding without one), with
// jump-forward on and off, and inside a batch of free requests whose outputs
// do not change. logit_bias, allowed_token_ids and bad_words likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <limits>
#include <regex>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/speculative.h"
#include "engine/structured_output.h"
#include "grammar/matcher.h"
#include "model/loader.h"
#include "stories_model.h"

namespace skiff {
namespace {

using testing::greedy;
using testing::stories_model;
using testing::stories_tokenizer;

std::vector<int32_t> prompt(const std::string& text) { return stories_tokenizer().encode(text, true, false); }

std::vector<RequestOutput> run(const std::vector<SamplingParams>& params, EngineOptions options = {},
                               EngineMetrics* metrics = nullptr) {
  options.kv_type = KvType::kF32;
  Engine engine(stories_model(), stories_tokenizer(), options);
  std::map<RequestId, size_t> index;
  for (size_t i = 0; i < params.size(); ++i)
    index[engine.add_request(prompt(i % 2 ? "Once upon a time" : "Lily saw a"), params[i])] = i;
  std::vector<RequestOutput> outs(params.size());
  for (RequestOutput& out : engine.run_to_completion()) outs[index.at(out.request_id)] = std::move(out);
  EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
  if (metrics) *metrics = engine.metrics();
  return outs;
}

SamplingParams sampled(int max_tokens, uint64_t seed, int n = 1) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.max_tokens = max_tokens;
  p.seed = seed;
  p.n = n;
  return p;
}

const char* kSchema = R"({"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "pets": {"type": "array", "items": {"enum": ["cat", "dog"]}, "maxItems": 3}},
    "required": ["name", "age", "pets"], "additionalProperties": false})";

void expect_valid_person(const CompletionOutput& out) {
  ASSERT_EQ(out.finish_reason, FinishReason::kStop) << out.text;
  nlohmann::json v = nlohmann::json::parse(out.text);  // throws on invalid JSON
  ASSERT_TRUE(v.is_object()) << out.text;
  EXPECT_EQ(v.size(), 3u) << out.text;
  EXPECT_TRUE(v["name"].is_string() && v["name"].get<std::string>().size() <= 12 * 4) << out.text;
  EXPECT_TRUE(v["age"].is_number_integer() && v["age"] >= 0 && v["age"] <= 120) << out.text;
  ASSERT_TRUE(v["pets"].is_array() && v["pets"].size() <= 3) << out.text;
  for (const auto& pet : v["pets"]) EXPECT_TRUE(pet == "cat" || pet == "dog") << out.text;
}

TEST(StructuredOutput, RegexAndChoiceOutputsMatchGreedyAndSampled) {
  std::vector<SamplingParams> params;
  SamplingParams re = greedy(40);
  re.structured_outputs.regex = "(yes|no), [a-z ]{3,20}\\.";
  params.push_back(re);
  SamplingParams re_sampled = sampled(40, 7, 4);
  re_sampled.structured_outputs = re.structured_outputs;
  params.push_back(re_sampled);
  SamplingParams choice = sampled(20, 3, 4);
  choice.structured_outputs.choice = {"happy", "sad", "a little sleepy"};
  params.push_back(choice);
  std::vector<RequestOutput> outs = run(params);
  const std::regex pattern("(yes|no), [a-z ]{3,20}\\.");
  for (int r = 0; r < 2; ++r)
    for (const CompletionOutput& c : outs[r].outputs) {
      EXPECT_EQ(c.finish_reason, FinishReason::kStop) << c.text;
      EXPECT_TRUE(std::regex_match(c.text, pattern)) << c.text;
    }
  for (const CompletionOutput& c : outs[2].outputs)
    EXPECT_TRUE(c.text == "happy" || c.text == "sad" || c.text == "a little sleepy") << c.text;
}

// min_tokens and ignore_eos keep an output going while the grammar may go
// on, and yield where it can only end: the output ends there, whole.
TEST(StructuredOutput, MinTokensAndIgnoreEosYieldToTheGrammarsEnd) {
  SamplingParams choice = sampled(30, 9, 2);
  choice.structured_outputs.choice = {"happy", "a little sleepy"};
  choice.min_tokens = 25;
  SamplingParams ignoring = choice;
  ignoring.min_tokens = 0;
  ignoring.ignore_eos = true;
  SamplingParams words = sampled(30, 4, 2);
  words.structured_outputs.regex = "[a-z ]+";
  words.min_tokens = 12;
  const std::vector<RequestOutput> outs = run({choice, ignoring, words});
  for (int r = 0; r < 2; ++r)
    for (const CompletionOutput& c : outs[r].outputs) {
      EXPECT_EQ(c.finish_reason, FinishReason::kStop) << c.text;
      EXPECT_TRUE(c.text == "happy" || c.text == "a little sleepy") << c.text;
    }
  const std::regex words_only("[a-z ]+");
  for (const CompletionOutput& c : outs[2].outputs) {
    EXPECT_TRUE(std::regex_match(c.text, words_only)) << c.text;
    // It could have ended after any letter; min_tokens kept it going.
    EXPECT_GE(c.token_ids.size(), 12u) << c.text;
  }
}

TEST(StructuredOutput, JsonSchemaOutputsValidateWithAndWithoutJumpForward) {
  for (bool jump : {true, false}) {
    EngineOptions options;
    options.jump_forward = jump;
    std::vector<SamplingParams> params{greedy(120), sampled(120, 11, 4)};
    for (auto& p : params) p.structured_outputs.json = kSchema, p.structured_outputs.disable_any_whitespace = true;
    EngineMetrics metrics;
    std::vector<RequestOutput> outs = run(params, options, &metrics);
    for (const RequestOutput& r : outs)
      for (const CompletionOutput& c : r.outputs) expect_valid_person(c);
    EXPECT_EQ(metrics.jump_forward_tokens > 0, jump);
  }
}

TEST(StructuredOutput, EachDrafterKeepsGreedyOutputAndValidity) {
  SamplingParams g = greedy(120);
  g.structured_outputs.json = kSchema;
  g.structured_outputs.disable_any_whitespace = true;
  SamplingParams s = sampled(120, 5, 2);
  s.structured_outputs = g.structured_outputs;
  std::unique_ptr<Model> draft = load_model(testing::kStoriesPath);
  // With jump-forward, a draft stops before a token the grammar forces tokens
  // after, so the greedy tokens (not only the text) are plain decoding's.
  for (bool jump : {false, true}) {
    EngineOptions plain;
    plain.jump_forward = jump;
    const std::vector<int32_t> reference = run({g}, plain)[0].outputs[0].token_ids;
    for (SpecMethod method : {SpecMethod::kNgram, SpecMethod::kSuffix, SpecMethod::kDraft}) {
      EngineOptions o = plain;
      o.speculation.method = method;
      o.speculation.draft = draft.get();
      o.speculation.k = 4;
      o.speculation.step_tokens = 0;
      std::vector<RequestOutput> outs = run({g, s}, o);
      EXPECT_EQ(outs[0].outputs[0].token_ids, reference) << jump << " " << static_cast<int>(method);
      for (const RequestOutput& r : outs)
        for (const CompletionOutput& c : r.outputs) expect_valid_person(c);
    }
  }
}

// A draft that ends the output (the grammar's last token, then EOS) is
// verified past its end token: that bonus row is never output, and must not
// fail the request (it did: "the grammar allows no token here", where a draft
// model drafted the closing "}" and EOS of a JSON object).
TEST(GrammarProcessor, VerifiesADraftThroughItsEndToken) {
  const Tokenizer& tok = stories_tokenizer();
  GrammarCache cache(tok);
  SamplingParams p = greedy(8);
  p.structured_outputs.regex = "[ a-z]{1,8}\\.";
  LogitsProcessors processors(p, tok, cache.get(p.structured_outputs));
  Sequence seq;
  seq.tokens = prompt("Lily saw a");
  seq.n_prompt = static_cast<int>(seq.tokens.size());
  Draft draft;
  draft.seq = &seq;
  draft.params = &p;
  draft.tokens = tok.encode("cat.", false, false);
  draft.tokens.push_back(tok.eos_id());
  const size_t vocab = tok.n_vocab();
  std::vector<float> logits((draft.tokens.size() + 1) * vocab, 0.0f);
  for (size_t i = 0; i < draft.tokens.size(); ++i) logits[i * vocab + draft.tokens[i]] = 10.0f;  // greedy agrees
  const int32_t eos = tok.eos_id();
  Sampler sampler(p, static_cast<int32_t>(vocab), std::span<const int32_t>(&eos, 1));
  VerifyScratch scratch;
  std::vector<int32_t> out;
  int accepted = -1;
  ASSERT_NO_THROW(accepted = verify_draft(sampler, logits.data(), draft, scratch, &processors, out));
  EXPECT_EQ(accepted, static_cast<int>(draft.tokens.size()));
  ASSERT_EQ(out.size(), draft.tokens.size() + 1);
  EXPECT_TRUE(std::equal(draft.tokens.begin(), draft.tokens.end(), out.begin()));
  EXPECT_EQ(processors.grammar()->started(), true);
  // The processors are back where they began: "cat." is still allowed whole.
  for (size_t i = 0; i + 1 < draft.tokens.size(); ++i) EXPECT_TRUE(processors.grammar()->try_accept(draft.tokens[i]));
}

TEST(StructuredOutput, FreeRequestsInTheBatchAreUnchanged) {
  std::vector<SamplingParams> free_only, mixed;
  for (int i = 0; i < 32; ++i) {
    SamplingParams p = i % 3 ? sampled(30, 100 + i) : greedy(30);
    free_only.push_back(p);
    if (i % 2) p.structured_outputs.json = kSchema, p.structured_outputs.disable_any_whitespace = true, p.max_tokens = 120;
    mixed.push_back(p);
  }
  std::vector<RequestOutput> alone = run(free_only), together = run(mixed);
  for (int i = 0; i < 32; ++i) {
    if (i % 2) expect_valid_person(together[i].outputs[0]);
    else EXPECT_EQ(together[i].outputs[0].token_ids, alone[i].outputs[0].token_ids) << i;
  }
}

TEST(StructuredOutput, ToolCallsInTheirLayoutWhenRequired) {
  SamplingParams p = sampled(200, 21, 4);
  CallsFormat calls;
  calls.separator = "\n";
  calls.calls.push_back({"<call>{\"name\": \"get_weather\", \"arguments\": ",
                         R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 10}},
                             "required": ["city"], "additionalProperties": false})", "}</call>"});
  calls.calls.push_back({"<call>{\"name\": \"get_time\", \"arguments\": ", R"({"type": "object",
                         "properties": {}, "additionalProperties": false})", "}</call>"});
  calls.parallel = false;  // one call, then the end (this model would call on to max_tokens)
  p.structured_outputs.calls = calls;
  p.structured_outputs.disable_any_whitespace = true;
  const std::regex call(R"re(<call>\{"name": "(get_weather|get_time)", "arguments": (\{.*?\})\}</call>)re");
  const std::vector<RequestOutput> outs = run({p});
  for (const CompletionOutput& c : outs[0].outputs) {
    EXPECT_EQ(c.finish_reason, FinishReason::kStop) << c.text;
    std::string rest = c.text;
    std::smatch m;
    int n = 0;
    while (std::regex_search(rest, m, call)) {
      EXPECT_EQ(m.position(0), n ? 1 : 0) << c.text;  // calls back to back, "\n" between
      nlohmann::json args = nlohmann::json::parse(m[2].str());
      if (m[1] == "get_time") EXPECT_TRUE(args.empty()) << c.text;
      else EXPECT_TRUE(args["city"].is_string() && args.size() == 1) << c.text;
      rest = m.suffix();
      ++n;
    }
    EXPECT_GE(n, 1) << c.text;
    EXPECT_TRUE(rest.empty()) << c.text;
  }
}

// Arguments as XML parameters (Qwen3-Coder's layout): a string raw, an
// integer as JSON, the optional one there or not.
TEST(StructuredOutput, ToolCallsWithXmlParameters) {
  SamplingParams p = sampled(200, 5, 4);
  CallsFormat calls;
  calls.calls.push_back({"<function=get_weather>\n", R"({"type": "object", "properties": {
                             "city": {"type": "string", "maxLength": 10}, "days": {"type": "integer", "minimum": 1,
                             "maximum": 9}}, "required": ["city"]})", "</function>"});
  calls.parameter_begin = "<parameter={key}>\n";
  calls.parameter_end = "\n</parameter>\n";
  calls.parallel = false;
  p.structured_outputs.calls = calls;
  const std::string begin = "<function=get_weather>\n<parameter=city>\n", city_end = "\n</parameter>\n";
  const std::regex days("(<parameter=days>\n[1-9]\n</parameter>\n)?</function>");
  const std::vector<RequestOutput> outs = run({p});
  for (const CompletionOutput& c : outs[0].outputs) {
    EXPECT_EQ(c.finish_reason, FinishReason::kStop) << c.text;
    ASSERT_TRUE(c.text.starts_with(begin)) << c.text;
    const size_t end = c.text.find(city_end);  // the first: the city never holds the closing tag
    ASSERT_NE(end, std::string::npos) << c.text;
    const std::string city = c.text.substr(begin.size(), end - begin.size());
    EXPECT_LE(std::count_if(city.begin(), city.end(), [](char b) { return (b & 0xC0) != 0x80; }), 10) << c.text;
    EXPECT_TRUE(std::regex_match(c.text.substr(end + city_end.size()), days)) << c.text;
  }
}

TEST(GrammarProcessor, StartsAfterReasoningAndAtTheTrigger) {
  const Tokenizer& tok = stories_tokenizer();
  GrammarCache cache(tok);
  StructuredOutputs so;
  so.regex = "<tool>[a-z ]+</tool>";
  GrammarProcessor g(cache.get(so), "</think>", "<tool>");
  auto feed = [&](const std::string& text) {
    for (int32_t t : tok.encode(text, false, false)) ASSERT_TRUE(g.try_accept(t)) << text;
  };
  std::vector<float> logits(tok.n_vocab(), 0.0f);
  auto banned = [&] {
    std::fill(logits.begin(), logits.end(), 0.0f);
    g.apply(logits, {});
    return std::count(logits.begin(), logits.end(), -std::numeric_limits<float>::infinity());
  };
  feed("Once <tool>x</tool> upon");  // inside the reasoning: free
  EXPECT_FALSE(g.started());
  EXPECT_EQ(banned(), 0);
  feed(" a time</think> There");
  EXPECT_FALSE(g.started());
  feed(" was <tool>");
  EXPECT_TRUE(g.started());
  EXPECT_GT(banned(), tok.n_vocab() / 2);
  const int32_t digit = tok.encode("7", false, false).back();
  EXPECT_FALSE(g.try_accept(digit));
  feed("cat");
  g.rollback(static_cast<int>(tok.encode("cat", false, false).size()) + 2);
  EXPECT_EQ(banned(), 0);  // back before the trigger
  EXPECT_FALSE(g.started());
}

TEST(LogitsProcessors, BiasAllowedTokensAndBadWords) {
  const Tokenizer& tok = stories_tokenizer();
  const int32_t the = tok.encode(" the", false, false).back();
  SamplingParams biased = greedy(5);
  biased.logit_bias = {{the, 100.0f}};
  SamplingParams allowed = sampled(20, 9);
  allowed.allowed_token_ids = {the, tok.encode(" cat", false, false).back(), tok.eos_id()};
  std::vector<RequestOutput> outs = run({biased, allowed});
  for (int32_t t : outs[0].outputs[0].token_ids) EXPECT_EQ(t, the);
  for (int32_t t : outs[1].outputs[0].token_ids)
    EXPECT_TRUE(std::count(allowed.allowed_token_ids.begin(), allowed.allowed_token_ids.end(), t)) << t;

  // Ban a word greedy decoding writes: its token sequence never appears.
  const std::string free_text = run({greedy(60)})[0].outputs[0].text;
  const size_t space = free_text.find(' ', 1);
  ASSERT_NE(space, std::string::npos) << free_text;
  const std::string word = free_text.substr(space + 1, free_text.find(' ', space + 1) - space - 1);
  SamplingParams bad = greedy(60);
  bad.bad_words = {word};
  const std::vector<int32_t> banned = tok.encode(" " + word, false, false);
  const std::vector<int32_t> out = run({bad})[0].outputs[0].token_ids;
  EXPECT_EQ(std::search(out.begin(), out.end(), banned.begin(), banned.end()), out.end()) << word;
}

TEST(StructuredOutput, BadConstraintsAreRefusedAtAdmission) {
  Engine engine(stories_model(), stories_tokenizer(), {});
  SamplingParams p = greedy(8);
  p.structured_outputs.json = R"({"not": {}})";
  EXPECT_THROW(engine.add_request(prompt("Hi"), p), Error);
  p.structured_outputs.json = "{bad json";
  EXPECT_THROW(engine.add_request(prompt("Hi"), p), Error);
  p.structured_outputs = {};
  p.structured_outputs.regex = "a(";
  EXPECT_THROW(engine.add_request(prompt("Hi"), p), Error);
  p.structured_outputs.choice = {"x"};
  EXPECT_THROW(engine.add_request(prompt("Hi"), p), Error);  // two kinds at once
  p.structured_outputs = {};
  p.logit_bias = {{1 << 20, 1.0f}};
  EXPECT_THROW(engine.add_request(prompt("Hi"), p), Error);
  EXPECT_FALSE(engine.has_unfinished());
}

// Grammars grow with use (lexer states, token sets): the cache keeps them
// under a memory budget as well as a count, the newest always kept.
TEST(GrammarCache, EvictsByMemoryAndByCount) {
  const Tokenizer& tok = stories_tokenizer();
  StructuredOutputs a, b, c;
  a.regex = "[a-z]+";
  b.regex = "[0-9]+";
  c.regex = "x|y";
  GrammarCache by_count(tok, 2);
  auto first = by_count.get(a);
  by_count.get(b);
  EXPECT_EQ(by_count.get(a), first);  // a is now the newest
  by_count.get(c);                    // b goes
  EXPECT_EQ(by_count.get(a), first);
  GrammarCache by_memory(tok, 64, 1);  // a grammar that has made a mask is over one byte
  first = by_memory.get(a);
  grammar::Matcher matcher(first);
  std::vector<uint32_t> bits((tok.n_vocab() + 31) / 32);
  matcher.fill_mask(bits);
  EXPECT_GT(first->memory_bytes(), 0u);
  EXPECT_EQ(by_memory.get(a), first);  // the newest stays, whatever it takes
  by_memory.get(b);
  EXPECT_NE(by_memory.get(a), first);  // evicted, compiled again
}

}  // namespace
}  // namespace skiff

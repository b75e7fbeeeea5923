// How many prompt tokens a step may take so that it lasts about a target
// time: every running stream waits one step between two tokens, so a step
// that prefills 2,048 tokens of someone's long prompt on a CPU (seconds, and
// more the deeper the prompt, as attention grows) stalls them all. vLLM bounds
// a step by tokens alone (chunked prefill); on a CPU the time a token costs
// varies too much with the model, the prompt's depth and the machine's load
// for one token count to suit, so each step's prompt tokens come from the
// time the steps before took: the last step's prompt tokens scaled by
// target / measured (growing at most 2x a step, so one quick step does not
// swing it far; shrinking at once, so one slow step is not repeated). Its
// fixed point is the step that lasts the target whatever the decodes beside
// the prompt cost, and it follows a prompt getting deeper step by step. (A
// model of seconds per token and per decode went stale: while a prompt is
// prefilled no step decodes alone to measure the decodes by.)
//
// Where the rest of a step (its decodes, the weights every step reads, a
// loaded machine's waits at each parallel region) alone takes most of the
// target, smaller chunks would not shorten the step, only slow the prompt
// (32-token chunks made an 8,000-token prompt take 3.9x as long on a loaded
// 2-core machine whose decode steps took 0.6 s). So the prompt keeps at
// least the tokens that cost what the rest does, a step then lasting about
// twice the rest at most: the rest as the latest steps that only decoded
// took (a running average), a token's cost as the last step's time beyond it.
//
// A step is measured by its work, not by the wall clock alone: on a machine
// loaded past its cores the engine's threads wait for a core, a step's wall
// time stretches with the load, and a budget sized by it shrank chunks until
// the steps' fixed costs dominated (an 8,000-token prompt 3-4x slower while
// other programs ran). So a step's seconds are the engine thread's CPU time
// (it runs every step's serial part and its share of each parallel one), but
// at least its wall time / kMostStretch: a load past that shrinks the chunks
// too, so a running stream's gap stays within kMostStretch x the target.
#pragma once

namespace skiff {

class StepBudget {
 public:
  // target_seconds <= 0: no limit (prefill_tokens gives max_tokens).
  explicit StepBudget(double target_seconds) : target_(target_seconds) {}

  // Prompt tokens the next step may take: at most max_tokens, at least
  // min(kMinPrefillTokens, max_tokens); max_tokens before any measure.
  int prefill_tokens(int max_tokens);
  // A step's measure: its prompt tokens (0: it only decoded) and seconds.
  void observe(int n_prefill_tokens, double seconds);

  bool limited() const { return target_ > 0; }

  // The seconds observe() takes for a step of wall_s seconds in which the
  // engine's thread ran thread_cpu_s.
  static double step_seconds(double wall_s, double thread_cpu_s);
  static constexpr double kMostStretch = 4;

  // Every step makes progress, and a chunk this small still keeps the
  // matmuls' panels busy.
  static constexpr int kMinPrefillTokens = 32;
  static constexpr double kMaxGrowth = 2;  // a step's budget over the last step's prompt tokens

 private:
  double target_;
  double tokens_ = -1;  // prompt tokens that fit the target, as last measured (< 0: never)
  int offered_ = 0;                    // what prefill_tokens() last gave
  double rest_s_ = -1;                 // a step that only decodes (< 0: none measured)
  double floor_ = 0;                   // prompt tokens that cost what the rest does
};

}  // namespace skiff

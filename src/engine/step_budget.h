// How many prompt tokens a step may take so that it lasts about a target
// time: every running stream waits one step between two tokens, so a step
// that prefills 2,048 tokens of someone's long prompt on a CPU (seconds, and
// more the deeper the prompt, as attention grows) stalls them all. vLLM bounds
// a step by tokens alone (chunked prefill); on a CPU the time a token costs
// varies too much for one token count to suit every model and depth, so the
// scheduler sizes each step's prefill from the seconds recent steps took:
// a running estimate of the seconds per decoding sequence (from steps that
// only decode) and per prefill token (the rest of a step's time, weighted by
// its prefill tokens, so that a step with a few prompt tokens barely moves
// it), decaying so that it follows a prompt as it gets deeper.
#pragma once

namespace skiff {

class StepBudget {
 public:
  // target_seconds <= 0: no limit (prefill_tokens gives max_tokens).
  explicit StepBudget(double target_seconds) : target_(target_seconds) {}

  // Prompt tokens the next step may take beside n_decodes decoding
  // sequences, within [min(kMinPrefillTokens, max_tokens), max_tokens].
  int prefill_tokens(int n_decodes, int max_tokens) const;
  // A step's measure: its decoding sequences, prompt tokens and seconds.
  void observe(int n_decodes, int n_prefill_tokens, double seconds);

  bool limited() const { return target_ > 0; }
  double seconds_per_decode() const { return decode_s_; }        // < 0: none measured
  double seconds_per_prefill_token() const;                       // < 0: none measured

  // Every step makes progress, and a chunk this small still keeps the
  // matmuls' panels busy; also the first step's prompt tokens, before any
  // prefill has been measured.
  static constexpr int kMinPrefillTokens = 32;

 private:
  double target_;
  double decode_s_ = -1;
  // Decayed sums: prefill seconds and the prompt tokens they bought.
  double prefill_seconds_ = 0;
  double prefill_tokens_ = 0;
};

}  // namespace skiff

// Suffix decoding's trie against a brute-force search of the token streams it
// holds (random streams over a few tokens, so that matches, ties and
// branches are common), and the proposer's shared cache of finished outputs:
// bounded, oldest evicted first, a preempted sequence's output cached once.
#include <gtest/gtest.h>

#include <deque>
#include <numeric>
#include <random>
#include <set>

#include "base/error.h"
#include "engine/suffix_proposer.h"
#include "engine/suffix_trie.h"

namespace skiff {
namespace {

// The draft rule of suffix_trie.h, computed from the streams themselves.
class BruteForce {
 public:
  explicit BruteForce(int depth) : depth_(depth) {}
  std::deque<std::vector<int32_t>> streams;  // oldest first

  SuffixDraft draft(std::span<const int32_t> context, const SuffixDraftRule& rule) const {
    SuffixDraft best;
    for (int m = 1; m <= std::min<int>(context.size(), depth_ - 1); ++m) {
      const std::span<const int32_t> suffix = context.last(m);
      if (occurrences(suffix).count == 0) break;
      SuffixDraft d = walk({suffix.begin(), suffix.end()}, rule.limit(m), rule.min_prob);
      if (d.score >= best.score) {
        best = std::move(d);
        best.match_len = m;
      }
    }
    if (best.tokens.empty()) best.match_len = 0;
    return best;
  }

 private:
  struct Occurrences {
    int count = 0;
    int64_t last = -1;  // where the latest one ends, counting through all streams
  };

  // Substrings of at most depth_ tokens, within one stream.
  Occurrences occurrences(std::span<const int32_t> s) const {
    Occurrences o;
    if (static_cast<int>(s.size()) > depth_) return o;
    int64_t offset = 0;
    for (const std::vector<int32_t>& stream : streams) {
      for (size_t i = 0; i + s.size() <= stream.size(); ++i) {
        if (!std::equal(s.begin(), s.end(), stream.begin() + i)) continue;
        ++o.count;
        o.last = offset + static_cast<int64_t>(i + s.size());
      }
      offset += static_cast<int64_t>(stream.size());
    }
    return o;
  }

  SuffixDraft walk(std::vector<int32_t> path, int max_tokens, float min_prob) const {
    SuffixDraft d;
    double prob = 1;
    while (static_cast<int>(d.tokens.size()) < max_tokens) {
      const int parent = occurrences(path).count;
      int32_t best = -1;
      Occurrences best_o;
      for (int32_t next : followers(path)) {
        path.push_back(next);
        const Occurrences o = occurrences(path);
        path.pop_back();
        if (o.count > best_o.count || (o.count == best_o.count && o.last > best_o.last)) {
          best = next;
          best_o = o;
        }
      }
      if (best < 0 || best_o.count == 0) break;
      prob *= static_cast<double>(best_o.count) / parent;
      if (prob < min_prob) break;
      d.tokens.push_back(best);
      d.score += prob;
      path.push_back(best);
    }
    return d;
  }

  std::set<int32_t> followers(std::span<const int32_t> s) const {
    std::set<int32_t> next;
    for (const std::vector<int32_t>& stream : streams)
      for (size_t i = 0; i + s.size() < stream.size(); ++i)
        if (std::equal(s.begin(), s.end(), stream.begin() + i)) next.insert(stream[i + s.size()]);
    return next;
  }

  int depth_;
};

std::vector<int32_t> random_tokens(std::mt19937& rng, int n, int vocab) {
  std::uniform_int_distribution<int32_t> token(0, vocab - 1);
  std::vector<int32_t> v(n);
  for (int32_t& t : v) t = token(rng);
  return v;
}

// Contexts that match somewhere: a piece of a stream, after random tokens.
std::vector<int32_t> random_context(std::mt19937& rng, const std::deque<std::vector<int32_t>>& streams,
                                    int vocab) {
  std::vector<int32_t> context = random_tokens(rng, rng() % 4, vocab);
  if (streams.empty() || rng() % 4 == 0) return context;
  const std::vector<int32_t>& s = streams[rng() % streams.size()];
  if (s.empty()) return context;
  const size_t end = 1 + rng() % s.size(), start = rng() % end;
  context.insert(context.end(), s.begin() + start, s.begin() + end);
  return context;
}

void expect_same_drafts(const SuffixTrie& trie, const BruteForce& brute, std::mt19937& rng, int vocab,
                        const std::string& what) {
  for (int i = 0; i < 40; ++i) {
    const std::vector<int32_t> context = random_context(rng, brute.streams, vocab);
    SuffixDraftRule rule;
    rule.max_tokens = std::vector<int>{1, 3, 8, 32}[rng() % 4];
    rule.spec_factor = std::vector<float>{1.0f, 0.5f, 2.5f}[rng() % 3];
    rule.min_prob = std::vector<float>{0.0f, 0.1f, 0.4f}[rng() % 3];
    const SuffixDraft got = trie.draft(context, rule), want = brute.draft(context, rule);
    ASSERT_EQ(got.tokens, want.tokens) << what << ", context " << i;
    ASSERT_EQ(got.score, want.score) << what << ", context " << i;
    ASSERT_EQ(got.match_len, want.match_len) << what << ", context " << i;
  }
}

TEST(SuffixTrie, DraftsEqualABruteForceSearchOfTheStreams) {
  std::mt19937 rng(7);
  for (int round = 0; round < 60; ++round) {
    const int depth = std::vector<int>{2, 3, 5, 8, 24}[round % 5];
    const int vocab = 2 + round % 5;
    const std::string what = "round " + std::to_string(round) + ", depth " + std::to_string(depth);
    SuffixTrie trie(depth);
    BruteForce brute(depth);
    // One stream appended token by token, checked as it grows (a sequence's own trie).
    SuffixTrie::Stream stream;
    brute.streams.emplace_back();
    for (int32_t t : random_tokens(rng, 30 + rng() % 50, vocab)) {
      trie.append(stream, t);
      brute.streams.back().push_back(t);
      if (rng() % 8 == 0) expect_same_drafts(trie, brute, rng, vocab, what + ", growing");
    }
    // Whole streams added and the oldest removed (the shared cache).
    for (int i = 0; i < 6; ++i) {
      brute.streams.push_back(random_tokens(rng, rng() % 40, vocab));
      trie.insert(brute.streams.back());
      if (rng() % 3 == 0) {
        trie.remove(brute.streams.front());
        brute.streams.pop_front();
      }
      expect_same_drafts(trie, brute, rng, vocab, what + ", stream " + std::to_string(i));
    }
  }
}

TEST(SuffixTrie, ProposesTheMostFrequentContinuationOfTheBestMatch) {
  SuffixTrie trie(8);
  // 1 2 is followed by 3 twice and by 4 once; the context ends in 1 2.
  trie.insert(std::vector<int32_t>{1, 2, 3, 5, 1, 2, 4, 6, 1, 2, 3, 5, 9, 1, 2});
  // 1 2 occurs 4 times (the last without a continuation), 1 2 3 twice, 1 2 3 5 twice.
  const SuffixDraft d = trie.draft(std::vector<int32_t>{7, 1, 2}, {4, 1.0f, 0.1f});
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(d.match_len, 2);
  EXPECT_DOUBLE_EQ(d.score, 0.5 + 0.5);
  // Two tokens a matched token: 1 2 3 5, then 9 and 1 once each after it (the
  // later one, 9, first), each at 1/4.
  const SuffixDraft longer = trie.draft(std::vector<int32_t>{7, 1, 2}, {4, 2.0f, 0.1f});
  EXPECT_EQ(longer.tokens, (std::vector<int32_t>{3, 5, 9, 1}));
  EXPECT_DOUBLE_EQ(longer.score, 0.5 + 0.5 + 0.25 + 0.25);
  // No match: no draft. A threshold above every continuation: no draft.
  EXPECT_TRUE(trie.draft(std::vector<int32_t>{8}, {4, 1.0f, 0.1f}).tokens.empty());
  EXPECT_TRUE(trie.draft(std::vector<int32_t>{1, 2}, {4, 1.0f, 0.6f}).tokens.empty());
  EXPECT_THROW(SuffixTrie(1), Error);
}

TEST(SuffixTrie, NodesStayWithinDepthPerTokenAndRemovingEveryStreamFreesThemAll) {
  std::mt19937 rng(3);
  SuffixTrie trie(6);
  std::deque<std::vector<int32_t>> streams;
  size_t tokens = 0;
  for (int i = 0; i < 20; ++i) {
    streams.push_back(random_tokens(rng, 1 + rng() % 60, 50));
    trie.insert(streams.back());
    tokens += streams.back().size();
    EXPECT_LE(trie.n_nodes(), tokens * 6);
  }
  for (const std::vector<int32_t>& s : streams) trie.remove(s);
  EXPECT_EQ(trie.n_nodes(), 0u);
  EXPECT_THROW(trie.remove(std::vector<int32_t>{1, 2}), Error);
}

// A sequence as the engine leaves it when it finishes or is preempted.
Sequence sequence(std::vector<int32_t> prompt, std::vector<int32_t> output, SequenceStatus status) {
  Sequence s;
  s.n_prompt = static_cast<int>(prompt.size());
  s.tokens = std::move(prompt);
  s.tokens.insert(s.tokens.end(), output.begin(), output.end());
  s.status = status;
  return s;
}

std::vector<int32_t> propose(SuffixProposer& proposer, const Sequence& seq, int k) {
  Draft draft;
  draft.seq = &seq;
  draft.max_tokens = k;
  Draft* drafts[] = {&draft};
  proposer.propose(drafts);
  EXPECT_TRUE(draft.probs.empty());  // deterministic: q one-hot
  return draft.tokens;
}

TEST(SuffixProposer, DraftsFromTheSequencesOwnTokensAsTheyGrow) {
  SuffixOptions o;
  o.cache_tokens = 0;
  SuffixProposer proposer(o);
  Sequence seq = sequence({10, 11, 12, 13, 14, 15, 16, 17, 10, 11, 12}, {}, SequenceStatus::kRunning);
  EXPECT_EQ(propose(proposer, seq, 4), (std::vector<int32_t>{13, 14, 15}));  // 3 matched: 3 at most
  for (int32_t t : {13, 14, 15}) seq.tokens.push_back(t);  // accepted
  EXPECT_EQ(propose(proposer, seq, 2), (std::vector<int32_t>{16, 17}));
  seq.tokens.push_back(99);  // the target went its own way
  EXPECT_TRUE(propose(proposer, seq, 4).empty());
}

TEST(SuffixProposer, FinishedOutputsDraftForOtherSequences) {
  SuffixProposer proposer(SuffixOptions{});
  const Sequence done = sequence({1, 2}, {20, 21, 22, 23, 24, 25, 26}, SequenceStatus::kFinished);
  proposer.forget(done);
  EXPECT_EQ(proposer.cached_tokens(), 7u);  // the output, not the prompt
  const Sequence other = sequence({5, 20, 21, 22}, {}, SequenceStatus::kRunning);
  EXPECT_EQ(propose(proposer, other, 4), (std::vector<int32_t>{23, 24, 25}));
}

TEST(SuffixProposer, APreemptedSequenceIsCachedOnceWhenItFinishes) {
  SuffixProposer proposer(SuffixOptions{});
  Sequence seq = sequence({1, 2, 3}, {4, 5, 6}, SequenceStatus::kRunning);
  propose(proposer, seq, 4);
  seq.status = SequenceStatus::kWaiting;  // preempted
  proposer.forget(seq);
  EXPECT_EQ(proposer.cached_tokens(), 0u);
  seq.status = SequenceStatus::kRunning;  // readmitted: its trie is built again
  EXPECT_EQ(propose(proposer, seq, 4), std::vector<int32_t>{});
  seq.tokens.push_back(7);
  seq.status = SequenceStatus::kFinished;
  proposer.forget(seq);
  EXPECT_EQ(proposer.cached_tokens(), 4u);
  EXPECT_EQ(proposer.shared_trie().n_nodes(), 4u + 3 + 2 + 1);  // 4 5 6 7: every substring once
}

TEST(SuffixProposer, TheSharedCacheKeepsTheLatestOutputsWithinItsBound) {
  SuffixOptions o;
  o.max_depth = 8;
  o.cache_tokens = 50;
  SuffixProposer proposer(o);
  std::mt19937 rng(11);
  std::vector<std::vector<int32_t>> outputs;
  for (int i = 0; i < 30; ++i) {
    outputs.emplace_back(5 + rng() % 20);  // tokens no other output has
    std::iota(outputs.back().begin(), outputs.back().end(), 100 * (i + 1));
    proposer.forget(sequence({1}, outputs.back(), SequenceStatus::kFinished));
    EXPECT_LE(proposer.cached_tokens(), 50u);
    EXPECT_LE(proposer.shared_trie().n_nodes(), 50u * 8);
  }
  // The latest is drafted from, the first long gone.
  auto starts = [&](const std::vector<int32_t>& out) {
    const Sequence seq = sequence({out[0], out[1], out[2]}, {}, SequenceStatus::kRunning);
    return propose(proposer, seq, 2);
  };
  EXPECT_EQ(starts(outputs.back()), (std::vector<int32_t>{outputs.back()[3], outputs.back()[4]}));
  EXPECT_TRUE(starts(outputs.front()).empty());
  // An output longer than the cache keeps its last tokens.
  proposer.forget(sequence({1}, random_tokens(rng, 80, 1000), SequenceStatus::kFinished));
  EXPECT_EQ(proposer.cached_tokens(), 50u);
  EXPECT_THROW(SuffixProposer(SuffixOptions{1, 0, 0.1f, 1.0f}), Error);
}

}  // namespace
}  // namespace skiff

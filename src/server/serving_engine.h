// The engine behind the server: one thread steps the continuous-batching
// Engine while HTTP handlers submit requests, each with its own
// ResponseChannel, which tells the request's connection when there is news
// (its listener) or can be waited on (as the tests do). A
// handler that asks for several prompts (a list of them in /v1/completions)
// submits each as an engine request into one channel, tagged by the prompt's
// position, so that it waits on one thing.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "engine/engine.h"

namespace skiff {

// What the engine thread hands one HTTP request: deltas as they are made and,
// per prompt, the finished RequestOutput.
class ResponseChannel {
 public:
  explicit ResponseChannel(int n_prompts) : outputs_(n_prompts) {}

  struct Event {
    int prompt = 0;  // which of the request's prompts
    StreamDelta delta;
  };
  // Waits until something new arrived or timeout passed; moves the deltas since
  // the last call into events. Returns true once every prompt has finished (and
  // its deltas have been taken).
  bool wait(std::vector<Event>& events, std::chrono::milliseconds timeout);
  // The finished output of one prompt (valid once wait() returned true).
  const RequestOutput& output(int prompt) const { return *outputs_[prompt]; }
  // fn is called (on the engine thread, under the channel's lock: it must
  // only hand the news on, e.g. post to an event loop) after each push; an
  // HTTP connection waits on its I/O thread this way instead of blocking a
  // thread in wait(). Empty: none.
  void set_listener(std::function<void()> fn);

  // Called on the engine thread.
  void push_delta(int prompt, const StreamDelta& delta);
  void push_output(int prompt, RequestOutput output);

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
  std::vector<std::optional<RequestOutput>> outputs_;
  int n_finished_ = 0;
  std::function<void()> listener_;
};

// What the prefix cache holds, as of the engine's latest step: the chained
// hashes (kv/prefix_hash.h) of its full blocks, most recently used first
// (BlockPool::cached_hashes), for a router that sends each request where its
// prefix is cached.
struct PrefixCacheListing {
  int block_size = 0;     // tokens per block
  int total_blocks = 0;   // the pool's size
  int cached_blocks = 0;  // blocks cached, listed or not
  std::vector<uint64_t> hashes;
};

// Queued requests beyond the server's bound (HTTP 503).
class QueueFull : public Error {
 public:
  using Error::Error;
};

// The engine's loop runs on the thread that calls run(): best the one that
// loaded the model. OpenMP keeps a pool of workers per thread that starts
// parallel regions, and once there are more of them than cores it lets them
// spin only briefly between regions (libgomp's throttled spin), so a second
// pool made decode of one sequence 2x slower on 2 cores.
class ServingEngine {
 public:
  // max_waiting: requests submitted but not yet producing tokens, at most
  // (0: unbounded).
  ServingEngine(Engine& engine, int max_waiting);
  ServingEngine(const ServingEngine&) = delete;
  ServingEngine& operator=(const ServingEngine&) = delete;

  // Queues one prompt of a channel. Throws Error (invalid, from the engine) or
  // QueueFull; queues nothing then.
  RequestId submit(std::vector<int32_t> prompt, const SamplingParams& params,
                   std::shared_ptr<ResponseChannel> channel, int prompt_index);
  // The request stops at the next step (at once if no step has taken it
  // yet); its channel gets the cancelled output.
  void cancel(RequestId id);
  // Steps the engine as requests come, until stop(); then returns once what
  // was in flight has been cancelled. Idle a moment after requests, it gives
  // the memory they freed back to the system (malloc_trim).
  void run();
  // Cancels everything in flight and makes run() return. Requests submitted
  // afterwards are refused. Safe from any thread.
  void stop();

  // The engine's metrics after its latest step (or at start).
  EngineMetrics metrics() const;
  // The prefix cache after the latest step (while requests run, a step of
  // the last 100 ms), its first `limit` hashes (at most kMaxListedBlocks,
  // all the engine thread copies out).
  PrefixCacheListing prefix_cache(size_t limit) const;
  static constexpr size_t kMaxListedBlocks = 16384;
  int max_model_len() const { return engine_.max_model_len(); }
  int waiting() const { return n_waiting_.load(); }
  int max_waiting() const { return max_waiting_; }  // 0: unbounded
  int64_t rejected() const { return n_rejected_.load(); }  // QueueFull so far

 private:
  struct Route {
    std::shared_ptr<ResponseChannel> channel;
    int prompt = 0;
    // Made its first delta. The engine thread's, or under mutex_ that of
    // cancel() withdrawing a request the engine never took.
    bool started = false;
  };
  void leave_waiting(Route& route);  // see Route::started

  Engine& engine_;
  const int max_waiting_;
  std::atomic<int> n_waiting_ = 0;
  std::atomic<int64_t> n_rejected_ = 0;

  std::mutex mutex_;  // guards routes_, stopping_, and wakes the loop
  std::condition_variable work_;
  std::unordered_map<RequestId, std::shared_ptr<Route>> routes_;
  bool stopping_ = false;

  // On the engine thread, after a step: the snapshots the getters above copy.
  void publish_snapshots();

  mutable std::mutex metrics_mutex_;  // guards metrics_ and listing_
  EngineMetrics metrics_;
  PrefixCacheListing listing_;
  uint64_t listed_version_ = 0;  // the pool's cache_version() that listing_ shows
  std::chrono::steady_clock::time_point listed_at_;
};

}  // namespace skiff

#include "server/serving_engine.h"

#include <fmt/core.h>
#include <malloc.h>

#include <algorithm>
#include <exception>
#include <utility>

namespace skiff {
namespace {

// An engine idle this long after running requests gives their memory back.
constexpr std::chrono::milliseconds kTrimWhenIdleFor{500};
// While requests run, the prefix cache is listed at most this often: a
// listing of 16384 evictable blocks takes ~0.1 ms (bench_prefix_listing),
// and its readers (skiff.ray's replicas) read every 0.5 s or more seldom.
constexpr std::chrono::milliseconds kListBusyCacheEvery{100};

}  // namespace

bool ResponseChannel::wait(std::vector<Event>& events, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const auto done = [&] { return n_finished_ == static_cast<int>(outputs_.size()); };
  ready_.wait_for(lock, timeout, [&] { return !events_.empty() || done(); });
  for (Event& e : events_) events.push_back(std::move(e));
  events_.clear();
  return done();
}

void ResponseChannel::set_listener(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  listener_ = std::move(fn);
}

void ResponseChannel::push_delta(int prompt, const StreamDelta& delta) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(Event{prompt, delta});
    if (listener_) listener_();
  }
  ready_.notify_all();
}

void ResponseChannel::push_output(int prompt, RequestOutput output) {
  {
    std::lock_guard lock(mutex_);
    if (!outputs_[prompt]) ++n_finished_;
    outputs_[prompt] = std::move(output);
    if (listener_) listener_();
  }
  ready_.notify_all();
}

ServingEngine::ServingEngine(Engine& engine, int max_waiting)
    : engine_(engine), max_waiting_(max_waiting), metrics_(engine.metrics()) {
  listing_.block_size = engine.kv_cache().block_size();
  listing_.total_blocks = engine.kv_cache().pool().n_blocks();
  listed_version_ = engine.kv_cache().pool().cache_version();  // nothing cached yet
}

RequestId ServingEngine::submit(std::vector<int32_t> prompt, const SamplingParams& params,
                                std::shared_ptr<ResponseChannel> channel, int prompt_index) {
  auto route = std::make_shared<Route>(Route{std::move(channel), prompt_index});
  std::lock_guard lock(mutex_);
  if (stopping_) throw QueueFull("the server is shutting down");
  if (max_waiting_ > 0 && n_waiting_.load() >= max_waiting_) {
    ++n_rejected_;
    throw QueueFull(fmt::format("the server's queue is full ({} requests waiting); retry later", max_waiting_));
  }
  // Under mutex_, so that the loop cannot route this request's output before
  // the route is in routes_.
  const RequestId id = engine_.add_request(std::move(prompt), params, [this, route](const StreamDelta& d) {
    leave_waiting(*route);
    route->channel->push_delta(route->prompt, d);
  });
  ++n_waiting_;
  routes_.emplace(id, std::move(route));
  work_.notify_one();
  return id;
}

void ServingEngine::cancel(RequestId id) {
  std::lock_guard lock(mutex_);
  // Not yet taken by a step: it leaves now, not after the step in progress,
  // so that a departed client's queued prompts free the queue at once.
  if (std::optional<RequestOutput> out = engine_.withdraw(id)) {
    const auto it = routes_.find(id);
    if (it != routes_.end()) {
      leave_waiting(*it->second);  // the engine thread never sees this route now
      it->second->channel->push_output(it->second->prompt, std::move(*out));
      routes_.erase(it);
    }
  } else {
    engine_.cancel(id);
  }
  work_.notify_one();
}

void ServingEngine::stop() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  for (const auto& [id, route] : routes_) engine_.cancel(id);
  work_.notify_one();
}

EngineMetrics ServingEngine::metrics() const {
  std::lock_guard lock(metrics_mutex_);
  return metrics_;
}

PrefixCacheListing ServingEngine::prefix_cache(size_t limit) const {
  std::lock_guard lock(metrics_mutex_);
  PrefixCacheListing out{listing_.block_size, listing_.total_blocks, listing_.cached_blocks, {}};
  const size_t n = std::min(limit, listing_.hashes.size());
  out.hashes.assign(listing_.hashes.begin(), listing_.hashes.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

void ServingEngine::publish_snapshots() {
  EngineMetrics metrics = engine_.metrics();
  const BlockPool& pool = engine_.kv_cache().pool();
  // Listed again only when the cache changed (not on most decode steps), at
  // once when the engine has gone idle (a lone request's blocks are listed by
  // the time its client has the answer), and outside the lock, so that a
  // reader never waits on the walk.
  std::optional<std::vector<uint64_t>> hashes;
  const auto now = std::chrono::steady_clock::now();
  if (pool.cache_version() != listed_version_ &&
      (!engine_.has_unfinished() || now - listed_at_ >= kListBusyCacheEvery)) {
    hashes = pool.cached_hashes(kMaxListedBlocks);
    listed_version_ = pool.cache_version();
    listed_at_ = now;
  }
  std::lock_guard lock(metrics_mutex_);
  metrics_ = std::move(metrics);
  if (hashes) {
    listing_.cached_blocks = pool.n_cached();
    listing_.hashes = std::move(*hashes);
  }
}

void ServingEngine::leave_waiting(Route& route) {
  if (route.started) return;
  route.started = true;
  --n_waiting_;
}

void ServingEngine::run() {
  bool trim_due = false;  // requests ran since the last trim
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (!work_.wait_for(lock, kTrimWhenIdleFor, [&] { return stopping_ || engine_.has_unfinished(); })) {
        lock.unlock();
        // What the requests freed, here and on the connections' threads
        // (their responses sent by now), goes back to the system: glibc
        // keeps a thread's frees in its arena, and a wave of clients would
        // stay in the RSS.
        if (std::exchange(trim_due, false)) malloc_trim(0);
        continue;
      }
      if (stopping_ && !engine_.has_unfinished()) return;
    }
    trim_due = true;
    std::vector<RequestOutput> finished;
    try {
      finished = engine_.step();
    } catch (const std::exception& e) {
      // The engine's state is unknown now: every request in flight fails
      // with the reason, and the server refuses new ones.
      fmt::print(stderr, "serve: engine error: {}; refusing new requests\n", e.what());
      std::lock_guard lock(mutex_);
      stopping_ = true;
      for (auto& [id, route] : routes_) {
        RequestOutput out;
        out.request_id = id;
        CompletionOutput failed;
        failed.finish_reason = FinishReason::kError;
        failed.error = e.what();
        out.outputs.push_back(std::move(failed));
        leave_waiting(*route);
        route->channel->push_output(route->prompt, std::move(out));
      }
      routes_.clear();
      return;
    }
    publish_snapshots();
    std::lock_guard lock(mutex_);
    for (RequestOutput& out : finished) {
      const auto it = routes_.find(out.request_id);
      if (it == routes_.end()) continue;
      leave_waiting(*it->second);
      it->second->channel->push_output(it->second->prompt, std::move(out));
      routes_.erase(it);
    }
  }
}

}  // namespace skiff

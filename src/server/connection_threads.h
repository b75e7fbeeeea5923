// The threads that serve connections, one per open connection, made as
// connections come. httplib's ThreadPool has a fixed number of threads and
// queues the connections past it: a few clients that hold their connections
// (slowly sent requests, slowly read streams, idle keep-alives) made every
// later client wait in that queue, unanswered, however idle the engine was.
// Threads are kept for the next connection once theirs closes, never more
// than max_threads of them.
#pragma once
#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace skiff {

class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t max_threads) : max_threads_(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }

  // Runs fn on an idle thread, on a new one if none is idle, or, with
  // max_threads busy, once one is free.
  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins every thread.
  void shutdown() override;

  size_t threads() const;

 private:
  void work();

  const size_t max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace skiff

#include "server/connection_threads.h"

namespace skiff {

void ConnectionThreads::enqueue(std::function<void()> fn) {
  {
    std::unique_lock lock(mutex_);
    if (shutdown_) {  // no thread may start now; the job still closes its socket
      lock.unlock();
      fn();
      return;
    }
    jobs_.push_back(std::move(fn));
    // Idle threads may already be woken for earlier jobs: count them against
    // every job queued, not only this one.
    if (idle_ < jobs_.size() && threads_.size() < max_threads_) threads_.emplace_back([this] { work(); });
  }
  ready_.notify_one();
}

void ConnectionThreads::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    shutdown_ = true;
    threads.swap(threads_);
  }
  ready_.notify_all();
  for (std::thread& t : threads) t.join();
}

size_t ConnectionThreads::threads() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

void ConnectionThreads::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      ++idle_;
      ready_.wait(lock, [&] { return !jobs_.empty() || shutdown_; });
      --idle_;
      if (jobs_.empty()) return;  // shut down, nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace skiff

// little_loops — journal: the background thread of journal_sync::background
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/journal/files.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

/// The background half of journal_sync::background: writes the latest record to the state
/// file durably (after fdatasync of the event log), coalescing records that arrive while
/// it is busy or waiting out `interval` (a record is taken at least `interval` after the
/// previous one was; flush() and the destructor do not wait for it).
class journal_syncer {
 public:
  using clock = std::chrono::steady_clock;
  journal_syncer(std::filesystem::path target, int events_fd, clock::duration interval)
      : target_(std::move(target)),
        events_fd_(events_fd >= 0 ? ::fcntl(events_fd, F_DUPFD_CLOEXEC, 3) : -1),  // 3: see detail::open_fd
        interval_(interval),
        thread_([this] { loop(); }) {}
  journal_syncer(const journal_syncer&) = delete;
  journal_syncer& operator=(const journal_syncer&) = delete;
  ~journal_syncer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();  // the loop writes the last submitted record before it returns
    if (events_fd_ >= 0) ::close(events_fd_);
  }

  /// Queues record number `seq` (replacing a queued one the thread has not started on).
  void submit(std::string text, std::uint64_t seq) {
    bool asleep = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ = std::move(text);
      submitted_ = seq;
      asleep = asleep_;
    }
    // A busy thread, or one waiting out the interval, takes the newest record when it is
    // done: no wake-up (a futex call on the loop's path between two actions) is needed.
    if (asleep) wake_.notify_one();
  }

  /// The newest record number the state file durably holds (0: none yet).
  [[nodiscard]] std::uint64_t durable() const noexcept { return durable_.load(std::memory_order_acquire); }

  /// The last failure of the background writes, cleared, without waiting for the thread
  /// (one atomic load when there is none: it is asked at every save).
  std::optional<little_loops::error> take_failure() {
    if (!failed_.load(std::memory_order_acquire)) return std::nullopt;
    std::lock_guard<std::mutex> lock(mutex_);
    failed_.store(false, std::memory_order_relaxed);
    return std::exchange(failure_, std::nullopt);
  }

  /// Waits until everything submitted so far is written; returns (and clears) the last
  /// failure of the background writes.
  expected<void, little_loops::error> flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (finished_ != submitted_) {
      ++flushing_;  // no waiting out the interval now
      wake_.notify_one();
      done_.wait(lock, [&] { return finished_ == submitted_; });
      --flushing_;
    }
    if (failure_) {
      little_loops::error e = std::move(*failure_);
      failure_.reset();
      failed_.store(false, std::memory_order_relaxed);
      return unexpected(std::move(e));
    }
    return {};
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    clock::time_point next_take{};
    for (;;) {
      // Within the interval since the last write, the thread waits it out whether or not a
      // record is pending: records that arrive meanwhile need no wake-up, and a fast loop
      // costs one (timer) wake-up per interval. Past it, with nothing pending, it sleeps
      // until a save wakes it.
      if (!stopping_ && flushing_ == 0 && clock::now() < next_take) {
        wake_.wait_until(lock, next_take);
        continue;
      }
      if (taken_ == submitted_) {
        if (stopping_) return;
        asleep_ = true;
        wake_.wait(lock);
        asleep_ = false;
        continue;
      }
      next_take = clock::now() + interval_;
      std::string text = std::move(pending_);
      pending_.clear();
      const std::uint64_t seq = submitted_;
      taken_ = seq;
      lock.unlock();
      // The event log first, so that the durable state never runs ahead of the history.
      if (events_fd_ >= 0) ::fdatasync(events_fd_);
      auto written = write_file_atomic(target_, text, true);
      if (written) durable_.store(seq, std::memory_order_release);
      lock.lock();
      if (!written) {
        failure_ = std::move(written.error());
        failed_.store(true, std::memory_order_release);
      }
      finished_ = seq;
      done_.notify_all();
    }
  }

  std::filesystem::path target_;
  int events_fd_;
  clock::duration interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::string pending_;
  std::uint64_t submitted_ = 0;  // the newest record submitted
  std::uint64_t taken_ = 0;      // the newest record the thread has started on
  std::uint64_t finished_ = 0;   // the newest record written (or failed)
  std::atomic<std::uint64_t> durable_{0};
  std::optional<little_loops::error> failure_;
  std::atomic<bool> failed_{false};  // failure_ holds one (read without the mutex)
  bool stopping_ = false;
  int flushing_ = 0;     // callers waiting in flush()
  bool asleep_ = false;  // the thread waits on wake_ for a record (guarded by mutex_)
  std::thread thread_;  // last: started once every other member is ready
};

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

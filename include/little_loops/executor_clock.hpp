// little_loops — the executor's clocks: executor_clock, the system clock, manual_clock for tests
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/events.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions sleep
#  include <condition_variable>
#  include <mutex>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <chrono>
#include <stop_token>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief The executor's source of time: monotonic time for elapsed/timeout/deadline, wall time
/// for event time stamps and `started_at`, and an interruptible sleep for `backoff`.
/// Inject a manual_clock in tests so nothing ever sleeps.
class executor_clock {
 public:
  virtual ~executor_clock() = default;
  /// Monotonic now.
  virtual std::chrono::steady_clock::time_point now() noexcept = 0;
  /// Wall-clock now (UTC).
  virtual event_time wall_now() noexcept = 0;
  /// Sleep for `d`, returning early when `stop` is requested.
  virtual void sleep_for(std::chrono::nanoseconds d, std::stop_token stop) = 0;
};

/// The real clock: std::chrono::steady_clock / system_clock and a stop-aware sleep.
class system_executor_clock final : public executor_clock {
 public:
  std::chrono::steady_clock::time_point now() noexcept override {
    return std::chrono::steady_clock::now();
  }
  event_time wall_now() noexcept override { return std::chrono::system_clock::now(); }
  void sleep_for(std::chrono::nanoseconds d, std::stop_token stop) override;
};

/// The process-wide system clock used when executor_options::clock is null.
LITTLE_LOOPS_INLINE executor_clock& default_executor_clock() noexcept;

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE void system_executor_clock::sleep_for(std::chrono::nanoseconds d, std::stop_token stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_for(lock, stop, d, [] { return false; });
}

LITTLE_LOOPS_INLINE executor_clock& default_executor_clock() noexcept {
  static system_executor_clock clock;
  return clock;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// @brief A clock that only moves when told to: `advance()`, or `sleep_for` (which advances
/// instead of sleeping and records the request). Also `auto_advance` per `now()` call.
class manual_clock final : public executor_clock {
 public:
  /// Starts at steady epoch + 0 and wall time 2026-01-01T00:00:00Z.
  manual_clock() = default;

  std::chrono::steady_clock::time_point now() noexcept override {
    const auto t = steady_;
    steady_ += auto_advance;
    wall_ += std::chrono::duration_cast<event_time::duration>(auto_advance);
    return t;
  }
  event_time wall_now() noexcept override { return wall_; }
  void sleep_for(std::chrono::nanoseconds d, std::stop_token) override {
    sleeps.push_back(d);
    advance(d);
  }
  /// Move both clocks forward.
  void advance(std::chrono::nanoseconds d) noexcept {
    steady_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
    wall_ += std::chrono::duration_cast<event_time::duration>(d);
  }

  std::vector<std::chrono::nanoseconds> sleeps;    ///< every sleep_for request, in order
  std::chrono::nanoseconds auto_advance{0};        ///< added after every now() call

 private:
  std::chrono::steady_clock::time_point steady_{};
  event_time wall_{std::chrono::sys_days{std::chrono::year{2026} / 1 / 1}};
};

LITTLE_LOOPS_NAMESPACE_END

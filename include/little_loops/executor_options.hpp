// little_loops — executor_options: the host's settings of an executor (signals, clock, timeouts, env)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/executor_clock.hpp>
#include <little_loops/output_signal.hpp>
#include <little_loops/results.hpp>

#include <chrono>
#include <optional>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Host settings of an executor (the loop document holds the rest).
struct executor_options {
  /// Output signals, in priority order (empty: no signal detection).
  std::vector<output_signal> signals = default_output_signals();
  /// Time source; null → default_executor_clock(). Must outlive the executor.
  executor_clock* clock = nullptr;
  /// Per-action timeout used when a state has no `timeout:` (nullopt: the runner decides).
  std::optional<std::chrono::milliseconds> default_action_timeout;
  /// `${env.NAME}` lookup (null: std::getenv) and its user pointer.
  env_lookup_fn env = nullptr;
  void* env_user = nullptr;
};

LITTLE_LOOPS_NAMESPACE_END

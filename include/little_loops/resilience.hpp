// little_loops — resilience and progress as data: retry and catch policies, caps, stall memory
// SPDX-License-Identifier: MIT
#pragma once

// The value types of a state's `retry:`/`catch:`, the reference's rate-limit keys, the
// per-state `backoff`, a loop's `circuit:` and `max_edge_revisits`, and the fields of the
// stall evaluators (design §6.6). schema.hpp holds them in its records; the reader is
// detail/resilience_reader.hpp; the executor applies them (detail/resilience_runtime.hpp).

#include <little_loops/config.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The error classes a `retry:` or `catch:` entry names (error_classifier gives them):
/// `rate_limit` (429, quota, usage limit), `auth` (401/403, invalid key), `api_error`
/// (server errors, overloads), `network` (connection, DNS), `timeout`, `signal` (the action
/// was killed), `infra` (exit 143 after the agent's stream-json `result` event: its process
/// group was torn down once its turn had ended), `exit_code` (any other non-zero exit), and
/// `any` (every failure).
inline constexpr std::array<std::string_view, 9> error_class_names{
    "rate_limit", "auth", "api_error", "network", "timeout", "signal", "infra", "exit_code", "any"};

/// One entry of a state's `retry:` list (AWS Step Functions' `Retry`). The entries that match
/// a failure are tried in order: an entry whose attempts or duration are spent hands over to
/// the next matching one (the reference's short and long rate-limit tiers); when none is
/// left the failure goes to `catch:`, then to the state's ordinary routes.
struct retry_policy {
  std::vector<std::string> on;          ///< error classes (error_class_names)
  std::vector<int> exit_codes;          ///< exit codes written in `on:`
  double interval = 1;                  ///< seconds before the first retry of this entry
  double backoff_rate = 2;              ///< each wait is the previous one times this
  std::optional<double> max_delay;      ///< no single wait is longer (seconds)
  std::vector<double> delays;           ///< explicit waits, the last repeating (a ladder)
  /// `none` (0), `full` (the wait is uniform in [0, wait), as ASL's FULL) or seconds: a
  /// uniform wait in [0, jitter) is added (the reference's rate-limit ladder).
  std::optional<double> jitter;
  bool full_jitter = false;
  std::optional<int> max_attempts;      ///< retries of this entry (absent: 3, or unbounded with max_duration)
  std::optional<double> max_duration;   ///< seconds waited in all, across the matching entries
  /// Written by the loop (false: derived from the reference's rate-limit keys or the
  /// current dialect's defaults; `show` says so).
  bool written = true;

  friend bool operator==(const retry_policy&, const retry_policy&) = default;
};

/// The resilience of a state: `retry:`, `catch:`, `backoff`, and the reference's rate-limit
/// keys as written (they map onto retry and catch entries: effective_retry()).
struct state_resilience {
  std::vector<retry_policy> retry;                      ///< `retry:` as written
  std::vector<std::pair<std::string, std::string>> catches;  ///< `catch:` error class → state
  std::optional<double> backoff;                        ///< seconds to wait after this state
  std::optional<int> max_rate_limit_retries;            ///< short tier attempts (3)
  std::optional<std::string> on_rate_limit_exhausted;   ///< where exhausted rate limits go
  std::optional<double> rate_limit_backoff_base_seconds;  ///< short tier base (30)
  std::optional<double> rate_limit_max_wait_seconds;    ///< budget of both tiers (21600)
  std::vector<double> rate_limit_long_wait_ladder;      ///< long tier (300, 900, 1800, 3600)

  friend bool operator==(const state_resilience&, const state_resilience&) = default;
};

/// `circuit.repeated_failure`: the same (state, exit code, verdict) `window` times in a row,
/// or `recurrent_window` times in all, aborts the run or routes to a state.
struct repeated_failure_config {
  int window = 3;
  std::string on_repeated_failure = "abort";    ///< `abort` or a state name
  std::vector<std::string> progress_paths;      ///< fingerprinted: a change resets the window
  std::vector<std::string> exclude_paths;       ///< progress paths left out of it
  std::optional<int> recurrent_window;

  friend bool operator==(const repeated_failure_config&, const repeated_failure_config&) = default;
};

/// The loop-level caps: `max_edge_revisits` and `circuit:`.
struct loop_resilience {
  /// Times one edge (from → to) may be taken; past it the run ends (`cycle_detected`).
  /// Absent: the reference's 100 in the current dialect, no cap in the seed dialect.
  std::optional<int> max_edge_revisits;
  std::optional<repeated_failure_config> repeated_failure;  ///< `circuit.repeated_failure`
  bool circuit = false;                                     ///< `circuit:` was written

  friend bool operator==(const loop_resilience&, const loop_resilience&) = default;
};

/// The fields of the stall evaluators (`diff_stall`, `score_stall`, `open_question_stall`,
/// `action_stall`) in `evaluate:`.
struct stall_config {
  std::optional<std::vector<std::string>> scope;  ///< diff_stall: `git diff --stat -- <scope>`
  std::optional<int> max_stall;                   ///< non-progress rounds before `no` (1)
  std::optional<std::string> history_file;        ///< score/open_question_stall (template)
  std::optional<double> epsilon;                  ///< smallest progress (0.5; 0 for questions)
  std::optional<std::vector<std::string>> track;  ///< action_stall: keys hashed (["action"])
  std::optional<int> max_repeat;                  ///< action_stall: identical rounds (2)

  friend bool operator==(const stall_config&, const stall_config&) = default;
};

LITTLE_LOOPS_NAMESPACE_END

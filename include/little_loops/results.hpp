// little_loops — runtime records: action requests/results, evaluations, captured and prev data
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// What the executor asks an ActionRunner to run.
struct action_request {
  std::string_view state;          ///< the state whose action this is
  std::string_view text;           ///< the interpolated action text
  action_kind kind = action_kind::shell;
  /// Per-action timeout (the state's `timeout:`), if any.
  std::optional<std::chrono::milliseconds> timeout;
  /// Absolute loop deadline (from the loop's `timeout:`), if any: the runner must stop the
  /// action at this point and report `timed_out`.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Cancellation: when stop is requested the runner stops the action and reports
  /// `cancelled`.
  std::stop_token stop;
};

/// What an ActionRunner reports back.
struct action_result {
  std::string output;         ///< stdout
  std::string stderr_output;  ///< stderr (JSON key "stderr")
  int exit_code = 0;
  std::chrono::milliseconds duration{0};
  bool timed_out = false;     ///< stopped by a timeout or the loop deadline
  bool idle_timeout = false;  ///< stopped for producing no output (implies timed_out)
  bool cancelled = false;     ///< stopped because a stop was requested
  int signal = 0;             ///< non-zero: killed by this signal
  bool truncated = false;     ///< output was capped by the runner

  /// True when the action did not run to a normal exit (timeout, signal, cancellation).
  [[nodiscard]] bool abnormal() const noexcept { return timed_out || cancelled || signal != 0; }
};

/// An evaluator's verdict and its evaluator-specific details (a JSON object).
struct evaluation_result {
  std::string verdict;
  json details = json::object();
};

/// `captured.<name>`: an action result saved by a state's `capture:` (design §3.6).
struct captured_record {
  std::string output;         ///< trailing CR/LF stripped
  std::string stderr_output;
  int exit_code = 0;
  std::int64_t duration_ms = 0;
  std::string verdict;

  friend bool operator==(const captured_record&, const captured_record&) = default;
};

/// All captured records of a run, in capture order.
using captured_map = ordered_map<std::string, captured_record>;

/// `prev`: the last executed state's data (design §3.6), updated after every state.
struct prev_record {
  std::string state;
  std::string output;
  std::string stderr_output;
  int exit_code = 0;
  std::string verdict;
  json details = json::object();

  friend bool operator==(const prev_record&, const prev_record&) = default;
};

/// Host function that looks up an environment variable for `${env.NAME}`.
/// Returns std::nullopt when the variable is not set.
using env_lookup_fn = std::optional<std::string> (*)(std::string_view name, void* user);

/// Everything a template can read. All pointers are optional (null: namespace empty).
/// The executor builds one per step without copying the data.
struct interpolation_context {
  const json* context = nullptr;          ///< `${context.*}` (an object)
  const captured_map* captured = nullptr; ///< `${captured.<name>.<field>}`
  const prev_record* prev = nullptr;      ///< `${prev.*}`; null before the first state ran
  const evaluation_result* result = nullptr; ///< `${result.*}`: the current evaluation
  std::string_view state_name;            ///< `${state.name}`
  std::int64_t iteration = 0;             ///< `${state.iteration}`
  std::string_view loop_name;             ///< `${loop.name}`
  std::string_view started_at;            ///< `${loop.started_at}` (ISO 8601)
  std::int64_t elapsed_ms = 0;            ///< `${loop.elapsed_ms}`, `${loop.elapsed}`
  env_lookup_fn env = nullptr;            ///< `${env.NAME}`; null → std::getenv
  void* env_user = nullptr;               ///< passed to `env`
};

struct compiled_evaluator;  // defined in evaluators.hpp: templates and patterns compiled at load

/// What the executor hands an Evaluator for one state execution.
struct evaluation_request {
  std::string_view state;                         ///< the state being evaluated
  const evaluate_config* config = nullptr;        ///< null: the state has no `evaluate:`
  const compiled_evaluator* compiled = nullptr;   ///< library-compiled form of `config`
  action_kind kind = action_kind::shell;          ///< the action's kind (default choice)
  const action_result* action = nullptr;          ///< null: the state ran no action
  const interpolation_context* context = nullptr; ///< for templated fields
  const llm_config* llm = nullptr;                ///< the loop's LLM settings
  /// Convergence memory of this state (owned by the executor, kept in snapshots): the
  /// previous value seen, updated by the convergence evaluator.
  std::optional<double>* convergence_memory = nullptr;
};

LITTLE_LOOPS_NAMESPACE_END

// little_loops — executor_options: the host's settings of an executor (signals, clock, timeouts, env)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/child_loops.hpp>
#include <little_loops/config.hpp>
#include <little_loops/executor_clock.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/guards.hpp>
#include <little_loops/json.hpp>
#include <little_loops/learning.hpp>
#include <little_loops/output_signal.hpp>
#include <little_loops/results.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions classify failures
#  include <little_loops/detail/failure_type.hpp>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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
  /// Context the host injects (an object): when a run starts or resumes, each key is set in
  /// `context` only if absent, so the loop's `context:` and the host's own overrides win.
  /// ll-loop injects `run_dir`, `input_hash` and `max_steps` (design §6.3).
  json injected_context = detail::empty_json_object();
  /// The most bytes a rendered action may have: past it the state's verdict is `error`
  /// (errc::template_too_large), found while rendering. The default is the argument limit
  /// of Linux's exec (default_action_size_limit); a runner that takes longer actions may
  /// raise it.
  std::size_t action_size_limit = default_action_size_limit;
  /// The most bytes any other rendered template (route targets, evaluator fields) may have.
  std::size_t render_size_limit = default_render_size_limit;
  /// Finds the child of a sub-loop state (`loop:`) when the state runs; null: such a state's
  /// verdict is `error` ("no child loop resolver"). Must outlive the executor.
  child_loop_resolver* child_loops = nullptr;
  /// The top loop's identity (its file), the referrer of its children's names.
  std::string loop_id;
  /// The most loops running at once, the top one included: a sub-loop state that would go
  /// deeper gets the `error` verdict (a loop calling itself without end).
  std::size_t max_subloop_depth = 16;
  /// The error class of an action's result, which `retry:` and `catch:` match
  /// (resilience.hpp: error_class_names); empty when it did not fail. Unset:
  /// default_error_class().
  std::function<std::string(const action_result&)> error_classifier;
  /// Uniform numbers in [0, 1) for retry jitter (unset: a random engine); tests inject a
  /// constant.
  std::function<double()> random_source;
  /// The learning-test registry (learning.hpp): what it holds for a target. Called by a
  /// learning state for each target, before and after each exploration; an error (or an
  /// exception) is the state's `error` verdict. Unset: a learning state's verdict is `error`
  /// ("no learning registry").
  std::function<expected<learning_status, error>(std::string_view target)> learning_registry;
  /// Globs of the test files `tamper_guard:` watches (paths relative to the working
  /// directory; `**/` matches any leading directories, `*` stays in one segment).
  std::vector<std::string> test_file_patterns{default_test_file_patterns.begin(),
                                              default_test_file_patterns.end()};
  /// The host's pre-patch check of `prepatch_check:` (guards.hpp): given the patch of a
  /// guarded state's green exit, whether its candidate tests passed before it too. Unset:
  /// every check is `skipped`.
  std::function<prepatch_verdict(const prepatch_request&)> prepatch_checker;
  /// The branch a patch is measured from: its merge base with HEAD, else the branch itself.
  std::string prepatch_base_branch = "main";
  /// `worktree:` of a sub-loop state: attaches a scratch git worktree to the existing branch
  /// `branch` and returns its path, where the child's actions and probes run (or why it
  /// could not). It may adjust the child's context (ll-loop anchors a relative `run_dir` to
  /// the main tree). Unset: such a state's verdict is `error`.
  std::function<expected<std::string, std::string>(std::string_view branch, json& child_context)>
      attach_worktree;
  /// Removes a worktree attach_worktree() made (its branch stays).
  std::function<void(std::string_view path)> detach_worktree;
};

/// The default error classifier: `timeout` (the runner timed the action out), `signal` (it
/// was killed), nothing for exit 0, `infra` for exit 143 after a stream-json `result` event
/// (the reference's infra teardown), else by the reference's patterns in the output and
/// stderr (lower-cased): `rate_limit` (429, quota, usage limit, too many requests),
/// `network` (connection refused or reset, DNS, 502–504), `auth` (401, 403, unauthorized,
/// invalid API key), `api_error` (internal server error, overloaded, 529, "api error"),
/// else `exit_code`.
LITTLE_LOOPS_INLINE std::string default_error_class(const action_result& a);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::string default_error_class(const action_result& a) {
  if (a.timed_out) return "timeout";
  if (a.signal != 0) return "signal";
  if (a.exit_code == 0) return {};
  if (detail::is_infra_teardown(a.exit_code, a.output)) return "infra";
  return std::string(detail::error_class_of(a.output, a.stderr_output));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {
// Sets in `context` each key of `injected` it lacks (executor_options::injected_context).
LITTLE_LOOPS_INLINE void inject_missing(json& context, const json& injected);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE void inject_missing(json& context, const json& injected) {
  if (!injected.is_object() || injected.empty() || !context.is_object()) return;
  for (auto it = injected.begin(); it != injected.end(); ++it)
    if (!context.contains(it.key())) context[it.key()] = it.value();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

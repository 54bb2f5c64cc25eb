// little_loops — the test guards' steps of the executor: a state's entry and its exit
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor_core (detail/executor_core.hpp): the steps that probe the working tree
// around a state's action. Before it runs, the tamper guard's snapshot; after its verdict,
// the fingerprint of the circuit's progress paths (design §6.6), the pre-patch check and
// then the tamper check (so the patch is read before a `revert` rewrites it), and where a
// `fail` policy sends the run (the tamper guard's first), before every other route (design
// §6.3).

#include <little_loops/config.hpp>
#include <little_loops/detail/executor_core.hpp>
#include <little_loops/detail/prepatch_check.hpp>
#include <little_loops/detail/resilience_runtime.hpp>
#include <little_loops/detail/tamper_guard.hpp>

#include <cstddef>
#include <optional>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

// The probes of `st`, through the host's runner.
LITTLE_LOOPS_INLINE guard_probes<executor_core::runner_call> executor_core::probes(const compiled_state& st) {
  return guard_probes<runner_call>(runner_call{this}, st.name, stop_.get_token(), deadline_);
}

// Before the action of `st`: the test files, when a tamper guard applies.
LITTLE_LOOPS_INLINE void executor_core::enter_guards(const compiled_state& st) {
  tamper_before_.reset();
  if (tamper_policy_of(*loop_, st)) tamper_before_ = probes(st).snapshot_entry(options_.test_file_patterns);
}

// After the verdict of `st` (`action`: its result, null when none ran): the state a guard
// sends the run to, if any.
LITTLE_LOOPS_INLINE std::optional<std::size_t> executor_core::leave_guards(const compiled_state& st,
                                                              const action_result* action) {
  if (const auto& rf = loop_->loop().resilience.repeated_failure; rf && !rf->progress_paths.empty())
    if (const auto text = progress_probe(*rf, running_context(st)))
      if (auto fp = probes(st).ask(*text)) resilience_.note_progress(std::move(*fp));
  std::optional<std::size_t> prepatch;
  if (prepatch_policy_of(*loop_, st)) {
    const bool green = action ? action->exit_code == 0 && !action->abnormal() : !st.action;
    prepatch = guard_report(prepatch_exit(probes(st), *loop_, st, green, options_, memo_, context_));
  }
  std::optional<std::size_t> tamper;
  if (tamper_before_) {
    const tamper_snapshot before = std::exchange(tamper_before_, std::nullopt).value();
    tamper = guard_report(
        tamper_exit(probes(st), *loop_, st, before, options_.test_file_patterns, context_));
  }
  if (tamper || prepatch) route_reason_ = tamper ? "tamper_guard" : "prepatch_check";
  return tamper ? tamper : prepatch;
}

// Reports a guard's decision (when it has something to say); the state it sends the run to.
LITTLE_LOOPS_INLINE std::optional<std::size_t> executor_core::guard_report(const guard_decision& d) {
  if (emits_events_ && d.report) emit(stamped(d.event, wall()));
  return d.target;
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

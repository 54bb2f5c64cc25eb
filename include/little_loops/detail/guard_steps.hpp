// little_loops — the test guards' steps of the executor: a state's entry and its exit
// SPDX-License-Identifier: MIT
#pragma once

// Part of fsm_executor (executor.hpp), as a base it befriends: the steps that probe the
// working tree around a state's action. Before it runs, the tamper guard's snapshot; after
// its verdict, the fingerprint of the circuit's progress paths (design §6.6), the pre-patch
// check and then the tamper check (so the patch is read before a `revert` rewrites it), and
// where a `fail` policy sends the run (the tamper guard's first), before every other route
// (design §6.3).

#include <little_loops/config.hpp>
#include <little_loops/detail/prepatch_check.hpp>
#include <little_loops/detail/resilience_runtime.hpp>
#include <little_loops/detail/tamper_guard.hpp>

#include <cstddef>
#include <optional>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

template <class Executor>
class guard_steps {
 protected:
  // Before the action of `st`: the test files, when a tamper guard applies.
  void enter_guards(const compiled_state& st) {
    tamper_before_.reset();
    Executor& ex = static_cast<Executor&>(*this);
    if (tamper_policy_of(*ex.loop_, st))
      tamper_before_ = probes(st).snapshot_entry(ex.options_.test_file_patterns);
  }

  // After the verdict of `st` (`action`: its result, null when none ran): the state a guard
  // sends the run to, if any.
  std::optional<std::size_t> leave_guards(const compiled_state& st, const action_result* action) {
    Executor& ex = static_cast<Executor&>(*this);
    if (const auto& rf = ex.loop_->loop().resilience.repeated_failure; rf && !rf->progress_paths.empty())
      if (const auto text = progress_probe(*rf, ex.running_context(st)))
        if (auto fp = probes(st).ask(*text)) ex.resilience_.note_progress(std::move(*fp));
    std::optional<std::size_t> prepatch;
    if (prepatch_policy_of(*ex.loop_, st)) {
      const bool green = action ? action->exit_code == 0 && !action->abnormal() : !st.action;
      prepatch = report(prepatch_exit(probes(st), *ex.loop_, st, green, ex.options_, memo_, ex.context_));
    }
    std::optional<std::size_t> tamper;
    if (tamper_before_) {
      const tamper_snapshot before = std::exchange(tamper_before_, std::nullopt).value();
      tamper = report(tamper_exit(probes(st), *ex.loop_, st, before, ex.options_.test_file_patterns,
                                  ex.context_));
    }
    if (tamper || prepatch) ex.route_reason_ = tamper ? "tamper_guard" : "prepatch_check";
    return tamper ? tamper : prepatch;
  }

 private:
  std::optional<std::size_t> report(const guard_decision& d) {
    Executor& ex = static_cast<Executor&>(*this);
    if constexpr (Executor::emits_events)
      if (d.report) ex.emit(stamped(d.event, ex.wall()));
    return d.target;
  }

  auto probes(const compiled_state& st) {
    Executor& ex = static_cast<Executor&>(*this);
    auto run = [&ex](const action_request& r) { return ex.call_runner(r); };
    return guard_probes<decltype(run)>(run, st.name, ex.stop_.get_token(), ex.deadline_);
  }

  std::optional<tamper_snapshot> tamper_before_;  // the guarded test files on entry
  prepatch_memo memo_;  // the pre-patch verdicts of this run by (patch, base)
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — the test guards' steps of the executor: a state's entry and its exit
// SPDX-License-Identifier: MIT
#pragma once

// Part of fsm_executor (executor.hpp), as a base it befriends: before a state's action runs,
// the tamper guard's snapshot; after its verdict, the check and where a `fail` policy sends
// the run (detail/tamper_guard.hpp), before every other route (design §6.3).

#include <little_loops/config.hpp>
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

  // After the verdict of `st`: the state a guard sends the run to, if any.
  std::optional<std::size_t> leave_guards(const compiled_state& st) {
    if (!tamper_before_) return std::nullopt;
    Executor& ex = static_cast<Executor&>(*this);
    const tamper_snapshot before = std::exchange(tamper_before_, std::nullopt).value();
    guard_decision d = tamper_exit(probes(st), *ex.loop_, st, before,
                                   ex.options_.test_file_patterns, ex.context_);
    if constexpr (Executor::emits_events)
      if (d.event.findings != 0) ex.emit(stamped(d.event, ex.wall()));
    if (d.target) ex.route_reason_ = "tamper_guard";
    return d.target;
  }

 private:
  auto probes(const compiled_state& st) {
    Executor& ex = static_cast<Executor&>(*this);
    auto run = [&ex](const action_request& r) { return ex.call_runner(r); };
    return tamper_check<decltype(run)>(run, st.name, ex.stop_.get_token(), ex.deadline_);
  }

  std::optional<tamper_snapshot> tamper_before_;  // the guarded test files on entry
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

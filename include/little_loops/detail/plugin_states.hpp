// little_loops — the executor's throttle: per-visit action counts, warnings, limits
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor.hpp (a private base of fsm_executor, as subloop_frames is). The count of
// the current visit lives in the executor's retry_counters, so sub-loop frames and snapshots
// carry it with the other counters (retry_counters.hpp); the thresholds are compiled into
// each state (compiled_loop.hpp). What the throttle does is the reference's `_check_throttle`
// (throttle.hpp).

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/routing.hpp>
#include <little_loops/error.hpp>
#include <little_loops/events.hpp>
#include <little_loops/execution_result.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/throttle.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

template <class Executor>
class plugin_states {
 protected:
  Executor& executor() noexcept { return static_cast<Executor&>(*this); }

  // A state starts executing: a state other than the one entered last starts a new visit.
  // True when the state was executed here (nothing else to do for the step).
  bool visit_state(const compiled_state&, interpolation_context&) {
    executor().counters_.visit(executor().current_);
    return false;
  }

  // After an action of `st` ran: counts it, warns at warn_max, and at hard_max leaves the
  // state (true: the step is over, without evaluating the action) or past it ends the run.
  bool throttle_after_action(const compiled_state& st, interpolation_context& ctx) {
    if (!st.throttled) return false;
    Executor& ex = executor();
    const int count = ex.counters_.count_call();
    const throttle_limits& l = st.throttle;
    if constexpr (Executor::emits_events)
      if (throttle_warns(count, l))
        ex.emit(throttle_event{"throttle_warn", ex.wall(), st.name, count, l.normal_max,
                               l.warn_max, l.hard_max, {}});
    switch (judge_throttle(count, l, st.throttle_exempt)) {
      case throttle_step::pass: return false;
      case throttle_step::hard: return throttle_leave(st, ctx, count);
      case throttle_step::stop: break;
    }
    if constexpr (Executor::emits_events)
      ex.emit(throttle_event{"throttle_stop", ex.wall(), st.name, count, l.normal_max,
                             l.warn_max, l.hard_max, {}});
    std::string message = fmt::format(
        "Throttle stop: state '{}' exceeded hard_max={} tool calls with no on_throttle_hard target",
        st.name, l.hard_max);
    ex.report_error(st, "throttle", message);
    ex.finish(termination::error,
              little_loops::error{errc::cap_reached, std::move(message), "states." + st.name});
    return true;
  }

 private:
  // hard_max reached: to `on_throttle_hard`, else `on_error`; with neither the state goes on
  // as usual (the reference's `_check_throttle` returns no target then).
  bool throttle_leave(const compiled_state& st, interpolation_context& ctx, int count) {
    Executor& ex = executor();
    const compiled_target* target = st.throttle_hard ? &*st.throttle_hard
                                    : st.on_error    ? &st.on[*st.on_error].second
                                                     : nullptr;
    if (target == nullptr) {
      if constexpr (Executor::emits_events)
        ex.emit(throttle_event{"throttle_hard", ex.wall(), st.name, count, st.throttle.normal_max,
                               st.throttle.warn_max, st.throttle.hard_max, {}});
      return false;
    }
    route_query q{.loop = ex.loop_.get(), .current = ex.current_, .verdict = "error",
                  .context = &ctx, .text = &ex.target_text_};
    auto to = take(q, *target);
    if (!to) {
      ex.report_error(st, "route", to.error().error.message);
      ex.finish(termination::error, std::move(to.error().error));
      return true;
    }
    if constexpr (Executor::emits_events) {
      const std::string_view next = ex.loop_->state(*to).name;
      ex.emit(throttle_event{"throttle_hard", ex.wall(), st.name, count, st.throttle.normal_max,
                             st.throttle.warn_max, st.throttle.hard_max, next});
      ex.emit(route_event{ex.wall(), st.name, next, "throttle_hard"});
    }
    ex.current_ = *to;
    return true;
  }
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

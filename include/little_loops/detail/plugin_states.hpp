// little_loops — the executor's throttle and learning states
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor_core (detail/executor_core.hpp), as the sub-loop frames are. The count of
// the current visit lives in the executor's retry_counters, so sub-loop frames and snapshots
// carry it with the other counters (retry_counters.hpp); the thresholds are compiled into
// each state (compiled_loop.hpp). What the throttle does is the reference's `_check_throttle`
// (throttle.hpp). A learning state (learning.hpp) runs here in one step, as the reference's
// `_execute_learning_state`: the registry through executor_options::learning_registry, the
// explorations through the runner; its verdict routes as a sub-loop state's does.

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/executor_core.hpp>
#include <little_loops/detail/host_calls.hpp>
#include <little_loops/detail/host_requests.hpp>
#include <little_loops/detail/learning_plan.hpp>
#include <little_loops/detail/routing.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/events.hpp>
#include <little_loops/execution_result.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/learning.hpp>
#include <little_loops/results.hpp>
#include <little_loops/throttle.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

// A state starts executing: a state other than the one entered last starts a new visit.
// True when the state was executed here (a learning state: nothing else to do).
LITTLE_LOOPS_INLINE bool executor_core::visit_state(const compiled_state& st, interpolation_context& ctx) {
  counters_.visit(current_);
  if (!st.config->learning || st.config->type != "learning") return false;
  run_learning(st, ctx);
  return true;
}

// After an action of `st` ran: counts it, warns at warn_max, and at hard_max leaves the
// state (true: the step is over, without evaluating the action) or past it ends the run.
LITTLE_LOOPS_INLINE bool executor_core::throttle_after_action(const compiled_state& st, interpolation_context& ctx) {
  if (!st.throttled) return false;
  const int count = counters_.count_call();
  const throttle_limits& l = st.throttle;
  if (emits_events_ && throttle_warns(count, l))
    emit(throttle_event{"throttle_warn", wall(), st.name, count, l.normal_max, l.warn_max,
                        l.hard_max, {}});
  switch (judge_throttle(count, l, st.throttle_exempt)) {
    case throttle_step::pass: return false;
    case throttle_step::hard: return throttle_leave(st, ctx, count);
    case throttle_step::stop: break;
  }
  if (emits_events_)
    emit(throttle_event{"throttle_stop", wall(), st.name, count, l.normal_max, l.warn_max,
                        l.hard_max, {}});
  std::string message = fmt::format(
      "Throttle stop: state '{}' exceeded hard_max={} tool calls with no on_throttle_hard target",
      st.name, l.hard_max);
  report_error(st, "throttle", message);
  finish(termination::error, little_loops::error{errc::cap_reached, std::move(message), "states." + st.name});
  return true;
}

// ---- learning states ----

LITTLE_LOOPS_INLINE void executor_core::learning_emit(const compiled_state& st, std::string_view name,
                                         std::string_view target, std::string_view detail,
                                         std::int64_t attempt, const std::vector<std::string>* targets) {
  if (emits_events_) emit(learning_event{name, wall(), st.name, target, detail, attempt, targets});
}

// Proves every target in order; the verdict is `yes` (all proven), `blocked` (`no` when
// the state has no on_blocked) or `error` (a template or the registry failed).
LITTLE_LOOPS_INLINE void executor_core::run_learning(const compiled_state& st, interpolation_context& ctx) {
  auto plan = learning_plan_of(*st.config->learning, ctx);
  if (!plan) return learning_verdict(st, ctx, error_result(std::move(plan.error())));
  if (!options_.learning_registry)
    return learning_verdict(st, ctx, error_result("no learning registry: the host gives none"));
  for (const std::string& target : plan->targets) {
    auto outcome = prove_target(st, ctx, target, plan->max_retries);
    if (!outcome) return learning_verdict(st, ctx, error_result(std::move(outcome.error())));
    if (!*outcome) return;  // the run (or this child loop) ended while exploring
    if ((*outcome)->empty()) continue;  // proven
    const std::string& why = **outcome;
    learning_emit(st, "learning_blocked", target, why);
    evaluation_result blocked;
    blocked.verdict = st.config->on.count("blocked") != 0 ? "blocked" : "no";
    blocked.details = json{{"target", target}, {"reason", why}};
    return learning_verdict(st, ctx, std::move(blocked));
  }
  learning_emit(st, "learning_complete", {}, {}, 0, &plan->targets);
  evaluation_result done;
  done.verdict = "yes";
  done.details = json{{"targets", plan->targets}};
  learning_verdict(st, ctx, std::move(done));
}

// One target: empty when proven, else why it blocks (`refuted`, `retries_exhausted`);
// nullopt when the run ended in an exploration; an error when the registry failed.
LITTLE_LOOPS_INLINE expected<std::optional<std::string>, std::string> executor_core::prove_target(
    const compiled_state& st, const interpolation_context& ctx, const std::string& target,
    int max_retries) {
  auto status = lookup(target);
  for (int attempts = 0; status && (*status == learning_status::missing ||
                                    *status == learning_status::stale);) {
    if (attempts >= max_retries) return std::string("retries_exhausted");
    learning_emit(st, "learning_target_stale", target, to_string(*status));
    learning_emit(st, "learning_explore_invoked", target, {}, ++attempts);
    if (!explore(st, ctx, target)) return std::optional<std::string>();
    status = lookup(target);
  }
  if (!status) return unexpected(std::move(status.error()));
  if (*status == learning_status::refuted) {
    learning_emit(st, "learning_target_refuted", target);
    return std::string("refuted");
  }
  learning_emit(st, "learning_target_proven", target);
  return std::string();
}

LITTLE_LOOPS_INLINE expected<learning_status, std::string> executor_core::lookup(const std::string& target) {
  auto r = call_host<learning_status>([&] { return options_.learning_registry(target); },
                                      errc::action_failed, "the learning registry");
  if (!r) return unexpected("learning registry: " + r.error().message);
  return *r;
}

// `/ll:explore-api <target>` through the runner, as a slash command with the state's host
// settings (agent:, pruning_profile:, session_mode:); its result is only reported. False
// when the run ended in it (cancelled, out of time).
LITTLE_LOOPS_INLINE bool executor_core::explore(const compiled_state& st, const interpolation_context& ctx,
                                   const std::string& target) {
  const std::string command = "/ll:explore-api " + target;
  action_request& req = request_;
  req.kind = action_kind::slash_command;
  // The state's agent and profile, as for any prompt action (none left from another state).
  auto sent = prepare_host_request(req, loop_->loop(), *st.config, session_, command,
                                   action_text_, ctx);
  if (!sent) {  // a slash command has no params to render: not expected, reported if it is
    report_error(st, "interpolation", sent.error());
    return true;
  }
  const std::string_view text = *sent;
  if (emits_events_) emit(action_start_event{wall(), st.name, text, true});
  req.state = st.name;
  req.text = text;
  req.timeout = st.timeout ? st.timeout : options_.default_action_timeout;
  req.deadline = deadline_;
  auto res = call_runner(req);
  stamp();
  req.text = {};
  if (!res) {
    report_error(st, "action", res.error().message);
    return true;
  }
  return finish_action(st, *res);
}

LITTLE_LOOPS_INLINE void executor_core::learning_verdict(const compiled_state& st, interpolation_context& ctx,
                                            evaluation_result r) {
  if (r.verdict == "error") report_error(st, "learning", r.details.to_json().value("error", ""));
  result_eval_ = std::move(r);
  history_.record(st, nullptr, result_eval_, true);
  move_on(st, std::nullopt, choose_next(st, ctx));
}

// hard_max reached: to `on_throttle_hard`, else `on_error`; with neither the state goes on
// as usual (the reference's `_check_throttle` returns no target then).
LITTLE_LOOPS_INLINE bool executor_core::throttle_leave(const compiled_state& st, interpolation_context& ctx, int count) {
  const compiled_target* target = st.throttle_hard ? &*st.throttle_hard
                                  : st.on_error    ? &st.on[*st.on_error].second
                                                   : nullptr;
  if (target == nullptr) {
    if (emits_events_)
      emit(throttle_event{"throttle_hard", wall(), st.name, count, st.throttle.normal_max,
                          st.throttle.warn_max, st.throttle.hard_max, {}});
    return false;
  }
  route_query q{.loop = loop_.get(), .current = current_, .verdict = "error",
                .context = &ctx, .text = &target_text_};
  auto to = take(q, *target);
  if (!to) {
    report_error(st, "route", to.error().error.message);
    finish(termination::error, std::move(to.error().error));
    return true;
  }
  if (emits_events_) {
    const std::string_view next = loop_->state(*to).name;
    emit(throttle_event{"throttle_hard", wall(), st.name, count, st.throttle.normal_max,
                        st.throttle.warn_max, st.throttle.hard_max, next});
    emit(route_event{wall(), st.name, next, "throttle_hard"});
  }
  current_ = *to;
  return true;
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

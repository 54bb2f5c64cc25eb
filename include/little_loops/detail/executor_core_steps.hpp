// little_loops — the executor's state execution: action, verdict, history, route, signals
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor_core (detail/executor_core.hpp): one (non-terminal) state's execution,
// one phase after the other. Per step it renders the state's compiled action template into
// a reused buffer, calls the runner and the evaluator through the host hooks, and follows a
// precomputed route: no parsing, no map lookups by name for static targets, no heap
// allocation of its own in steady state.

#include <little_loops/detail/executor_core.hpp>
#include <little_loops/detail/failure_type.hpp>
#include <little_loops/detail/host_calls.hpp>
#include <little_loops/detail/output_signal_scan.hpp>
#include <little_loops/detail/text_transfer.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

LITTLE_LOOPS_INLINE void executor_core::report_error(const compiled_state& st, std::string_view kind,
                                        std::string_view message) {
  if (emits_events_) emit(error_event{wall(), st.name, kind, message});
}

// The host's runner and evaluator: an exception from either is the `error` verdict with
// what it said (design §3.4), never an exception out of step().
LITTLE_LOOPS_INLINE expected<action_result, error> executor_core::call_runner(const action_request& req) {
  return call_host<action_result>([&] { return host_run(in_working_dir(req)); },
                                  errc::action_failed, "the action runner");
}

LITTLE_LOOPS_INLINE expected<evaluation_result, error> executor_core::call_evaluator(const evaluation_request& req) {
  if (req.config && is_stall_evaluator(req.config->type))  // design §6.6: judged here
    return judge_stall(resilience_.stalls, req, deadline_, stop_.get_token(), runner_call{this});
  return call_host<evaluation_result>([&] { return host_evaluate(req); }, errc::evaluation_failed,
                                      "the evaluator");
}

// Executes one (non-terminal) state: renders and runs its action, then conclude(). The
// runner's result stays where the runner returned it: it is not moved.
LITTLE_LOOPS_INLINE void executor_core::execute(const compiled_state& st) {
  ++iteration_;
  if (emits_events_) emit(state_enter_event{wall(), st.name, iteration_});
  interpolation_context ctx = running_context(st);
  if (visit_state(st, ctx)) return;  // the throttle's visit; a learning state
  if (st.config->loop) return call_subloop(st, ctx);
  if (!st.action) return conclude(st, ctx, nullptr);
  std::string_view text;
  if (st.action->is_literal()) {
    text = st.action->literal();
  } else {
    action_text_.clear();
    ctx.size_limit = options_.action_size_limit;
    auto r = render_to(*st.action, ctx, action_text_);
    ctx.size_limit = options_.render_size_limit;
    if (!r) return conclude_unrunnable(st, ctx, "interpolation", std::move(r.error().message));
    text = action_text_;
  }
  action_request& req = request_;  // a member: its stop token is not copied per step
  req.kind = !st.kind_from_rendered ? st.kind
             : is_slash_command_text(text) ? action_kind::slash_command : action_kind::shell;
  auto sent = prepare_host_request(req, loop_->loop(), *st.config, session_, text, action_text_, ctx);
  if (!sent) return conclude_unrunnable(st, ctx, "interpolation", std::move(sent.error()));
  if (emits_events_) emit(action_start_event{wall(), st.name, *sent, is_prompt_kind(req.kind)});
  req.state = st.name;
  req.text = *sent;
  req.timeout = st.timeout ? st.timeout : options_.default_action_timeout;
  req.deadline = deadline_;
  enter_guards(st);  // design §6.3
  expected<action_result, error> res = call_runner(req);
  stamp();
  req.text = req.params = {};  // they may view action_text_
  if (!res) return conclude_unrunnable(st, ctx, "action", std::move(res.error().message));
  conclude(st, ctx, &*res);
}

// The state's action could not be run at all (`kind`: why): its verdict is `error`.
LITTLE_LOOPS_INLINE void executor_core::conclude_unrunnable(const compiled_state& st, interpolation_context& ctx,
                                               std::string_view kind, std::string message) {
  report_error(st, kind, message);
  result_eval_ = error_result(std::move(message));
  conclude(st, ctx, nullptr);
}

// The rest of a state execution, one phase after the other: finish the action, decide the
// verdict, record history, choose the next state, apply signals. `action` is the action's
// result (null: no action ran; when the state has one, execute() set the `error` verdict).
LITTLE_LOOPS_INLINE void executor_core::conclude(const compiled_state& st, interpolation_context& ctx,
                                    action_result* action) {
  if (action && !finish_action(st, *action)) return;
  if (action && throttle_after_action(st, ctx)) return;  // it left or ended the run
  retry_code_ = !action ? -1 : action->timed_out ? 124 : action->signal != 0 ? -1 : action->exit_code;
  const bool evaluated = decide_verdict(st, ctx, action);
  if (st.capture && action) captured_[*st.capture].verdict = result_eval_.verdict;
  history_.record(st, action, result_eval_, evaluated);
  const std::optional<std::size_t> guarded = leave_guards(st, action);  // design §6.3
  std::optional<found_signal> signal;  // design §3.14; payloads view prev's output
  if (action && !options_.signals.empty())
    signal = find_output_signal(history_.prev()->output, options_.signals);
  if (signal && signal->kind == signal_kind::error) return fail_by_signal(st, signal->payload);
  if (action) session_.leave(request_.kind, loop_->loop(), *st.config, *action, signal);
  move_on(st, signal, guarded ? route_outcome(*guarded) : resilient_next(st, ctx, action));
}

// Design §6.6, before the ordinary routes: the circuit, then `retry:`/`catch:` (waiting at
// the next step, after the boundary); then `max_edge_revisits` on the route chosen.
LITTLE_LOOPS_INLINE route_outcome executor_core::resilient_next(const compiled_state& st, interpolation_context& ctx,
                                                   const action_result* action) {
  const auto d =
      decide_resilience(resilience_, *loop_, current_, action, result_eval_.verdict, options_);
  if (d && emits_events_)
    for (const resilience_event* e : d->reported())
      if (e) emit(stamped(*e, wall(), st.name, d->target, d->error_class));
  auto routed = d ? resilience_route(*d, *loop_, route_reason_) : std::nullopt;
  auto next = routed ? std::move(*routed) : choose_next(st, ctx);
  auto cycle = next ? resilience_.take_edge(*loop_, current_, *next) : std::nullopt;
  if (!cycle) return next;
  if (emits_events_) emit(stamped(cycle->event, wall(), st.name, cycle->target));
  return unexpected(route_failure{cycle->error});
}

// Reports the completed action and fills its capture. Returns false when the action ended
// the run: cancelled (re-run on resume), or the loop deadline expired inside it.
LITTLE_LOOPS_INLINE bool executor_core::finish_action(const compiled_state& st, const action_result& a) {
  if (emits_events_)
    emit(action_complete_event{wall(), st.name, a.exit_code,
                               static_cast<std::int64_t>(a.duration.count()), a.output,
                               is_prompt_kind(request_.kind), a.timed_out, a.cancelled, a.signal,
                               a.truncated, a.output_limit, a.stderr_output});
  if (a.cancelled || (a.abnormal() && stop_.stop_requested())) return end(termination::cancelled);
  if (a.timed_out && deadline_ && clock_->now() >= *deadline_) return end(termination::timeout);
  if (st.capture) {
    captured_record& rec = captured_[*st.capture];
    rec.output.assign(strip_trailing_newlines(a.output));
    rec.stderr_output.assign(a.stderr_output);
    rec.exit_code = a.exit_code;
    rec.duration_ms = static_cast<std::int64_t>(a.duration.count());
    rec.verdict.clear();
    record_failure(rec, a);
  }
  return true;
}

// Decides the verdict into result_eval_ and reports it. Returns whether it counts as an
// evaluation (what `${prev.evaluation}` reads). A `next:` state is never evaluated (seed 002
// and the original at every version: the action runs, then `next`; the verdict only picks
// on_error); validation warns about an `evaluate:` there.
LITTLE_LOOPS_INLINE bool executor_core::decide_verdict(const compiled_state& st, interpolation_context& ctx,
                                          const action_result* action) {
  if (!action && st.action) return report_verdict(st, !st.next, false);  // set by execute()
  // The verdicts no evaluator decides (abnormal action, nothing to evaluate) have their rule
  // in evaluators.hpp; they hold whatever Evaluator the host gave.
  const bool own = !st.next && judges_own_failure(st.evaluator, st.kind);
  if (has_fixed_verdict(action, st.evaluator && !st.next, own)) {
    result_eval_ = fixed_verdict(action, loop_->dialect());
    return report_verdict(st, action && !st.next, false);
  }
  if (!st.next) return ask_evaluator(st, ctx, action);
  // A `next:` state: the exit code decides, silently (seed 002).
  result_eval_.verdict.assign(exit_code_verdict(action->exit_code, loop_->dialect()));
  result_eval_.details = evaluation_details{};
  return false;
}

// Runs the state's evaluator (its `evaluate:`, or the default for its action kind).
LITTLE_LOOPS_INLINE bool executor_core::ask_evaluator(const compiled_state& st, interpolation_context& ctx,
                                         const action_result* action) {
  evaluation_request req;
  req.state = st.name;
  req.config = st.evaluator ? &*st.config->evaluate : nullptr;
  req.compiled = st.evaluator ? &*st.evaluator : nullptr;
  req.kind = st.kind;
  req.action = action;
  req.context = &ctx;
  req.llm = &loop_->loop().llm;
  req.dialect = loop_->dialect();
  if (deadline_)
    req.time_left = std::max(std::chrono::milliseconds(0),
                             std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - clock_->now()));
  req.convergence_memory = &convergence_.slot(current_);
  expected<evaluation_result, error> ev = call_evaluator(req);
  // A library evaluator's exit-code verdict is decided at once: no new clock reading.
  if (!(instant_verdicts_ && instant_verdict<default_evaluator>(req))) stamp();
  convergence_.note(current_);
  if (!ev) {
    report_error(st, "evaluator", ev.error().message);
    result_eval_ = error_result(ev.error().message);
    return report_verdict(st, true, false);
  }
  result_eval_.verdict = std::move(ev->verdict);
  result_eval_.details = std::move(ev->details);
  return report_verdict(st, true, !st.evaluator);
}

// Emits the evaluate event when `evaluated` (the default evaluator's is {type, verdict}).
LITTLE_LOOPS_INLINE bool executor_core::report_verdict(const compiled_state& st, bool evaluated,
                                          bool default_evaluation) {
  if (emits_events_ && evaluated && recording())
    emit(evaluate_event{wall(), st.name, st.evaluator_name, result_eval_.verdict,
                        &result_eval_.details.view(event_details_), !default_evaluation});
  return evaluated;
}

// Routes the verdict (design §3.3). Targets see `result` (this evaluation) and, as `prev`,
// the state before this one. A target that cannot be interpolated makes the verdict `error`
// (design §3.4), which routes like any verdict; only an unrouted one ends the run.
LITTLE_LOOPS_INLINE route_outcome executor_core::choose_next(const compiled_state& st, interpolation_context& ctx) {
  ctx.prev = history_.route_prev(st);
  ctx.last_evaluation = history_.route_last_evaluation(st);
  ctx.result = &result_eval_;
  const prev_record& rec = *history_.prev();
  route_query q{.loop = loop_.get(),
                .current = current_,
                .verdict = result_eval_.verdict,
                .failed_action = (rec.ran_action && rec.exit_code != 0) || result_eval_.verdict == "error",
                .unrunnable = st.action.has_value() && !rec.ran_action,
                .details = &rec.details,
                .context = &ctx,
                .text = &target_text_,
                .retry_code = retry_code_};
  route_reason_ = {};
  if (is_abstention_verdict(q.verdict)) {
    if (auto held = counters_.abstention_route(q, route_reason_)) return std::move(*held);
  } else {
    counters_.judged(current_);
  }
  auto next = route(q);
  if (next || !next.error().unrenderable || q.verdict == "error") return next;
  report_error(st, "interpolation", next.error().error.message);
  result_eval_ = error_result(next.error().error.message);
  history_.amend_verdict(result_eval_);
  if (st.capture && rec.ran_action) captured_[*st.capture].verdict = result_eval_.verdict;
  q.verdict = result_eval_.verdict;
  q.failed_action = true;
  return route(q);
}

// FATAL_ERROR: ends the run before routing.
LITTLE_LOOPS_INLINE void executor_core::fail_by_signal(const compiled_state& st, std::string_view signal_payload) {
  const std::string payload(signal_payload);
  report_error(st, "signal", payload);
  result_.signal = signal_kind::error;
  result_.signal_payload = payload;
  finish(termination::error, little_loops::error{errc::action_failed, payload, st.name});
}

// Applies the route and the output signal: a handoff pauses (resume goes where routing
// leads, or re-runs an unroutable state); LOOP_STOP stops after routing and is honoured
// even without a route (the original checks its stop request before reporting "No valid
// transition"); otherwise an unrouted verdict ends the run as `error`, even when the loop
// timeout passed meanwhile. Then the loop's `backoff` sleep.
LITTLE_LOOPS_INLINE void executor_core::move_on(const compiled_state& st, const std::optional<found_signal>& signal,
                                   route_outcome next) {
  if (signal && signal->kind == signal_kind::handoff) {
    const std::string payload(signal->payload);
    if (emits_events_) emit(handoff_event{wall(), st.name, iteration_, payload});
    result_.signal = signal_kind::handoff;
    result_.signal_payload = payload;
    resume_state_ = next ? *next : current_;
    return finish(termination::handoff);
  }
  const bool stop = signal && signal->kind == signal_kind::stop;
  if (!next && !stop) {
    report_error(st, "route", next.error().error.message);
    return finish(termination::error, std::move(next.error().error));
  }
  if (next) {
    if (emits_events_) emit(route_event{wall(), st.name, loop_->state(*next).name, route_reason_});
    current_ = *next;
  }
  if (stop) {
    result_.signal = signal_kind::stop;
    result_.signal_payload.assign(signal->payload);
    return finish(termination::cancelled);
  }
  if (const auto backoff = backoff_after(st, loop_->loop()); backoff > 0)
    clock_->sleep_for(seconds_to_ns(backoff), stop_.get_token());
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

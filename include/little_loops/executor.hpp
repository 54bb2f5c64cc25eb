// little_loops — fsm_executor: runs a compiled loop (run / step / stop / snapshot / resume)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/concepts.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/host_calls.hpp>
#include <little_loops/detail/host_requests.hpp>
#include <little_loops/detail/failure_type.hpp>
#include <little_loops/detail/guard_steps.hpp>
#include <little_loops/detail/output_signal_scan.hpp>
#include <little_loops/detail/plugin_states.hpp>
#include <little_loops/detail/resilience_runtime.hpp>
#include <little_loops/detail/retry_counters.hpp>
#include <little_loops/detail/routing.hpp>
#include <little_loops/detail/run_history.hpp>
#include <little_loops/detail/subloop_frames.hpp>
#include <little_loops/detail/text_transfer.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/events.hpp>
#include <little_loops/execution_result.hpp>
#include <little_loops/executor_clock.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/output_signal.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/snapshot.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

// ---------------------------------------------------------------------------------------------
// The executor

/// @brief Runs a compiled loop: actions through `Runner`, verdicts through `Eval`, events to
/// `Sink`.
///
/// Build it with make_executor() (or `create`), which validates and compiles the loop once;
/// then `run()` to completion, or `step()` one state at a time. `request_stop()` (or a stop
/// token given to `run`) stops at the next state boundary and is passed to the runner.
/// `snapshot()` captures the run at a boundary; `resume()` continues one.
///
/// Per step the executor renders the state's compiled action template into a reused buffer,
/// calls the runner and the evaluator, and follows a precomputed route: no parsing, no map
/// lookups by name for static targets, no heap allocation of its own in steady state.
///
/// @tparam Runner an ActionRunner (may be an lvalue reference type to borrow one)
/// @tparam Eval an Evaluator (default: default_evaluator, no LLM judge)
/// @tparam Sink an EventSink (default: null_event_sink, which costs nothing)
template <ActionRunner Runner, Evaluator Eval = default_evaluator, EventSink Sink = null_event_sink>
class fsm_executor : private detail::subloop_frames<fsm_executor<Runner, Eval, Sink>>,
                     private detail::plugin_states<fsm_executor<Runner, Eval, Sink>>,
                     private detail::guard_steps<fsm_executor<Runner, Eval, Sink>> {
  static constexpr bool emits_events =
      !std::is_same_v<std::remove_cvref_t<Sink>, null_event_sink>;
  friend class detail::subloop_frames<fsm_executor>;
  friend class detail::plugin_states<fsm_executor>;
  friend class detail::guard_steps<fsm_executor>;

 public:
  using runner_type = Runner;
  using evaluator_type = Eval;
  using sink_type = Sink;

  /// Build an executor over an already compiled loop (cheap; shares the compiled loop).
  fsm_executor(std::shared_ptr<const compiled_loop> loop, Runner runner, Eval eval = Eval{},
               Sink sink = Sink{}, executor_options options = {})
      : loop_(std::move(loop)),
        runner_(std::forward<Runner>(runner)),
        eval_(std::forward<Eval>(eval)),
        sink_(std::forward<Sink>(sink)),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : &default_executor_clock()) {
    reset();
  }

  /// Validate and compile `loop`, then build an executor.
  static expected<fsm_executor, little_loops::error> create(const fsm_loop& loop, Runner runner,
                                                            Eval eval = Eval{}, Sink sink = Sink{},
                                                            executor_options options = {}) {
    auto compiled = compiled_loop::compile(loop);
    if (!compiled) return unexpected(compiled.error());
    return fsm_executor(std::move(*compiled), std::forward<Runner>(runner),
                        std::forward<Eval>(eval), std::forward<Sink>(sink), std::move(options));
  }

  /// @brief Run until the loop ends (terminal, limit, timeout, stop, error or handoff).
  const execution_result& run() {
    while (step()) {}
    return result_;
  }

  /// Run, also stopping when `token` is requested.
  const execution_result& run(std::stop_token token) {
    std::stop_callback forward(token, [this]() noexcept { stop_.request_stop(); });
    return run();
  }

  /// @brief Advance by one state execution (or one maintain restart, or the final check),
  /// in the running loop: the top one, or the child a sub-loop state runs.
  /// @return true while the run goes on; false once finished (see result()).
  bool step() {
    advance();
    return !finished();
  }

  /// Ask the run to stop at the next state boundary; the running action gets the stop token.
  void request_stop() noexcept { stop_.request_stop(); }
  /// The executor's stop token (given to the runner in every request).
  [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_.get_token(); }

  /// True once the run ended.
  [[nodiscard]] bool finished() const noexcept { return phase_ == run_phase::finished; }
  /// The outcome (meaningful once finished()).
  [[nodiscard]] const execution_result& result() const noexcept { return result_; }
  /// The state that runs next (or the final state once finished).
  [[nodiscard]] std::string_view current_state() const noexcept {
    return loop_->state(current_).name;
  }
  /// State executions so far.
  [[nodiscard]] std::int64_t iteration() const noexcept { return iteration_; }
  /// `captured.*` so far.
  [[nodiscard]] const captured_map& captured() const noexcept { return captured_; }
  /// `prev` (null before the first state ran).
  [[nodiscard]] const prev_record* prev() const noexcept { return history_.prev(); }
  /// The compiled loop.
  [[nodiscard]] const compiled_loop& loop() const noexcept { return *loop_; }
  /// The runner, evaluator and sink.
  [[nodiscard]] std::remove_reference_t<Runner>& runner() noexcept { return runner_; }
  [[nodiscard]] std::remove_reference_t<Eval>& evaluator() noexcept { return eval_; }
  [[nodiscard]] std::remove_reference_t<Sink>& sink() noexcept { return sink_; }

  /// @brief The run's state at the current boundary: resuming it continues with
  /// current_state() and never re-runs a completed action.
  [[nodiscard]] little_loops::snapshot snapshot() const {
    // Its own storage, not snapshot_view()'s: const callers may run at once.
    std::vector<std::pair<std::string_view, double>> convergence;
    json counters;
    little_loops::snapshot s = this->running_view(convergence, counters).materialize();
    s.counters = std::move(counters);
    if (!this->frames_.empty()) this->stack_into(s);  // the top loop's, the frames below it
    return s;
  }

  /// @brief snapshot() by reference to the executor's state, without copying it (what a
  /// journal writes at every boundary: `loop_journal::save(record, ex.snapshot_view())`).
  /// Valid until the executor next changes (step(), run(), resume(), reset()) or the next
  /// snapshot_view() call; unlike snapshot(), not to be called from two threads at once.
  [[nodiscard]] little_loops::snapshot_view snapshot_view() const {
    if (!this->frames_.empty()) return this->stack_view();  // inside a child: copies
    little_loops::snapshot_view v = this->running_view(convergence_view_, counters_view_);
    if (!counters_view_.is_null()) v.counters = &counters_view_;
    return v;
  }

  /// @brief Restore a snapshot; the next step()/run() continues from it (emitting
  /// `loop_resume` instead of `loop_start`).
  /// @return `errc::snapshot_mismatch` when the snapshot belongs to another loop definition
  /// (digest or name differ) or names an unknown state; the executor is then unchanged. A
  /// snapshot taken inside sub-loops (`frames`) reloads each child through
  /// executor_options::child_loops and continues in the innermost; a child that changed is
  /// errc::snapshot_mismatch naming its frame (the executor is then reset).
  expected<void, little_loops::error> resume(const little_loops::snapshot& s) {
    this->unwind_frames();
    const auto at = detail::resume_state(*loop_, s);
    if (!at) return unexpected(at.error());
    detail::convergence_memory convergence;
    if (std::string_view unknown; !convergence.restore(*loop_, s, unknown))
      return unexpected(little_loops::error{
          errc::snapshot_mismatch,
          fmt::format("convergence memory of unknown state \"{}\"", unknown),
          "convergence." + std::string(unknown)});
    reset();
    this->restore_frame(s, *at, std::move(convergence));
    if (!s.frames.is_null()) {
      if (auto children = this->resume_frames(s.frames); !children) {
        reset();
        return unexpected(std::move(children.error()));
      }
    }
    phase_ = run_phase::resumed;
    return {};
  }

  /// Forget the run: the next step() starts again from the initial state.
  void reset() {
    this->unwind_frames();
    this->loop_id_ = options_.loop_id;
    const auto& timeout = loop_->loop().timeout;
    this->start_frame(loop_->loop().context,
                timeout ? std::optional(static_cast<std::int64_t>(*timeout * 1000.0)) : std::nullopt);
    phase_ = run_phase::fresh;
    result_ = execution_result{};
    if (stop_.stop_requested()) stop_ = std::stop_source{};
    request_ = action_request{};
    request_.stop = stop_.get_token();
  }

 private:
  // Where the run is: before its first step (`fresh`, or `resumed` from a snapshot, which
  // emits loop_resume instead of loop_start), between steps, or ended.
  enum class run_phase : unsigned char { fresh, resumed, running, finished };

  // One step of step(); returns false when the step ended its loop.
  bool advance() {
    if (phase_ == run_phase::finished) return false;
    stamp();
    if (phase_ != run_phase::running) begin();
    if (stop_.stop_requested()) return end(termination::cancelled);
    const fsm_loop& def = loop_->loop();
    const compiled_state& st = loop_->state(current_);
    // The loop timeout before the terminal, as in seed 002 (a terminal reached after the
    // deadline ends as `timeout`, final state the terminal); design §3.5 reverses only the
    // cap: a terminal reached on the last allowed step ends as `terminal`. A maintain
    // restart is an iteration, so it obeys the cap.
    if (st.terminal && this->timeout_ms_) {
      now_ = clock_->now();
      if (past_timeout()) return end(termination::timeout);
    }
    if (st.terminal && !(def.maintain && iteration_ >= def.max_iterations))
      return end_or_restart(st);
    if (iteration_ >= def.max_iterations &&
        !enter_summary(loop_->on_max_iterations(), def.max_steps_spelling ? "on_max_steps" : "on_max_iterations"))
      return false;
    now_ = clock_->now();
    if (past_timeout()) return end(termination::timeout);
    if (loop_->counts_retries() && redirect_exhausted()) return !finished();
    if (const double wait = resilience_.take_pending_wait(); wait > 0)  // a retry's (§6.6)
      clock_->sleep_for(detail::seconds_to_ns(wait), stop_.get_token());
    execute(loop_->state(current_));
    return !finished();
  }

  // ---- time ----
  // Events carry the wall time read as a step starts and after each host call that can take
  // time (the runner, an evaluator): events of one phase share a reading.
  event_time wall() const noexcept { return event_ts_; }
  void stamp() noexcept {
    if (recording()) event_ts_ = clock_->wall_now();
  }
  bool listening() const noexcept { return emits_events && detail::sink_listens(sink_); }
  // Whether events are built: for the sink, or for a sub-loop state's `capture:` of its child.
  bool recording() const noexcept { return listening() || (emits_events && !this->frames_.empty()); }
  std::int64_t elapsed_ms() const noexcept {
    return elapsed_offset_ms_ +
           std::chrono::duration_cast<std::chrono::milliseconds>(now_ - start_).count();
  }
  std::int64_t elapsed_ms_now() const noexcept {
    return elapsed_offset_ms_ +
           std::chrono::duration_cast<std::chrono::milliseconds>(clock_->now() - start_).count();
  }
  // The loop `timeout` has passed (as of the last clock reading, now_).
  bool past_timeout() const noexcept {
    return this->timeout_ms_ && elapsed_ms() > *this->timeout_ms_;
  }

  template <class Event>
  void emit(Event&& ev) noexcept {
    ev.depth = static_cast<std::uint32_t>(this->frames_.size());
    if (!this->frames_.empty()) this->note_child_event(ev);
    if (listening()) sink_.on_event(loop_event{std::forward<Event>(ev)});
  }

  void begin() {
    const bool resumed = phase_ == run_phase::resumed;
    phase_ = run_phase::running;
    start_ = clock_->now();
    now_ = start_;
    if (started_at_.empty()) started_at_ = format_timestamp(clock_->wall_now());
    if (this->timeout_ms_)
      deadline_ = start_ + std::chrono::milliseconds(*this->timeout_ms_ - elapsed_offset_ms_);
    if constexpr (emits_events) {
      if (resumed)
        emit(loop_resume_event{wall(), loop_->loop().name, loop_->state(current_).name,
                               iteration_});
      else
        emit(loop_start_event{wall(), loop_->loop().name});
    }
  }

  // ---- boundaries: terminal states and the iteration cap ----

  // At a terminal state: a `maintain` loop restarts (until on_max_iterations ran), any other
  // loop ends. Returns whether the run goes on.
  bool end_or_restart(const compiled_state& st) {
    if (!loop_->loop().maintain || summary_executed_)
      return end(summary_executed_ ? termination::max_iterations : termination::terminal);
    if (const auto& cap = loop_->loop().max_passes; cap && counters_.passes >= *cap)
      return enter_summary(loop_->on_max_passes(), "on_max_iterations");
    auto target = detail::take_static(st, st.maintain_target, current_);
    if (!target) {  // `on_maintain` names no state
      report_error(st, "route", target.error().message);
      return end(termination::error, std::move(target.error()));
    }
    ++iteration_;  // a maintain restart counts as one iteration (design §3.16) and one pass
    ++counters_.passes;
    if constexpr (emits_events)
      emit(route_event{wall(), st.name, loop_->state(*target).name, "maintain"});
    current_ = *target;
    return true;
  }

  // A cap is reached (the step cap, or at a terminal the full-pass cap): run its handler
  // (`key`) once (design §3.5, §6.2), else end. Returns whether the run goes on.
  bool enter_summary(const std::optional<compiled_target>& summary, std::string_view key) {
    if (!summary || summary_executed_) return end(termination::max_iterations);
    summary_executed_ = true;
    if (summary->type != compiled_target::kind::state) {
      little_loops::error err{
          errc::unknown_state,
          fmt::format("{} names \"{}\", which is not a state", key, summary->source),
          summary->path};
      report_error(loop_->state(current_), "route", err.message);
      return end(termination::error, std::move(err));
    }
    if constexpr (emits_events)
      emit(max_iterations_event{wall(), loop_->state(summary->index).name, iteration_});
    current_ = summary->index;
    if (loop_->state(current_).terminal) return end(termination::max_iterations);
    return true;
  }

  // `max_retries` (design §6.3): an exhausted state is not run; the run goes to
  // `on_retry_exhausted` without a step. True when it redirected.
  bool redirect_exhausted() {
    const compiled_state& st = loop_->state(current_);
    auto to = counters_.redirect(*loop_, current_);
    if (!to) return false;
    if (!*to) {
      report_error(st, "route", to->error().message);
      return !end(termination::error, std::move(to->error()));
    }
    if constexpr (emits_events)
      emit(route_event{wall(), st.name, loop_->state(**to).name, "retry_exhausted"});
    current_ = **to;
    return true;
  }

  // ---- one state execution ----


  void report_error(const compiled_state& st, std::string_view kind, std::string_view message) {
    if constexpr (emits_events) emit(error_event{wall(), st.name, kind, message});
  }

  // The host's runner and evaluator: an exception from either is the `error` verdict with
  // what it said (design §3.4), never an exception out of step().
  expected<action_result, error> call_runner(const action_request& req) {
    return detail::call_host<action_result>([&] { return runner_.run(this->in_working_dir(req)); },
                                            errc::action_failed, "the action runner");
  }

  expected<evaluation_result, error> call_evaluator(const evaluation_request& req) {
    if (req.config && is_stall_evaluator(req.config->type))  // design §6.6: judged here
      return detail::judge_stall(resilience_.stalls, req, deadline_, stop_.get_token(),
                                 [this](const action_request& r) { return call_runner(r); });
    return detail::call_host<evaluation_result>([&] { return eval_.evaluate(req); },
                                                errc::evaluation_failed, "the evaluator");
  }

  // Executes one (non-terminal) state: renders and runs its action, then conclude(). The
  // runner's result stays where the runner returned it: it is not moved.
  void execute(const compiled_state& st) {
    ++iteration_;
    if constexpr (emits_events) emit(state_enter_event{wall(), st.name, iteration_});
    interpolation_context ctx = this->running_context(st);
    if (this->visit_state(st, ctx)) return;  // the throttle's visit; a learning state
    if (st.config->loop) return this->call_subloop(st, ctx);
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
    auto sent = detail::prepare_host_request(req, loop_->loop(), *st.config, session_, text, action_text_, ctx);
    if (!sent) return conclude_unrunnable(st, ctx, "interpolation", std::move(sent.error()));
    if constexpr (emits_events)
      emit(action_start_event{wall(), st.name, *sent, detail::is_prompt_kind(req.kind)});
    req.state = st.name;
    req.text = *sent;
    req.timeout = st.timeout ? st.timeout : options_.default_action_timeout;
    req.deadline = deadline_;
    this->enter_guards(st);  // design §6.3
    expected<action_result, error> res = call_runner(req);
    stamp();
    req.text = req.params = {};  // they may view action_text_
    if (!res) return conclude_unrunnable(st, ctx, "action", std::move(res.error().message));
    conclude(st, ctx, &*res);
  }

  // The state's action could not be run at all (`kind`: why): its verdict is `error`.
  void conclude_unrunnable(const compiled_state& st, interpolation_context& ctx,
                           std::string_view kind, std::string message) {
    report_error(st, kind, message);
    result_eval_ = detail::error_result(std::move(message));
    conclude(st, ctx, nullptr);
  }

  // The rest of a state execution, one phase after the other: finish the action, decide the
  // verdict, record history, choose the next state, apply signals. `action` is the action's
  // result (null: no action ran; when the state has one, execute() set the `error` verdict).
  void conclude(const compiled_state& st, interpolation_context& ctx, action_result* action) {
    if (action && !finish_action(st, *action)) return;
    if (action && this->throttle_after_action(st, ctx)) return;  // it left or ended the run
    retry_code_ = !action ? -1 : action->timed_out ? 124 : action->signal != 0 ? -1 : action->exit_code;
    const bool evaluated = decide_verdict(st, ctx, action);
    if (st.capture && action) captured_[*st.capture].verdict = result_eval_.verdict;
    history_.record(st, action, result_eval_, evaluated);
    const std::optional<std::size_t> guarded = this->leave_guards(st, action);  // design §6.3
    std::optional<detail::found_signal> signal;  // design §3.14; payloads view prev's output
    if (action && !options_.signals.empty())
      signal = detail::find_output_signal(history_.prev()->output, options_.signals);
    if (signal && signal->kind == signal_kind::error) return fail_by_signal(st, signal->payload);
    if (action) session_.leave(request_.kind, loop_->loop(), *st.config, *action, signal);
    move_on(st, signal, guarded ? detail::route_outcome(*guarded) : resilient_next(st, ctx, action));
  }

  // Design §6.6, before the ordinary routes: the circuit, then `retry:`/`catch:` (waiting at
  // the next step, after the boundary); then `max_edge_revisits` on the route chosen.
  detail::route_outcome resilient_next(const compiled_state& st, interpolation_context& ctx,
                                       const action_result* action) {
    auto d = detail::decide_resilience(resilience_, *loop_, current_, action, result_eval_.verdict, options_);
    if constexpr (emits_events)
      for (const resilience_event* e : d.reported()) if (e) emit(detail::stamped(*e, wall(), st.name, d.target, d.error_class));
    auto routed = detail::resilience_route(d, *loop_, route_reason_);
    auto next = routed ? std::move(*routed) : choose_next(st, ctx);
    auto cycle = next ? resilience_.take_edge(*loop_, current_, *next) : std::nullopt;
    if (!cycle) return next;
    if constexpr (emits_events) emit(detail::stamped(cycle->event, wall(), st.name, cycle->target));
    return unexpected(detail::route_failure{cycle->error});
  }

  // Reports the completed action and fills its capture. Returns false when the action ended
  // the run: cancelled (re-run on resume), or the loop deadline expired inside it.
  bool finish_action(const compiled_state& st, const action_result& a) {
    if constexpr (emits_events)
      emit(action_complete_event{wall(), st.name, a.exit_code,
                                 static_cast<std::int64_t>(a.duration.count()), a.output,
                                 detail::is_prompt_kind(request_.kind), a.timed_out, a.cancelled,
                                 a.signal, a.truncated, a.output_limit, a.stderr_output});
    if (a.cancelled || (a.abnormal() && stop_.stop_requested())) return end(termination::cancelled);
    if (a.timed_out && deadline_ && clock_->now() >= *deadline_) return end(termination::timeout);
    if (st.capture) {
      captured_record& rec = captured_[*st.capture];
      rec.output.assign(detail::strip_trailing_newlines(a.output));
      rec.stderr_output.assign(a.stderr_output);
      rec.exit_code = a.exit_code;
      rec.duration_ms = static_cast<std::int64_t>(a.duration.count());
      rec.verdict.clear();
      detail::record_failure(rec, a);
    }
    return true;
  }

  // Decides the verdict into result_eval_ and reports it. Returns whether it counts as an
  // evaluation (what `${prev.evaluation}` reads). A `next:` state is never evaluated (seed 002
  // and the original at every version: the action runs, then `next`; the verdict only picks
  // on_error); validation warns about an `evaluate:` there.
  bool decide_verdict(const compiled_state& st, interpolation_context& ctx,
                      const action_result* action) {
    if (!action && st.action) return report_verdict(st, !st.next, false);  // set by execute()
    // The verdicts no evaluator decides (abnormal action, nothing to evaluate) have their rule
    // in evaluators.hpp; they hold whatever Evaluator the host gave.
    const bool own = !st.next && detail::judges_own_failure(st.evaluator, st.kind);
    if (detail::has_fixed_verdict(action, st.evaluator && !st.next, own)) {
      result_eval_ = detail::fixed_verdict(action, loop_->dialect());
      return report_verdict(st, action && !st.next, false);
    }
    if (!st.next) return ask_evaluator(st, ctx, action);
    // A `next:` state: the exit code decides, silently (seed 002).
    result_eval_.verdict.assign(exit_code_verdict(action->exit_code, loop_->dialect()));
    result_eval_.details = evaluation_details{};
    return false;
  }

  // Runs the state's evaluator (its `evaluate:`, or the default for its action kind).
  bool ask_evaluator(const compiled_state& st, interpolation_context& ctx,
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
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   *deadline_ - clock_->now()));
    req.convergence_memory = &convergence_.slot(current_);
    expected<evaluation_result, error> ev = call_evaluator(req);
    if (!detail::instant_verdict<std::remove_cvref_t<Eval>>(req)) stamp();
    convergence_.note(current_);
    if (!ev) {
      report_error(st, "evaluator", ev.error().message);
      result_eval_ = detail::error_result(ev.error().message);
      return report_verdict(st, true, false);
    }
    result_eval_.verdict = std::move(ev->verdict);
    result_eval_.details = std::move(ev->details);
    return report_verdict(st, true, !st.evaluator);
  }

  // Emits the evaluate event when `evaluated` (the default evaluator's is {type, verdict}).
  bool report_verdict(const compiled_state& st, bool evaluated, bool default_evaluation) {
    if constexpr (emits_events)
      if (evaluated && recording())
        emit(evaluate_event{wall(), st.name, st.evaluator_name, result_eval_.verdict,
                            &result_eval_.details.view(event_details_), !default_evaluation});
    return evaluated;
  }

  // Routes the verdict (design §3.3). Targets see `result` (this evaluation) and, as `prev`,
  // the state before this one. A target that cannot be interpolated makes the verdict `error`
  // (design §3.4), which routes like any verdict; only an unrouted one ends the run.
  detail::route_outcome choose_next(const compiled_state& st, interpolation_context& ctx) {
    ctx.prev = history_.route_prev(st);
    ctx.last_evaluation = history_.route_last_evaluation(st);
    ctx.result = &result_eval_;
    const prev_record& rec = *history_.prev();
    detail::route_query q{.loop = loop_.get(),
                          .current = current_,
                          .verdict = result_eval_.verdict,
                          .failed_action = (rec.ran_action && rec.exit_code != 0) ||
                                           result_eval_.verdict == "error",
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
    auto next = detail::route(q);
    if (next || !next.error().unrenderable || q.verdict == "error") return next;
    report_error(st, "interpolation", next.error().error.message);
    result_eval_ = detail::error_result(next.error().error.message);
    history_.amend_verdict(result_eval_);
    if (st.capture && rec.ran_action) captured_[*st.capture].verdict = result_eval_.verdict;
    q.verdict = result_eval_.verdict;
    q.failed_action = true;
    return detail::route(q);
  }

  // FATAL_ERROR: ends the run before routing.
  void fail_by_signal(const compiled_state& st, std::string_view signal_payload) {
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
  void move_on(const compiled_state& st, const std::optional<detail::found_signal>& signal,
               detail::route_outcome next) {
    if (signal && signal->kind == signal_kind::handoff) {
      const std::string payload(signal->payload);
      if constexpr (emits_events) emit(handoff_event{wall(), st.name, iteration_, payload});
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
      if constexpr (emits_events)
        emit(route_event{wall(), st.name, loop_->state(*next).name, route_reason_});
      current_ = *next;
    }
    if (stop) {
      result_.signal = signal_kind::stop;
      result_.signal_payload.assign(signal->payload);
      return finish(termination::cancelled);
    }
    if (const auto backoff = detail::backoff_after(st, loop_->loop()); backoff > 0)
      clock_->sleep_for(detail::seconds_to_ns(backoff), stop_.get_token());
  }

  // ---- the end ----

  // finish(), returning false (the run does not go on).
  bool end(termination how, std::optional<little_loops::error> err = std::nullopt) {
    finish(how, std::move(err));
    return false;
  }

  void finish(termination how, std::optional<little_loops::error> err = std::nullopt) {
    if (!this->frames_.empty()) return this->end_child(how, std::move(err));
    phase_ = run_phase::finished;
    const compiled_state& st = loop_->state(current_);
    if (!resume_state_ && how != termination::terminal) resume_state_ = current_;
    result_.final_state = st.name;
    result_.iterations = iteration_;
    result_.terminated_by = how;
    result_.failure = how == termination::terminal && st.failure;
    result_.duration_ms = elapsed_ms_now();
    result_.captured = captured_map(captured_);
    result_.error = std::move(err);
    result_.on_handoff = loop_->loop().on_handoff;
    if (how != termination::terminal && how != termination::error) result_.snapshot = snapshot();
    // A handoff's last event is handoff_detected (as in the original, which returns the
    // handoff result without finishing the run: the loop goes on after a resume).
    if constexpr (emits_events)
      if (how != termination::handoff)
        emit(loop_complete_event{wall(), result_.final_state, iteration_, to_string(how)});
  }

  std::shared_ptr<const compiled_loop> loop_;
  Runner runner_;
  Eval eval_;
  Sink sink_;
  executor_options options_;
  executor_clock* clock_;

  std::size_t current_ = 0;
  std::optional<std::size_t> resume_state_;  // where a snapshot goes on (handoff/finish)
  std::int64_t iteration_ = 0;
  run_phase phase_ = run_phase::fresh;
  bool summary_executed_ = false;  // the on_max_iterations state ran
  json context_;
  captured_map captured_;
  detail::run_history history_;
  detail::convergence_memory convergence_;
  mutable std::vector<std::pair<std::string_view, double>> convergence_view_;  // snapshot_view()
  mutable json counters_view_;  // snapshot_view()
  std::int64_t elapsed_offset_ms_ = 0;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point now_{};
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string started_at_;
  std::string action_text_;
  std::string target_text_;
  detail::retry_counters counters_;   // max_retries, cannot_judge holds, full passes
  detail::resilience_memory resilience_;  // retry attempts, edge counts, circuit, stalls
  detail::session_chain session_;        // the pending summary of session_mode: continue
  int retry_code_ = -1;               // the exit code retryable_exit_codes sees
  std::string_view route_reason_;     // the reason of the next route event
  action_request request_;  // reused per action (keeps one stop token)
  evaluation_result result_eval_;
  json event_details_;  // the evaluate event's compact details (evaluation_details::view)
  event_time event_ts_{};  // the wall time events carry (see wall())
  std::stop_source stop_;
  execution_result result_;
};

LITTLE_LOOPS_NAMESPACE_END

// The factories (make_executor) build the executor above.
#include <little_loops/make_executor.hpp>

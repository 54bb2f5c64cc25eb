// little_loops — executor_core: the executor's state and step machinery, compiled once
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor.hpp: fsm_executor<Runner, Eval, Sink> derives from this class, owns the
// runner, evaluator and sink, and implements the host hooks. Everything else, the run's
// state and every step, is here, in no template: a host TU compiles it once however many
// runners, evaluators and sinks it uses.
//
// The class is declared here and defined in the files named after each job, included at
// the end: the run (executor_core_run.hpp), one state execution (executor_core_steps.hpp),
// the sub-loop frames (subloop_frames.hpp), the throttle and learning states
// (plugin_states.hpp), and the test guards' steps (guard_steps.hpp).
//
// A sub-loop state runs its child in the same members: the running loop's run lives in them,
// and the loops waiting for a child are parked in `frames_` (detail/frame_members.hpp lists
// a frame's members once). Nothing here keeps a pointer to the executor itself, so an
// executor can be moved at any boundary.

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/frame_members.hpp>
#include <little_loops/detail/host_requests.hpp>
#include <little_loops/detail/output_signal_scan.hpp>
#include <little_loops/detail/prepatch_check.hpp>
#include <little_loops/detail/resilience_runtime.hpp>
#include <little_loops/detail/retry_counters.hpp>
#include <little_loops/detail/routing.hpp>
#include <little_loops/detail/run_history.hpp>
#include <little_loops/detail/tamper_guard.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/events.hpp>
#include <little_loops/execution_result.hpp>
#include <little_loops/executor_clock.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/learning.hpp>
#include <little_loops/output_signal.hpp>
#include <little_loops/results.hpp>
#include <little_loops/snapshot.hpp>

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
#include <variant>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// An event the core emits, by reference: its address and its alternative in loop_event. The
/// executor builds the loop_event for its sink (with_loop_event()), so a host whose executors
/// have no sink compiles no event building at all.
struct event_ref {
  const void* event = nullptr;
  std::size_t index = 0;
};

/// The index of `Event` among loop_event's alternatives.
template <class Event, class... A>
constexpr std::size_t alternative_index(const std::variant<A...>*) noexcept {
  constexpr bool same[] = {std::is_same_v<Event, A>...};
  std::size_t i = 0;
  while (!same[i]) ++i;
  return i;
}

/// `e` by reference, for the event hooks.
template <class Event>
event_ref event_ref_of(const Event& e) noexcept {
  return {&e, alternative_index<Event>(static_cast<const loop_event*>(nullptr))};
}

/// Calls `f` with the loop_event `e` refers to (a copy), built where its alternative is
/// known: `f` (the sink's on_event) is inlined with it. Only a TU whose executor has a sink
/// instantiates it.
template <class F>
void with_loop_event(event_ref e, F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (void)((e.index == I &&
            (f(loop_event(std::in_place_index<I>,
                          *static_cast<const std::variant_alternative_t<I, loop_event>*>(e.event))),
             true)) ||
           ...);
  }(std::make_index_sequence<std::variant_size_v<loop_event>>{});
}

/// What an executor's host is, as the core sees it (fixed by fsm_executor's parameters).
struct executor_host_traits {
  bool emits_events = false;     ///< the sink is not null_event_sink: events are built
  bool sink_asked = false;        ///< the sink says when it listens (sink_listens())
  bool instant_verdicts = false;  ///< the evaluator is a library one (evaluators.hpp)
};

/// The executor without its host: fsm_executor's state and steps. Its member functions are
/// fsm_executor's (see executor.hpp for what each does to a host).
class executor_core {
 protected:
  executor_core(std::shared_ptr<const compiled_loop> loop, executor_options options,
                executor_host_traits traits);
  // Defaulted where the definitions are (executor_core_run.hpp): a compiled-mode host then
  // compiles no copy, move or destruction of the members. Copy assignment is deleted: the
  // captures' and convergence's ordered maps cannot be copy-assigned.
  executor_core(const executor_core&);
  executor_core(executor_core&&);
  executor_core& operator=(const executor_core&) = delete;
  executor_core& operator=(executor_core&&) noexcept;
  ~executor_core();

  // ---- the run, as fsm_executor offers it ----
  const execution_result& run();
  const execution_result& run(std::stop_token token);
  bool step();
  void request_stop() noexcept { stop_.request_stop(); }
  [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_.get_token(); }
  [[nodiscard]] bool finished() const noexcept { return phase_ == run_phase::finished; }
  [[nodiscard]] const execution_result& result() const noexcept { return result_; }
  [[nodiscard]] std::string_view current_state() const noexcept { return loop_->state(current_).name; }
  [[nodiscard]] std::int64_t iteration() const noexcept { return iteration_; }
  [[nodiscard]] const captured_map& captured() const noexcept { return captured_; }
  [[nodiscard]] const prev_record* prev() const noexcept { return history_.prev(); }
  [[nodiscard]] const compiled_loop& loop() const noexcept { return *loop_; }
  [[nodiscard]] little_loops::snapshot snapshot() const;
  [[nodiscard]] little_loops::snapshot_view snapshot_view() const;
  expected<void, little_loops::error> resume(const little_loops::snapshot& s);
  void reset();

 private:
  // ---- the host: fsm_executor's runner, evaluator and sink ----
  // Run an action; evaluate a verdict; deliver an event to the sink; whether it listens now;
  // append an event's JSON line to a sub-loop state's capture. The event hooks are called
  // only when the sink is not null_event_sink.
  virtual expected<action_result, error> host_run(const action_request& req) = 0;
  virtual expected<evaluation_result, error> host_evaluate(const evaluation_request& req) = 0;
  virtual void host_deliver(event_ref e) noexcept = 0;
  virtual bool host_listens() const noexcept = 0;
  virtual void host_capture(std::string& out, event_ref e) = 0;

  // Where the run is: before its first step (`fresh`, or `resumed` from a snapshot, which
  // emits loop_resume instead of loop_start), between steps, or ended.
  enum class run_phase : unsigned char { fresh, resumed, running, finished };

  // The host's runner as a callable, for the probes that run commands (guards, stall).
  struct runner_call {
    executor_core* core;
    expected<action_result, error> operator()(const action_request& req) const;
  };

  // ---- the run (executor_core_run.hpp) ----
  bool advance();  // one step of step(); false when the step ended its loop
  // Events carry the wall time read as a step starts and after each host call that can take
  // time (the runner, an evaluator): events of one phase share a reading.
  event_time wall() const noexcept { return event_ts_; }
  void stamp() noexcept;
  bool listening() const noexcept { return emits_events_ && (!sink_asked_ || host_listens()); }
  // Whether events are built: for the sink, or for a sub-loop state's `capture:` of its child.
  bool recording() const noexcept { return listening() || (emits_events_ && !frames_.empty()); }
  std::int64_t elapsed_ms() const noexcept;
  std::int64_t elapsed_ms_now() const noexcept;
  bool past_timeout() const noexcept;  // as of the last clock reading, now_
  template <class Event>
  void emit(Event&& ev) noexcept;
  void begin();
  bool end_or_restart(const compiled_state& st);
  bool enter_summary(const std::optional<compiled_target>& summary, std::string_view key);
  bool redirect_exhausted();
  bool end(termination how, std::optional<little_loops::error> err = std::nullopt);
  void finish(termination how, std::optional<little_loops::error> err = std::nullopt);

  // ---- one state execution (executor_core_steps.hpp) ----
  void report_error(const compiled_state& st, std::string_view kind, std::string_view message);
  expected<action_result, error> call_runner(const action_request& req);
  expected<evaluation_result, error> call_evaluator(const evaluation_request& req);
  void execute(const compiled_state& st);
  void conclude_unrunnable(const compiled_state& st, interpolation_context& ctx,
                           std::string_view kind, std::string message);
  void conclude(const compiled_state& st, interpolation_context& ctx, action_result* action);
  route_outcome resilient_next(const compiled_state& st, interpolation_context& ctx,
                               const action_result* action);
  bool finish_action(const compiled_state& st, const action_result& a);
  bool decide_verdict(const compiled_state& st, interpolation_context& ctx, const action_result* action);
  bool ask_evaluator(const compiled_state& st, interpolation_context& ctx, const action_result* action);
  bool report_verdict(const compiled_state& st, bool evaluated, bool default_evaluation);
  route_outcome choose_next(const compiled_state& st, interpolation_context& ctx);
  void fail_by_signal(const compiled_state& st, std::string_view signal_payload);
  void move_on(const compiled_state& st, const std::optional<found_signal>& signal, route_outcome next);

  // ---- sub-loop frames (subloop_frames.hpp) ----
  // One entry of snapshot::frames, read back.
  struct frame_entry {
    little_loops::snapshot state;
    std::string id;
    std::optional<std::int64_t> timeout_ms;
    std::string worktree{};  // the branch of the worktree it runs in
  };
  template <class V, class Core, class Parked>
  static void frame_members(V& v, Core& ex, Parked& f);
  static const parked_frame& no_frame();
  void swap_frame(parked_frame& f) noexcept;
  const action_request& in_working_dir(const action_request& req);
  void start_frame(json context, std::optional<std::int64_t> timeout_ms);
  void restore_frame(const little_loops::snapshot& s, std::size_t at, convergence_memory convergence);
  void unwind_frames() noexcept;
  void detach_worktrees(bool with_events) noexcept;
  void call_subloop(const compiled_state& st, interpolation_context& ctx);
  void return_to_parent(termination how, std::optional<error> err);
  void finish_stack(termination how, std::optional<error> err);
  little_loops::snapshot_view running_view(
      std::vector<std::pair<std::string_view, double>>& convergence_storage, json& counters) const;
  interpolation_context running_context(const compiled_state& st) const noexcept;
  void end_child(termination how, std::optional<error> err);
  void stack_into(little_loops::snapshot& s) const;
  little_loops::snapshot_view stack_view() const;
  expected<void, error> resume_frames(const json& frames);
  void note_child_event(event_ref e) noexcept;
  static expected<frame_entry, error> read_frame(const json& j, const std::string& path);
  little_loops::snapshot parked_snapshot(const parked_frame& f) const;
  static json frame_json(const little_loops::snapshot& s, const std::string& id,
                         std::optional<std::int64_t> timeout_ms);
  void fail_call(const compiled_state& st, interpolation_context& ctx, std::string message);
  void fail_worktree(const compiled_state& st, interpolation_context& ctx, std::string message);
  void conclude_call(const compiled_state& st, interpolation_context& ctx);

  // ---- throttle and learning states (plugin_states.hpp) ----
  bool visit_state(const compiled_state& st, interpolation_context& ctx);
  bool throttle_after_action(const compiled_state& st, interpolation_context& ctx);
  bool throttle_leave(const compiled_state& st, interpolation_context& ctx, int count);
  void learning_emit(const compiled_state& st, std::string_view name, std::string_view target,
                     std::string_view detail = {}, std::int64_t attempt = 0,
                     const std::vector<std::string>* targets = nullptr);
  void run_learning(const compiled_state& st, interpolation_context& ctx);
  expected<std::optional<std::string>, std::string> prove_target(
      const compiled_state& st, const interpolation_context& ctx, const std::string& target, int max_retries);
  expected<learning_status, std::string> lookup(const std::string& target);
  bool explore(const compiled_state& st, const interpolation_context& ctx, const std::string& target);
  void learning_verdict(const compiled_state& st, interpolation_context& ctx, evaluation_result r);

  // ---- test guards (guard_steps.hpp) ----
  void enter_guards(const compiled_state& st);
  std::optional<std::size_t> leave_guards(const compiled_state& st, const action_result* action);
  std::optional<std::size_t> guard_report(const guard_decision& d);
  guard_probes<runner_call> probes(const compiled_state& st);

  // ---- the host's choices ----
  std::shared_ptr<const compiled_loop> loop_;  // the running loop (a child's, inside one)
  executor_options options_;
  executor_clock* clock_;
  bool emits_events_ = false;     // executor_host_traits::emits_events
  bool sink_asked_ = false;       // executor_host_traits::sink_asked
  bool instant_verdicts_ = false;  // executor_host_traits::instant_verdicts

  // ---- the running loop's run (each is in frame_members(): a frame parks it) ----
  std::size_t current_ = 0;
  std::optional<std::size_t> resume_state_;  // where a snapshot goes on (handoff/finish)
  std::int64_t iteration_ = 0;
  run_phase phase_ = run_phase::fresh;
  bool summary_executed_ = false;  // the on_max_iterations state ran
  json context_;
  captured_map captured_;
  run_history history_;
  convergence_memory convergence_;
  std::int64_t elapsed_offset_ms_ = 0;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point now_{};
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string started_at_;
  retry_counters counters_;        // max_retries, cannot_judge holds, full passes
  resilience_memory resilience_;   // retry attempts, edge counts, circuit, stalls
  session_chain session_;          // the pending summary of session_mode: continue
  std::string loop_id_;            // the running loop's id (the referrer of its children)
  std::optional<std::int64_t> timeout_ms_;  // the running loop's time limit
  std::string working_dir_;  // where the running loop's actions run (a sub-loop's worktree)

  // ---- the loops waiting for a child ----
  std::vector<parked_frame> frames_;  // outermost first
  std::shared_ptr<const compiled_loop> retired_;  // the child that just ended (its calls unwind)

  // ---- reused per step ----
  std::string action_text_;
  std::string target_text_;
  int retry_code_ = -1;            // the exit code retryable_exit_codes sees
  std::string_view route_reason_;  // the reason of the next route event
  action_request request_;         // reused per action (keeps one stop token)
  action_request worktree_request_;  // in_working_dir()
  evaluation_result result_eval_;
  json event_details_;     // the evaluate event's compact details (evaluation_details::view)
  event_time event_ts_{};  // the wall time events carry (see wall())
  std::optional<tamper_snapshot> tamper_before_;  // the guarded test files on entry
  prepatch_memo memo_;  // the pre-patch verdicts of this run by (patch, base)

  // ---- what snapshot_view() points into ----
  mutable std::vector<std::pair<std::string_view, double>> convergence_view_;
  mutable json counters_view_;
  mutable little_loops::snapshot stack_snapshot_;  // stack_view()
  mutable std::vector<std::pair<std::string_view, double>> stack_convergence_;

  std::stop_source stop_;
  execution_result result_;
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// The definitions, by job.
#include <little_loops/detail/executor_core_run.hpp>
#include <little_loops/detail/executor_core_steps.hpp>
#include <little_loops/detail/subloop_frames.hpp>
#include <little_loops/detail/plugin_states.hpp>
#include <little_loops/detail/guard_steps.hpp>

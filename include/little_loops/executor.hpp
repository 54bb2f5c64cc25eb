// little_loops — fsm_executor: runs a compiled loop (run / step / stop / snapshot / resume)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/concepts.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/executor_core.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/events.hpp>
#include <little_loops/execution_result.hpp>
#include <little_loops/executor_clock.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/snapshot.hpp>

#include <concepts>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

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
/// Only the calls to the runner, the evaluator and the sink depend on the template
/// arguments; the rest of the executor is compiled once for every kind of executor. An
/// executor may be moved between steps (make_executor() returns one by value) and goes on
/// where it was; the moved-from one may only be assigned to or destroyed.
///
/// @tparam Runner an ActionRunner (may be an lvalue reference type to borrow one)
/// @tparam Eval an Evaluator (default: default_evaluator, no LLM judge)
/// @tparam Sink an EventSink (default: null_event_sink, which costs nothing)
template <ActionRunner Runner, Evaluator Eval = default_evaluator, EventSink Sink = null_event_sink>
class fsm_executor final : private detail::executor_core {
  using core = detail::executor_core;

 public:
  using runner_type = Runner;
  using evaluator_type = Eval;
  using sink_type = Sink;

  /// Build an executor over an already compiled loop (cheap; shares the compiled loop).
  fsm_executor(std::shared_ptr<const compiled_loop> loop, Runner runner, Eval eval = Eval{},
               Sink sink = Sink{}, executor_options options = {})
      : core(std::move(loop), std::move(options), traits()),
        runner_(std::forward<Runner>(runner)),
        eval_(std::forward<Eval>(eval)),
        sink_(std::forward<Sink>(sink)) {}

  /// Validate and compile `loop`, then build an executor.
  static expected<fsm_executor, little_loops::error> create(const fsm_loop& loop, Runner runner,
                                                            Eval eval = Eval{}, Sink sink = Sink{},
                                                            executor_options options = {}) {
    auto compiled = detail::compile_copy(loop);
    if (!compiled) return unexpected(compiled.error());
    return fsm_executor(std::move(*compiled), std::forward<Runner>(runner),
                        std::forward<Eval>(eval), std::forward<Sink>(sink), std::move(options));
  }

  /// @brief Run until the loop ends (terminal, limit, timeout, stop, error or handoff).
  /// `run(std::stop_token)` also stops when the token is requested.
  using core::run;

  /// @brief Advance by one state execution (or one maintain restart, or the final check),
  /// in the running loop: the top one, or the child a sub-loop state runs.
  /// @return true while the run goes on; false once finished (see result()).
  using core::step;

  /// Ask the run to stop at the next state boundary; the running action gets the stop token.
  using core::request_stop;
  /// The executor's stop token (given to the runner in every request).
  using core::stop_token;

  /// True once the run ended.
  using core::finished;
  /// The outcome (meaningful once finished()).
  using core::result;
  /// The state that runs next (or the final state once finished).
  using core::current_state;
  /// State executions so far.
  using core::iteration;
  /// `captured.*` so far.
  using core::captured;
  /// `prev` (null before the first state ran).
  using core::prev;
  /// The compiled loop.
  using core::loop;
  /// The runner, evaluator and sink.
  [[nodiscard]] std::remove_reference_t<Runner>& runner() noexcept { return runner_; }
  [[nodiscard]] std::remove_reference_t<Eval>& evaluator() noexcept { return eval_; }
  [[nodiscard]] std::remove_reference_t<Sink>& sink() noexcept { return sink_; }

  /// @brief The run's state at the current boundary: resuming it continues with
  /// current_state() and never re-runs a completed action.
  using core::snapshot;

  /// @brief snapshot() by reference to the executor's state, without copying it (what a
  /// journal writes at every boundary: `loop_journal::save(record, ex.snapshot_view())`).
  /// Valid until the executor next changes (step(), run(), resume(), reset()) or the next
  /// snapshot_view() call; unlike snapshot(), not to be called from two threads at once.
  using core::snapshot_view;

  /// @brief Restore a snapshot; the next step()/run() continues from it (emitting
  /// `loop_resume` instead of `loop_start`).
  /// @return `errc::snapshot_mismatch` when the snapshot belongs to another loop definition
  /// (digest or name differ) or names an unknown state; the executor is then unchanged. A
  /// snapshot taken inside sub-loops (`frames`) reloads each child through
  /// executor_options::child_loops and continues in the innermost; a child that changed is
  /// errc::snapshot_mismatch naming its frame (the executor is then reset).
  using core::resume;

  /// Forget the run: the next step() starts again from the initial state.
  using core::reset;

 private:
  // A sink with wants_events() is asked before each event (detail::sink_listens()); any
  // other listens always, without a call.
  static constexpr detail::executor_host_traits traits() noexcept {
    return {.emits_events = !std::is_same_v<std::remove_cvref_t<Sink>, null_event_sink>,
            .sink_asked = requires(const std::remove_reference_t<Sink>& s) {
              { s.wants_events() } noexcept -> std::convertible_to<bool>;
            },
            .instant_verdicts = detail::is_basic_evaluator<std::remove_cvref_t<Eval>>};
  }

  // The host hooks: the only code that depends on Runner, Eval and Sink. Events are built
  // here, for a sink that takes them (the core calls neither event hook for the null sink).
  expected<action_result, error> host_run(const action_request& req) override {
    return runner_.run(req);
  }
  expected<evaluation_result, error> host_evaluate(const evaluation_request& req) override {
    return eval_.evaluate(req);
  }
  void host_deliver(detail::event_ref e) noexcept override {
    if constexpr (traits().emits_events)
      detail::with_loop_event(e, [this](const loop_event& ev) noexcept { sink_.on_event(ev); });
  }
  bool host_listens() const noexcept override { return detail::sink_listens(sink_); }
  void host_capture(std::string& out, detail::event_ref e) override {
    if constexpr (traits().emits_events)
      detail::with_loop_event(e, [&out](const loop_event& ev) { append_json_line(out, ev); });
  }

  Runner runner_;
  Eval eval_;
  Sink sink_;
};

LITTLE_LOOPS_NAMESPACE_END

// The factories (make_executor) build the executor above.
#include <little_loops/make_executor.hpp>

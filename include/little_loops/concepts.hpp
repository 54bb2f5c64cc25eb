// little_loops — the executor's customisation points: ActionRunner, Evaluator, EventSink
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/events.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>

#include <concepts>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief A type that runs one state action for the executor.
///
/// The executor interpolates a state's action text and hands it to the runner together with
/// the action kind, the per-action timeout, the loop deadline and a stop token. The runner
/// is the host's code: it spawns a process, calls an agent, or replays scripted results.
///
/// @par Requirements
/// Given `R& r` and `const action_request& req`:
///  1. `r.run(req)` is well-formed and its result converts to
///     `expected<action_result, error>`.
///  2. A successful result describes what happened, including abnormal ends:
///     `timed_out` when the action hit `req.timeout` or `req.deadline`, `signal` when it was
///     killed by a signal, `cancelled` when it stopped because `req.stop` was requested. The
///     executor turns these into the verdict `error` (design §3.4).
///  3. An `error` result means the action could not be run at all; the executor turns it into
///     the verdict `error` with the message in the details. Exceptions are not part of the
///     protocol: a runner should not throw.
///  4. The views inside `req` are valid only during the call.
///
/// Not required: copyability, default construction, thread safety (the executor calls the
/// runner from one thread at a time), honouring `req.stop` (but long actions should).
///
/// @par Valid example
/// @code
/// struct echo_runner {
///   ll::expected<ll::action_result, ll::error> run(const ll::action_request& req) {
///     ll::action_result r;
///     r.output = std::string(req.text);
///     return r;
///   }
/// };
/// static_assert(ll::ActionRunner<echo_runner>);
/// @endcode
/// @par Invalid example
/// @code
/// struct no_run {};                        // no run() member
/// static_assert(!ll::ActionRunner<no_run>);
/// @endcode
/// @see scripted_runner (scripted_runner.hpp), posix_process_runner (runners/, opt-in)
template <class R>
concept ActionRunner = requires(R& runner, const action_request& request) {
  { runner.run(request) } -> std::convertible_to<expected<action_result, error>>;
};

/// @brief A type that turns a state's action result into a verdict.
///
/// @par Requirements
/// Given `E& e` and `const evaluation_request& req`:
///  1. `e.evaluate(req)` is well-formed and its result converts to
///     `expected<evaluation_result, error>`.
///  2. `req.config` is null when the state has no `evaluate:` block: the evaluator picks the
///     default (exit_code for shell actions, llm_structured for prompts, design §3.10).
///     Otherwise `req.compiled` is the library-compiled form of `*req.config`.
///  3. `req.action` is null when the state ran no action.
///  4. A verdict is any string; `details` should be a JSON object (its keys are reported in
///     the `evaluate` event). An `error` result becomes the verdict `error` with the message
///     in the details.
///  5. The pointers inside `req` are valid only during the call.
///
/// Not required: copyability, thread safety, determinism (LLM judges are not).
///
/// @par Valid example
/// @code
/// struct always_success {
///   ll::expected<ll::evaluation_result, ll::error> evaluate(const ll::evaluation_request&) {
///     return ll::evaluation_result{"success", ll::json::object()};
///   }
/// };
/// static_assert(ll::Evaluator<always_success>);
/// @endcode
/// @see default_evaluator, basic_evaluator (evaluators.hpp)
template <class E>
concept Evaluator = requires(E& eval, const evaluation_request& request) {
  { eval.evaluate(request) } -> std::convertible_to<expected<evaluation_result, error>>;
};

/// @brief A type that receives the executor's events.
///
/// @par Requirements
/// Given `S& s` and `const loop_event& ev`:
///  1. `s.on_event(ev)` is well-formed and declared `noexcept` (a failing sink must not abort
///     a run half-way through a state).
///  2. The string views inside `ev` are valid only during the call; copy what you keep
///     (`to_json(ev)` produces the seed-002 JSON).
///
/// Not required: a particular return type, copyability, thread safety.
/// Optional: `bool wants_events() const noexcept`; while it returns false the executor
/// neither reads the clock for events nor calls on_event (as with null_event_sink).
///
/// @par Valid example
/// @code
/// struct printing_sink {
///   void on_event(const ll::loop_event& ev) noexcept { std::puts(ll::to_json(ev).dump().c_str()); }
/// };
/// static_assert(ll::EventSink<printing_sink>);
/// @endcode
/// @par Invalid example
/// @code
/// struct throwing_sink { void on_event(const ll::loop_event&); };  // not noexcept
/// static_assert(!ll::EventSink<throwing_sink>);
/// @endcode
/// @see null_event_sink (costs nothing), recording_event_sink (keeps JSON copies)
template <class S>
concept EventSink = requires(S& sink, const loop_event& event) {
  { sink.on_event(event) } noexcept;
};

static_assert(EventSink<null_event_sink>);

LITTLE_LOOPS_NAMESPACE_END

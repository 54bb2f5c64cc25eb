// little_loops — make_executor: build an executor, with readable diagnostics for unmet concepts
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/concepts.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/executor.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/schema.hpp>

#include <memory>
#include <type_traits>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {
template <class T>
using stored_t = std::conditional_t<std::is_lvalue_reference_v<T>, T, std::remove_cvref_t<T>>;
}  // namespace detail

/// @brief Validate and compile `loop`, and build an executor over it.
///
/// Pass lvalues to borrow the runner/evaluator/sink (the executor stores references), rvalues
/// to move them in. Unmet concepts are reported by a static_assert naming the concept.
/// @return the executor, or the compile error (see compiled_loop::compile).
/// @code
/// ll::scripted_runner runner;
/// auto ex = ll::make_executor(loop, runner);          // borrows runner
/// if (!ex) return fail(ex.error());
/// const ll::execution_result& r = ex->run();
/// @endcode
template <class Runner, class Eval = default_evaluator, class Sink = null_event_sink>
auto make_executor(std::shared_ptr<const compiled_loop> loop, Runner&& runner, Eval&& eval = Eval{},
                   Sink&& sink = Sink{}, executor_options options = {}) {
  using R = detail::stored_t<Runner>;
  using E = detail::stored_t<Eval>;
  using S = detail::stored_t<Sink>;
  static_assert(ActionRunner<std::remove_reference_t<R>>,
                "little_loops: the runner does not model ActionRunner: it needs a member "
                "`run(const action_request&)` returning expected<action_result, error>");
  static_assert(Evaluator<std::remove_reference_t<E>>,
                "little_loops: the evaluator does not model Evaluator: it needs a member "
                "`evaluate(const evaluation_request&)` returning expected<evaluation_result, error>");
  static_assert(EventSink<std::remove_reference_t<S>>,
                "little_loops: the sink does not model EventSink: it needs a member "
                "`on_event(const loop_event&) noexcept`");
  if constexpr (ActionRunner<std::remove_reference_t<R>> && Evaluator<std::remove_reference_t<E>> &&
                EventSink<std::remove_reference_t<S>>) {
    using executor = fsm_executor<R, E, S>;
    return expected<executor, error>(executor(std::move(loop), std::forward<Runner>(runner),
                                              std::forward<Eval>(eval), std::forward<Sink>(sink),
                                              std::move(options)));
  }
}

/// @copydoc make_executor
template <class Runner, class Eval = default_evaluator, class Sink = null_event_sink>
auto make_executor(const fsm_loop& loop, Runner&& runner, Eval&& eval = Eval{}, Sink&& sink = Sink{},
                   executor_options options = {}) {
  using result_type = decltype(make_executor(std::shared_ptr<const compiled_loop>{},
                                             std::forward<Runner>(runner), std::forward<Eval>(eval),
                                             std::forward<Sink>(sink)));
  if constexpr (!std::is_void_v<result_type>) {
    auto compiled = detail::compile_copy(loop);
    if (!compiled) return result_type(unexpected(std::move(compiled.error())));
    return make_executor(std::move(*compiled), std::forward<Runner>(runner),
                         std::forward<Eval>(eval), std::forward<Sink>(sink), std::move(options));
  }
}

LITTLE_LOOPS_NAMESPACE_END

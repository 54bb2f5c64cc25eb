// little_loops — execution_result: how a run ended (termination, final state, error, snapshot)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/output_signal.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/snapshot.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Why a run ended (design §3.12).
enum class termination {
  terminal,        ///< a terminal state was reached (see execution_result::failure)
  max_iterations,  ///< the `max_iterations` cap (after `on_max_iterations`, if any)
  timeout,         ///< the loop `timeout` passed
  cancelled,       ///< a stop was requested (request_stop, stop token, `LOOP_STOP:`)
  error,           ///< an unrouted error, a bad route target, or `FATAL_ERROR:`
  handoff,         ///< `CONTEXT_HANDOFF:`: paused with a resumable snapshot
};

/// `"terminal"`, `"max_iterations"`, `"timeout"`, `"cancelled"`, `"error"`, `"handoff"`.
inline std::string_view to_string(termination t) noexcept {
  switch (t) {
    case termination::terminal: return "terminal";
    case termination::max_iterations: return "max_iterations";
    case termination::timeout: return "timeout";
    case termination::cancelled: return "cancelled";
    case termination::error: return "error";
    case termination::handoff: return "handoff";
  }
  return "unknown";
}

/// The outcome of a run (seed 002's ExecutionResult plus design §3.12–§3.14).
struct execution_result {
  std::string final_state;                 ///< the state the run ended in
  std::int64_t iterations = 0;             ///< state executions (maintain restarts count)
  termination terminated_by = termination::error;
  bool failure = false;                    ///< ended in a terminal marked `failure: true`
  std::int64_t duration_ms = 0;            ///< total run time, across resumes
  captured_map captured;                   ///< `captured.*` at the end
  std::optional<little_loops::error> error;  ///< why the run failed (terminated_by error)
  std::optional<signal_kind> signal;       ///< the output signal that ended the run, if any
  std::string signal_payload;              ///< its payload (handoff: the continuation)
  handoff_policy on_handoff = handoff_policy::pause;  ///< the loop's `on_handoff`
  /// Where to go on from: set for every ending except `terminal` and `error` (an error ends
  /// the run after its state ran, with nowhere to go: resuming would run that state again).
  std::optional<little_loops::snapshot> snapshot;

  /// True when the run reached a terminal state that is not marked `failure`.
  [[nodiscard]] bool succeeded() const noexcept {
    return terminated_by == termination::terminal && !failure;
  }
};

/// JSON of a result: `{final_state, iterations, terminated_by, failure, duration_ms, captured,
/// [error, error_code], [signal, continuation, on_handoff, handoff, continuation_prompt],
/// [snapshot]}`. `error` and `error_code` are present only when the run has an error (as the
/// seed's `to_dict()` omits an `error` that is None); a handoff also has the original's
/// `handoff: true` and `continuation_prompt`.
LITTLE_LOOPS_INLINE json to_json(const execution_result& r);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE json to_json(const execution_result& r) {
  json j = json::object();
  j["final_state"] = r.final_state;
  j["iterations"] = r.iterations;
  j["terminated_by"] = to_string(r.terminated_by);
  j["failure"] = r.failure;
  j["duration_ms"] = r.duration_ms;
  j["captured"] = detail::captured_to_json(r.captured);
  if (r.error) {
    j["error"] = r.error->message;
    j["error_code"] = error_id(r.error->code);
  }
  if (r.signal) {
    j["signal"] = to_string(*r.signal);
    if (*r.signal == signal_kind::handoff) {
      j["continuation"] = r.signal_payload;
      j["on_handoff"] = to_string(r.on_handoff);
      j["handoff"] = true;
      j["continuation_prompt"] = r.signal_payload;
    } else {
      j["signal_payload"] = r.signal_payload;
    }
  }
  if (r.snapshot) j["snapshot"] = to_json(*r.snapshot);
  return j;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

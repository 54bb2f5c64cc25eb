// little_loops — output signals: markers in an action's stdout that hand off, fail or stop a run
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// What an output signal does (design §3.14).
enum class signal_kind {
  handoff,  ///< pause: the run ends as `handoff` with the payload and a resumable snapshot
  error,    ///< the run ends as `error` with the payload as the message
  stop,     ///< the state finishes routing, then the run ends as `cancelled`
};

/// `"handoff"` / `"error"` / `"stop"`.
inline std::string_view to_string(signal_kind k) noexcept {
  switch (k) {
    case signal_kind::handoff: return "handoff";
    case signal_kind::error: return "error";
    case signal_kind::stop: return "stop";
  }
  return "unknown";
}

/// A marker searched for in an action's stdout. The payload is the rest of the text after the
/// marker (leading whitespace, including newlines, skipped) up to the end of that line,
/// trimmed. With `payload_required` a marker without payload does not count.
struct output_signal {
  std::string marker;
  signal_kind kind = signal_kind::handoff;
  bool payload_required = true;
};

/// The default signals, checked in this order: `CONTEXT_HANDOFF:` (handoff), `FATAL_ERROR:`
/// (error), `LOOP_STOP:` (stop, payload optional).
LITTLE_LOOPS_INLINE std::vector<output_signal> default_output_signals();
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::vector<output_signal> default_output_signals() {
  return {output_signal{"CONTEXT_HANDOFF:", signal_kind::handoff, true},
          output_signal{"FATAL_ERROR:", signal_kind::error, true},
          output_signal{"LOOP_STOP:", signal_kind::stop, false}};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

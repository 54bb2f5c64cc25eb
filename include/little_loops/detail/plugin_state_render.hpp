// little_loops — what `show` and `validate --json` say about throttles and learning states
// SPDX-License-Identifier: MIT
#pragma once

// Part of render.hpp: render_preview() appends plugin_states_text(); render_plugin_states_json()
// (`validate --json`) is built from throttle_json().

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/throttle.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#  include <fmt/ranges.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <string>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// True when the throttle counts the actions of `state` (compiled_loop.hpp says the same).
inline bool throttles(const state_config& state, loop_dialect dialect) noexcept {
  const bool runs_action = state.action && !state.action->empty() && !state.terminal && !state.loop;
  return runs_action && (dialect == loop_dialect::current || state.throttle || state.on_throttle_hard);
}

LITTLE_LOOPS_INLINE json throttle_json(const state_config& state);
LITTLE_LOOPS_INLINE json learning_json(const learning_config& l);
LITTLE_LOOPS_INLINE std::string learning_text(const fsm_loop& loop);
LITTLE_LOOPS_INLINE std::string plugin_states_text(const fsm_loop& loop);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// `{normal_max, warn_max, hard_max[, on_throttle_hard][, exempt]}` of one state.
LITTLE_LOOPS_INLINE json throttle_json(const state_config& state) {
  const throttle_limits l = effective_throttle(state.throttle);
  json out = {{"normal_max", l.normal_max}, {"warn_max", l.warn_max}, {"hard_max", l.hard_max}};
  if (state.on_throttle_hard) out["on_throttle_hard"] = *state.on_throttle_hard;
  if (state.type == "learning") out["exempt"] = true;
  return out;
}

// `{targets | targets_csv, max_retries | max_retries_expr}` of a learning state.
LITTLE_LOOPS_INLINE json learning_json(const learning_config& l) {
  json out = json::object();
  if (l.targets_csv)
    out["targets_csv"] = *l.targets_csv;
  else
    out["targets"] = l.targets;
  if (l.max_retries_expr)
    out["max_retries_expr"] = *l.max_retries_expr;
  else
    out["max_retries"] = l.max_retries;
  return out;
}

// The `Learning:` lines of the preview, one per learning state.
LITTLE_LOOPS_INLINE std::string learning_text(const fsm_loop& loop) {
  std::string out;
  for (const auto& [name, state] : loop.states) {
    if (state.type != "learning" || !state.learning) continue;
    const learning_config& l = *state.learning;
    out += fmt::format("  {}: proves {} (explores each up to {} times with /ll:explore-api)\n", name,
                       l.targets_csv ? *l.targets_csv : fmt::format("{}", fmt::join(l.targets, ", ")),
                       l.max_retries_expr ? *l.max_retries_expr : std::to_string(l.max_retries));
  }
  return out.empty() ? out : "Learning states:\n" + out;
}

// The `Throttle:` lines of the preview: who is counted, and each state that writes its own.
LITTLE_LOOPS_INLINE std::string plugin_states_text(const fsm_loop& loop) {
  const loop_dialect dialect = dialect_of(loop);
  std::string out;
  bool any = false;
  for (const auto& [name, state] : loop.states) {
    if (!throttles(state, dialect)) continue;
    any = true;
    if (!state.throttle && !state.on_throttle_hard && state.type != "learning") continue;
    const throttle_limits l = effective_throttle(state.throttle);
    out += fmt::format("  {}: warn at {}, leave at {} \u2192 {}{}\n", name, l.warn_max, l.hard_max,
                       state.on_throttle_hard ? *state.on_throttle_hard : std::string("on_error"),
                       state.type == "learning" ? " (learning: never stopped)" : "");
  }
  if (!any) return {};
  const throttle_limits d;
  return fmt::format("Throttle ({}; actions per visit, default warn at {}, leave at {}, stop "
                     "beyond):\n",
                     dialect == loop_dialect::current ? "every state with an action"
                                                      : "the states that write it",
                     d.warn_max, d.hard_max) +
         out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

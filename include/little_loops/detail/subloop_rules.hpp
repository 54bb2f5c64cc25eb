// little_loops — the rules validate() checks on sub-loop states and terminal outputs
// SPDX-License-Identifier: MIT
#pragma once

// Part of validation.hpp (called from check_state). A sub-loop state (`loop:`) runs a child
// loop instead of an action; its verdict is the child's outcome (design §6.5). The rules
// follow the reference's structural rules; the child's own contents are checked where the
// child is found (compose.hpp, which has the resolver).

#include <little_loops/config.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/error.hpp>
#include <little_loops/schema.hpp>

#include <string>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// `subloop-action`, `subloop-terminal`, `with-without-loop` (also `worktree`), `with-and-passthrough`,
/// and `unused-state-field` for `evaluate` on a sub-loop state and `output` on a state
/// that is not terminal.
inline void check_subloop_fields(const state_config& state, const std::string& path,
                                 diagnostics& out) {
  if (state.loop && state.action)
    report(out, path, "subloop-action",
           "'loop' and 'action' are mutually exclusive — a sub-loop state cannot also have an "
           "action");
  if (state.loop && state.terminal)
    report(out, join_path(path, "loop"), "subloop-terminal",
           "a terminal state cannot run a sub-loop: the run ends when it enters a terminal state");
  if (!state.loop && !state.with.empty())
    report(out, join_path(path, "with"), "with-without-loop", "'with' is only valid when 'loop' is set");
  if (!state.loop && state.worktree)
    report(out, join_path(path, "worktree"), "with-without-loop",
           "'worktree' is only valid when 'loop' is set: a worktree is attached for a sub-loop");
  if (!state.loop && state.context_passthrough)
    report(out, join_path(path, "context_passthrough"), "with-without-loop",
           "'context_passthrough' is only valid when 'loop' is set");
  if (!state.with.empty() && state.context_passthrough)
    report(out, path, "with-and-passthrough",
           "'with' and 'context_passthrough' are mutually exclusive — use 'with' for explicit "
           "parameter bindings or 'context_passthrough' to pass the whole parent context");
  if (state.loop && state.evaluate)
    report(out, join_path(path, "evaluate"), "unused-state-field",
           "a sub-loop state's verdict is its child's outcome: 'evaluate' is never used",
           severity::warning);
  if (!state.output.empty() && !state.terminal)
    report(out, join_path(path, "output"), "unused-state-field",
           "'output' is read when a run ends on a terminal state: on this state it is never used",
           severity::warning);
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

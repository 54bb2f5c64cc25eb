// little_loops — the rules validate() checks on `throttle:` and learning states
// SPDX-License-Identifier: MIT
#pragma once

// Part of validation.hpp (called from check_state), after the reference's structural rules
// for the same keys. That `on_throttle_hard` names a state is checked with every other
// target (state_references, validation_rules.hpp); each threshold is ≥ 1 where it is read.

#include <little_loops/config.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/error.hpp>
#include <little_loops/schema.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// `throttle-order`: normal_max < warn_max and warn_max < hard_max, where both are written.
/// `unused-state-field`: a throttle on a state that runs no action (nothing is counted).
LITTLE_LOOPS_INLINE void check_throttle_fields(const state_config& state, const std::string& path,
                                               diagnostics& out);

/// A learning state (the reference's rules): `learning-targets` (neither `targets` nor
/// `targets_csv`), `learning-routes` (no `on_yes`; neither `on_blocked` nor `on_no`);
/// `learning-without-type` (`learning:` on a state that is not `type: learning`, which
/// would ignore it); `unused-state-field` for an action or evaluator a learning state never
/// runs.
LITTLE_LOOPS_INLINE void check_learning_fields(const state_config& state, const std::string& path,
                                               diagnostics& out);

/// The rules above, for one state.
LITTLE_LOOPS_INLINE void check_state_plugins(const state_config& state, const std::string& path,
                                             diagnostics& out);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE void check_throttle_fields(const state_config& state, const std::string& path,
                                               diagnostics& out) {
  if (const auto& t = state.throttle) {
    if (t->normal_max && t->warn_max && *t->normal_max >= *t->warn_max)
      report(out, join_path(path, "throttle"), "throttle-order",
             fmt::format("'throttle.normal_max' ({}) must be less than 'throttle.warn_max' ({})",
                         *t->normal_max, *t->warn_max));
    if (t->warn_max && t->hard_max && *t->warn_max >= *t->hard_max)
      report(out, join_path(path, "throttle"), "throttle-order",
             fmt::format("'throttle.warn_max' ({}) must be less than 'throttle.hard_max' ({})",
                         *t->warn_max, *t->hard_max));
  }
  const bool runs_action = state.action && !state.action->empty() && !state.terminal;
  if (!runs_action && (state.throttle || state.on_throttle_hard))
    report(out, join_path(path, state.throttle ? "throttle" : "on_throttle_hard"),
           "unused-state-field",
           "the throttle counts the state's actions, and this state runs none: it is never used",
           severity::warning);
}

LITTLE_LOOPS_INLINE void check_learning_fields(const state_config& state, const std::string& path,
                                               diagnostics& out) {
  if (state.learning && state.type != "learning")
    report(out, join_path(path, "learning"), "learning-without-type",
           "'learning' is read only on a state with 'type: learning'");
  if (state.type != "learning" || !state.learning) return;
  if (state.learning->targets.empty() && !state.learning->targets_csv)
    report(out, join_path(path, "learning.targets"), "learning-targets",
           "type=learning requires non-empty 'learning.targets' or 'learning.targets_csv'");
  if (state.on.count("yes") == 0)
    report(out, join_path(path, "on_yes"), "learning-routes",
           "type=learning requires 'on_yes' (target for all-proven)");
  if (state.on.count("blocked") == 0 && state.on.count("no") == 0)
    report(out, path, "learning-routes",
           "type=learning requires 'on_blocked' or 'on_no' (target for refuted / retries_exhausted)");
  const auto unused = [&](std::string_view key, bool present) {
    if (present)
      report(out, join_path(path, key), "unused-state-field",
             fmt::format("a learning state proves its targets and routes on the outcome: its '{}' "
                         "is never used", key),
             severity::warning);
  };
  unused("action", state.action.has_value());
  unused("evaluate", state.evaluate.has_value());
  unused("next", state.next.has_value());
  unused("loop", state.loop.has_value());
}

LITTLE_LOOPS_INLINE void check_state_plugins(const state_config& state, const std::string& path,
                                             diagnostics& out) {
  check_throttle_fields(state, path, out);
  check_learning_fields(state, path, out);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

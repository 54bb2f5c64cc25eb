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

#include <fmt/format.h>

#include <string>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// `throttle-order`: normal_max < warn_max and warn_max < hard_max, where both are written.
/// `unused-state-field`: a throttle on a state that runs no action (nothing is counted).
inline void check_throttle_fields(const state_config& state, const std::string& path,
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

/// The rules above, for one state.
inline void check_state_plugins(const state_config& state, const std::string& path,
                                diagnostics& out) {
  check_throttle_fields(state, path, out);
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

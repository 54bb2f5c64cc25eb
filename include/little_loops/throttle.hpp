// little_loops — the per-visit action throttle of a state (`throttle:`, `on_throttle_hard`)
// SPDX-License-Identifier: MIT
#pragma once

// A state's actions are counted within one visit: the count grows while the run stays in
// the state (a re-entry of the state it just ran continues the count) and starts again when
// the run enters another state. At `warn_max` the executor reports a `throttle_warn` event;
// at `hard_max` it leaves the state for `on_throttle_hard` (else `on_error`) without
// evaluating the action; past `hard_max` the run ends as an error (design §6.3, the
// reference's `_check_throttle`). schema.hpp holds the configuration in state_config; the
// reader is detail/state_plugin_fields.hpp; the executor applies it
// (detail/plugin_states.hpp).

#include <little_loops/config.hpp>

#include <optional>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// A state's `throttle:` as written: each threshold optional (an integer ≥ 1).
struct throttle_config {
  std::optional<int> normal_max;  ///< calls 1..normal_max are expected (informational)
  std::optional<int> warn_max;    ///< the call that reports `throttle_warn`
  std::optional<int> hard_max;    ///< the call that leaves the state; beyond it, a stop

  friend bool operator==(const throttle_config&, const throttle_config&) = default;
};

/// The thresholds a state runs with: its `throttle:` over the reference's defaults 3/8/12.
struct throttle_limits {
  int normal_max = 3;
  int warn_max = 8;
  int hard_max = 12;

  friend bool operator==(const throttle_limits&, const throttle_limits&) = default;
};

/// The limits of a state whose `throttle:` is `config` (none: the defaults).
constexpr throttle_limits effective_throttle(const std::optional<throttle_config>& config) noexcept {
  throttle_limits limits;
  if (!config) return limits;
  if (config->normal_max) limits.normal_max = *config->normal_max;
  if (config->warn_max) limits.warn_max = *config->warn_max;
  if (config->hard_max) limits.hard_max = *config->hard_max;
  return limits;
}

/// What the throttle does after an action of a state, besides the warning: nothing, leave
/// the state (`throttle_hard`), or end the run (`throttle_stop`).
enum class throttle_step { pass, hard, stop };

/// True when the `count`-th action of one visit reports `throttle_warn` (also for a `type:
/// learning` state, and also when the same action reaches `hard_max`).
constexpr bool throttle_warns(int count, const throttle_limits& limits) noexcept {
  return count == limits.warn_max;
}

/// The throttle's step after the `count`-th action of one visit. `exempt` (a `type:
/// learning` state) is never made to leave or stop.
constexpr throttle_step judge_throttle(int count, const throttle_limits& limits, bool exempt) noexcept {
  if (exempt || count < limits.hard_max) return throttle_step::pass;
  return count == limits.hard_max ? throttle_step::hard : throttle_step::stop;
}

LITTLE_LOOPS_NAMESPACE_END

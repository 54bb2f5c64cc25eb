// little_loops — convergence evaluator: target reached, progress, or stall
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <cmath>
#include <optional>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief Compares `current` with `target` and the `previous` value (seed 000).
///
/// - `|current - target| <= tolerance` → `target`, details `{current, target, delta: 0}`;
/// - no previous value → `progress`, details `{current, previous: null, target, delta: null}`;
/// - otherwise `progress` when the value moved in `direction` (minimize: down, maximize: up),
///   else `stall`; details `{current, previous, target, delta, direction}`.
LITTLE_LOOPS_INLINE evaluation_result evaluate_convergence(double current, std::optional<double> previous,
                                              double target, double tolerance = 0,
                                              convergence_direction direction =
                                                  convergence_direction::minimize);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE evaluation_result evaluate_convergence(double current, std::optional<double> previous,
                                              double target, double tolerance,
                                              convergence_direction direction) {
  evaluation_result r;
  r.details = json::object();
  if (std::fabs(current - target) <= tolerance) {
    r.verdict = "target";
    r.details["current"] = current;
    r.details["target"] = target;
    r.details["delta"] = 0;
    return r;
  }
  if (!previous) {
    r.verdict = "progress";
    r.details["current"] = current;
    r.details["previous"] = nullptr;
    r.details["target"] = target;
    r.details["delta"] = nullptr;
    return r;
  }
  const double delta = current - *previous;
  const bool progress =
      direction == convergence_direction::minimize ? delta < 0 : delta > 0;
  r.verdict = progress ? "progress" : "stall";
  r.details["current"] = current;
  r.details["previous"] = *previous;
  r.details["target"] = target;
  r.details["delta"] = delta;
  r.details["direction"] = direction == convergence_direction::minimize ? "minimize" : "maximize";
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

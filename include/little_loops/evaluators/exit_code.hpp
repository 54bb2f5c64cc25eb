// little_loops — exit_code evaluator: 0 → success, 1 → failure, anything else → error
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief Maps a Unix exit code to a verdict (seed 000): 0 → `success`, 1 → `failure`,
/// anything else → `error`; details `{"exit_code": N}` (held in evaluation_details' compact
/// form: nothing is allocated unless they are read).
inline evaluation_result evaluate_exit_code(int exit_code) {
  evaluation_result r;
  r.verdict = exit_code == 0 ? "success" : exit_code == 1 ? "failure" : "error";
  r.details = evaluation_details::exit_code(exit_code);
  return r;
}

LITTLE_LOOPS_NAMESPACE_END

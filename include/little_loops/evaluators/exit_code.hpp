// little_loops — exit_code evaluator: 0 → success, 1 → failure, anything else → error
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief Maps a Unix exit code to a verdict (seed 000): 0 → `success`, 1 → `failure`,
/// anything else → `error`; details `{"exit_code": N}` (held in evaluation_details' compact
/// form: nothing is allocated unless they are read).
/// The verdict of `exit_code` in `dialect`: 0 → `success` (`yes` in the current dialect),
/// 1 → `failure` (`no`), anything else → `error`.
constexpr std::string_view exit_code_verdict(int exit_code, loop_dialect dialect) noexcept {
  const bool current = dialect == loop_dialect::current;
  return exit_code == 0   ? std::string_view(current ? "yes" : "success")
         : exit_code == 1 ? std::string_view(current ? "no" : "failure")
                          : std::string_view("error");
}

LITTLE_LOOPS_INLINE evaluation_result evaluate_exit_code(int exit_code);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE evaluation_result evaluate_exit_code(int exit_code) {
  const std::string_view verdict = exit_code == 0   ? std::string_view("success")
                                   : exit_code == 1 ? std::string_view("failure")
                                                    : std::string_view("error");
  return evaluation_result{std::string(verdict), evaluation_details::exit_code(exit_code)};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

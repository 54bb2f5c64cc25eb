// little_loops — harbor_scorer evaluator: a benchmark scorer's exit code and float score
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/detail/utf8.hpp>

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief A Harbor-format scorer (the reference's evaluators.py): a non-zero exit is `no`
/// (`{exit_code}`); exit 0 with a number as its whole output (surrounding whitespace
/// allowed) is `yes` (`{score, exit_code: 0}`); exit 0 with anything else is `error`
/// (`Scorer stdout is not a float: <first 200 characters>`). It reads the exit code, so a
/// non-zero exit is not the blind-evaluator `error`.
LITTLE_LOOPS_INLINE evaluation_result evaluate_harbor_scorer(std::string_view output, int exit_code);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE evaluation_result evaluate_harbor_scorer(std::string_view output, int exit_code) {
  evaluation_result r;
  if (exit_code != 0) {
    r.verdict = "no";
    r.details = json{{"exit_code", exit_code}};
    return r;
  }
  if (const auto score = detail::parse_number(output)) {
    r.verdict = "yes";
    r.details = json{{"score", *score}, {"exit_code", 0}};
    return r;
  }
  r.verdict = "error";
  r.details = json{{"exit_code", 0},
                   {"error", "Scorer stdout is not a float: " +
                                 detail::sanitize_utf8(detail::utf8_prefix(output, 200))}};
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

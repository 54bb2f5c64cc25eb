// little_loops — validation rules of the resilience keys
// SPDX-License-Identifier: MIT
#pragma once

// Part of validate() (validation.hpp): the rules the reader cannot check alone. State names
// in `catch:` and `on_rate_limit_exhausted` are targets like any other
// (validation_rules.hpp: state_references).

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <string>
#include <unordered_map>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// `retry-pairing`: `max_rate_limit_retries` and `on_rate_limit_exhausted` go together (as
/// the reference requires).
inline void check_rate_limit_pairing(const state_config& state, const std::string& path,
                                     diagnostics& out) {
  const state_resilience& r = state.resilience;
  if (r.max_rate_limit_retries && !r.on_rate_limit_exhausted)
    report(out, join_path(path, "max_rate_limit_retries"), "retry-pairing",
           "'max_rate_limit_retries' requires 'on_rate_limit_exhausted' to also be set");
  if (r.on_rate_limit_exhausted && !r.max_rate_limit_retries)
    report(out, join_path(path, "on_rate_limit_exhausted"), "retry-pairing",
           "'on_rate_limit_exhausted' requires 'max_rate_limit_retries' to also be set");
}

/// `unused-evaluator-field`: a stall field on an evaluator that does not read it.
inline void check_stall_fields(const evaluate_config& config, const std::string& path,
                               diagnostics& out) {
  const stall_config& s = config.stall;
  const evaluator_type t = config.type;
  const bool history = t == evaluator_type::score_stall || t == evaluator_type::open_question_stall;
  const auto unused = [&](bool present, bool read, const char* field) {
    if (present && !read)
      report(out, join_path(path, field), "unused-evaluator-field",
             fmt::format("'{}' is not read by the {} evaluator", field, to_string(t)),
             severity::warning);
  };
  unused(s.scope.has_value(), t == evaluator_type::diff_stall, "scope");
  unused(s.max_stall.has_value(), history || t == evaluator_type::diff_stall, "max_stall");
  unused(s.history_file.has_value(), history, "history_file");
  unused(s.epsilon.has_value(), history, "epsilon");
  unused(s.track.has_value(), t == evaluator_type::action_stall, "track");
  unused(s.max_repeat.has_value(), t == evaluator_type::action_stall, "max_repeat");
}

/// `unknown-state`: `circuit.repeated_failure.on_repeated_failure` is `abort` or a state.
template <class Index>
void check_circuit(const fsm_loop& loop, const Index& index, diagnostics& out) {
  const auto& rf = loop.resilience.repeated_failure;
  if (!rf || rf->on_repeated_failure == "abort" || index.count(rf->on_repeated_failure) != 0) return;
  report(out, "circuit.repeated_failure.on_repeated_failure", "unknown-state",
         fmt::format("circuit.repeated_failure.on_repeated_failure references unknown state "
                     "'{}' (must be a declared state or the literal \"abort\")",
                     sanitize_utf8(rf->on_repeated_failure)));
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// little_loops — output_numeric evaluator: parse the output as a number and compare
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <cstdint>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// `eq`, `ne`, ... as written in documents.
inline constexpr std::string_view comparison_name(comparison_op op) noexcept {
  switch (op) {
    case comparison_op::eq: return "eq";
    case comparison_op::ne: return "ne";
    case comparison_op::lt: return "lt";
    case comparison_op::le: return "le";
    case comparison_op::gt: return "gt";
    case comparison_op::ge: return "ge";
  }
  return "eq";
}

template <class T>
inline constexpr bool compare_values(T v, comparison_op op, T t) noexcept {
  switch (op) {
    case comparison_op::eq: return v == t;
    case comparison_op::ne: return v != t;
    case comparison_op::lt: return v < t;
    case comparison_op::le: return v <= t;
    case comparison_op::gt: return v > t;
    case comparison_op::ge: return v >= t;
  }
  return false;
}

LITTLE_LOOPS_INLINE evaluation_result error_result(std::string message);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE evaluation_result error_result(std::string message) {
  evaluation_result r;
  r.verdict = "error";
  r.details = json::object();
  r.details["error"] = std::move(message);
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE evaluation_result evaluate_output_numeric(std::string_view output, comparison_op op,
                                                 double target);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Parses `output` as a number (Python float() grammar, surrounding whitespace allowed)
/// and compares it with `target` (seed 000).
///
/// Verdict `success`/`failure` with details `{"value", "target", "operator"}`; `error` with
/// `{"error": "Cannot parse as number: <first 100 chars>"}` when the output is not a number.
LITTLE_LOOPS_INLINE evaluation_result evaluate_output_numeric(std::string_view output, comparison_op op,
                                                 double target) {
  auto value = detail::parse_number(output);
  if (!value) {
    std::string msg = "Cannot parse as number: ";
    msg += detail::sanitize_utf8(detail::utf8_prefix(output, 100));
    return detail::error_result(std::move(msg));
  }
  evaluation_result r;
  r.verdict = detail::compare_values(*value, op, target) ? "success" : "failure";
  r.details = json::object();
  r.details["value"] = *value;
  r.details["target"] = target;
  r.details["operator"] = detail::comparison_name(op);
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

/// Whether a three-way comparison result `c` (-1, 0, 1; 2 when unordered, as with NaN)
/// satisfies `op`.
inline bool cmp_matches(int c, comparison_op op) noexcept {
  if (c == 2) return op == comparison_op::ne;  // NaN: only != holds
  switch (op) {
    case comparison_op::eq: return c == 0;
    case comparison_op::ne: return c != 0;
    case comparison_op::lt: return c < 0;
    case comparison_op::le: return c <= 0;
    case comparison_op::gt: return c > 0;
    case comparison_op::ge: return c >= 0;
  }
  return false;
}

LITTLE_LOOPS_INLINE evaluation_result evaluate_output_numeric_target(std::string_view output, comparison_op op,
                                                        const json& target);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// evaluate_output_numeric() with the target as the document gave it: an integer target is
/// compared exactly and kept an integer in the details (`"target": 5`, as the original
/// reports it); any other number goes through the double overload.
LITTLE_LOOPS_INLINE evaluation_result evaluate_output_numeric_target(std::string_view output, comparison_op op,
                                                        const json& target) {
  if (!target.is_number_integer()) return evaluate_output_numeric(output, op, target.get<double>());
  evaluation_result r = evaluate_output_numeric(output, op, target.get<double>());
  if (r.verdict == "error") return r;
  const double value = r.details["value"].get<double>();
  // Exactly, as Python compares a float with an int (2**53 + 1 is not 2.0**53).
  const int target_vs_value = target.is_number_unsigned()
                                  ? compare_int_double(target.get<std::uint64_t>(), value)
                                  : compare_int_double(target.get<std::int64_t>(), value);
  r.verdict = cmp_matches(target_vs_value == 2 ? 2 : -target_vs_value, op) ? "success" : "failure";
  r.details["target"] = target;
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

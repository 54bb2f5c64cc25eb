// little_loops — a learning state's targets and retry limit, resolved when it runs
// SPDX-License-Identifier: MIT
#pragma once

// Part of the executor's learning states (plugin_states.hpp). As the reference resolves
// them: `targets_csv` rendered and split on commas (each stripped, empty ones dropped),
// else `targets`; `max_retries_expr` rendered and read as Python's int() reads it, else
// `max_retries`. A template that cannot be rendered, or a retry limit that is not an
// integer, is an error (the state's `error` verdict).

#include <little_loops/config.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/learning.hpp>
#include <little_loops/detail/numbers.hpp>

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

struct learning_plan {
  std::vector<std::string> targets;
  int max_retries = 2;
};

LITTLE_LOOPS_INLINE std::optional<int> python_int(std::string_view text);
LITTLE_LOOPS_INLINE std::vector<std::string> split_targets(std::string_view csv);
LITTLE_LOOPS_INLINE expected<learning_plan, std::string> learning_plan_of(const learning_config& cfg,
                                                             const interpolation_context& ctx);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Python's int() of a string, for the values a retry limit takes: surrounding whitespace,
// an optional sign, ASCII digits with single `_` between them.
LITTLE_LOOPS_INLINE std::optional<int> python_int(std::string_view text) {
  text = trim_py(text);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  std::string digits;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9')
      digits += c;
    else if (c != '_' || i == 0 || i + 1 == text.size() || text[i + 1] == '_')
      return std::nullopt;
  }
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return negative ? -value : value;
}

// The targets, comma-separated in `csv`: each stripped, the empty ones dropped.
LITTLE_LOOPS_INLINE std::vector<std::string> split_targets(std::string_view csv) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t comma = csv.find(',');
    const std::string_view item = trim_py(csv.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) return out;
    csv.remove_prefix(comma + 1);
  }
}

LITTLE_LOOPS_INLINE expected<learning_plan, std::string> learning_plan_of(const learning_config& cfg,
                                                             const interpolation_context& ctx) {
  learning_plan plan;
  plan.max_retries = cfg.max_retries;
  if (cfg.targets_csv) {
    auto csv = interpolate(*cfg.targets_csv, ctx);
    if (!csv) return unexpected("learning.targets_csv: " + csv.error().message);
    plan.targets = split_targets(*csv);
  } else {
    plan.targets = cfg.targets;
  }
  if (cfg.max_retries_expr) {
    auto text = interpolate(*cfg.max_retries_expr, ctx);
    if (!text) return unexpected("learning.max_retries_expr: " + text.error().message);
    const auto n = python_int(*text);
    if (!n) return unexpected("learning.max_retries_expr: not an integer: \"" + *text + "\"");
    plan.max_retries = *n;
  }
  return plan;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

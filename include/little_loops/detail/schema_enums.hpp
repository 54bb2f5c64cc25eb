// little_loops — the schema enums' names: document spellings and unknown-value messages
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

// Declared here for the tables below; schema.hpp defines and documents them.
enum class evaluator_type;
enum class comparison_op;
enum class convergence_direction;
enum class action_kind;
enum class handoff_policy;
enum class loop_dialect;

namespace detail {

/// Names (in enumerator order) and the word used in messages, per schema enum.
template <class Enum>
struct enum_info;

template <>
struct enum_info<evaluator_type> {
  static constexpr std::array<std::string_view, 13> names{
      "exit_code", "output_numeric", "output_json", "output_contains", "convergence",
      "llm_structured", "classify", "diff_stall", "score_stall", "open_question_stall",
      "action_stall", "harbor_scorer", "mcp_result"};
  static constexpr std::string_view what = "evaluator type";
};
template <>
struct enum_info<comparison_op> {
  static constexpr std::array<std::string_view, 6> names{"eq", "ne", "lt", "le", "gt", "ge"};
  static constexpr std::string_view what = "operator";
};
template <>
struct enum_info<convergence_direction> {
  static constexpr std::array<std::string_view, 2> names{"minimize", "maximize"};
  static constexpr std::string_view what = "direction";
};
template <>
struct enum_info<action_kind> {
  static constexpr std::array<std::string_view, 4> names{"shell", "prompt", "slash_command",
                                                         "mcp_tool"};
  static constexpr std::string_view what = "action_type";
};
template <>
struct enum_info<handoff_policy> {
  static constexpr std::array<std::string_view, 3> names{"pause", "spawn", "terminate"};
  static constexpr std::string_view what = "on_handoff";
};
template <>
struct enum_info<loop_dialect> {
  static constexpr std::array<std::string_view, 2> names{"seed", "current"};
  static constexpr std::string_view what = "dialect";
};

template <class Enum>
constexpr std::string_view enum_name(Enum value) noexcept {
  const auto index = static_cast<std::size_t>(value);
  const auto& names = enum_info<Enum>::names;
  return index < names.size() ? names[index] : std::string_view{"<invalid>"};
}

/// The message for an unknown enum value. Operator, direction and evaluator type use the
/// original's sentences (`Invalid operator 'x'. Must be one of: eq, ge, gt, le, lt, ne`,
/// `Invalid direction 'x'. Must be 'minimize' or 'maximize'`, `Unknown evaluator type 'x'.
/// Must be one of: …`, names sorted as it sorts them); the others say `unknown <what> "x";
/// expected one of: …`. Each ends with a "did you mean" when a name is close.
template <class Enum>
std::string unknown_enum_message(std::string_view text) {
  const auto& names = enum_info<Enum>::names;
  const std::string hint = did_you_mean(text, names);
  const std::string quoted = quote_excerpt(text);
  const std::string_view bare = std::string_view(quoted).substr(1, quoted.size() - 2);
  auto sorted_names = [&] {
    std::vector<std::string_view> v(names.begin(), names.end());
    std::sort(v.begin(), v.end());
    return join_names(v);
  };
  if constexpr (std::is_same_v<Enum, comparison_op>)
    return fmt::format("Invalid operator '{}'. Must be one of: {}{}", bare, sorted_names(), hint);
  else if constexpr (std::is_same_v<Enum, convergence_direction>)
    return fmt::format("Invalid direction '{}'. Must be 'minimize' or 'maximize'{}", bare, hint);
  else if constexpr (std::is_same_v<Enum, evaluator_type>)
    return fmt::format("Unknown evaluator type '{}'. Must be one of: {}{}", bare, sorted_names(),
                       hint);
  else
    return fmt::format("unknown {} {}{}; expected one of: {}", enum_info<Enum>::what, quoted,
                       hint, join_names(names));
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

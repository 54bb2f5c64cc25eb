// little_loops — the verdicts a state's evaluator can give, and which of them are routed
// SPDX-License-Identifier: MIT
#pragma once

// Shared by the renderers (maintain edges) and validation (unrouted and impossible verdicts).

#include <little_loops/config.hpp>
#include <little_loops/schema.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The evaluator that judges `state`: its `evaluate.type`, else the default (llm_structured
/// for a prompt action, mcp_result for an mcp_tool action, exit_code otherwise); nullopt for
/// a state with neither action nor `evaluate`, which yields `success` (design §3.16).
inline std::optional<evaluator_type> judging_evaluator(const state_config& state) {
  if (state.evaluate) return state.evaluate->type;
  if (!state.action || state.action->empty()) return std::nullopt;
  if (state.action_type == action_kind::mcp_tool) return evaluator_type::mcp_result;
  return runs_prompt_action(state) ? evaluator_type::llm_structured : evaluator_type::exit_code;
}

/// What gives `state` its verdict, for messages: `exit_code`, `a sub-loop state`, …
inline std::string_view verdict_source(const state_config& state) {
  if (state.loop) return "a sub-loop state";
  const auto type = judging_evaluator(state);
  return type ? to_string(*type) : std::string_view("a state without action");
}

/// The verdicts `state` can give: exit_code, output_numeric, output_json, output_contains:
/// success, failure, error; convergence: target, progress, stall, error; mcp_result:
/// success, tool_error, not_found, timeout, error (a killed call); no action and no
/// evaluate: success; a sub-loop state: yes, no. nullopt when any verdict is possible (llm_structured, classify).
inline std::optional<std::vector<std::string_view>> producible_verdicts(const state_config& state) {
  // A sub-loop state's verdict is its child's outcome: `yes` or `no`; its `error` and
  // `timeout` fall back to `no` when not routed.
  if (state.loop) return std::vector<std::string_view>{"yes", "no"};
  const auto type = judging_evaluator(state);
  if (!type) return std::vector<std::string_view>{"success"};
  switch (*type) {
    case evaluator_type::llm_structured:
    case evaluator_type::classify: return std::nullopt;
    case evaluator_type::convergence: return std::vector<std::string_view>{"target", "progress", "stall", "error"};
    case evaluator_type::mcp_result:
      return std::vector<std::string_view>{"success", "tool_error", "not_found", "timeout", "error"};
    default: return std::vector<std::string_view>{"success", "failure", "error"};
  }
}

/// True when `verdict` (or its twin, `yes` for `success`…) has a route of its own in
/// `state`: a route table key, `_error` for `error`, or an `on_<verdict>` shorthand (`_`
/// not counted).
inline bool verdict_routed(const state_config& state, std::string_view verdict) {
  const auto exactly = [&](std::string_view v) {
    if (state.route) {
      if (state.route->routes.count(std::string(v)) != 0) return true;
      if (v == "error" && state.route->error_target) return true;
    }
    return state.on.count(std::string(v)) != 0;
  };
  const std::string_view twin = twin_verdict(verdict);
  return exactly(verdict) || (!twin.empty() && exactly(twin));
}

/// The verdicts `state` can give that find no route (none when a `_` default takes every
/// verdict); nullopt when any verdict is possible and none is the default.
inline std::optional<std::vector<std::string_view>> unrouted_verdicts(const state_config& state) {
  if (state.route && state.route->default_target) return std::vector<std::string_view>{};
  auto verdicts = producible_verdicts(state);
  if (!verdicts) return std::nullopt;
  std::erase_if(*verdicts, [&](std::string_view v) { return verdict_routed(state, v); });
  return verdicts;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

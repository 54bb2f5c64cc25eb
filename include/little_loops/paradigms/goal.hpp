// little_loops — the goal paradigm: check, fix until the check passes
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/slugify.hpp>
#include <little_loops/paradigms/common.hpp>

#include <optional>
#include <string>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

/// One `tools:` entry: an action string, or `{tool: <action>, action_type: <kind>}`.
struct goal_tool {
  std::string action;
  std::optional<action_kind> action_type;
  std::string path;  ///< where the action is in the spec: `tools[0]` or `tools[0].tool`
};

LITTLE_LOOPS_INLINE std::optional<action_kind> read_tool_action_type(const json& field, const std::string& path,
                                                        diagnostics& out);
LITTLE_LOOPS_INLINE std::optional<goal_tool> read_goal_tool(const json& entry, const std::string& path,
                                               diagnostics& out);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `action_type` of a tool entry, with the original's message for unknown kinds.
LITTLE_LOOPS_INLINE std::optional<action_kind> read_tool_action_type(const json& field, const std::string& path,
                                                        diagnostics& out) {
  if (!field.is_string()) return parse_enum<action_kind>(field, path, out);
  const auto& text = field.get_ref<const std::string&>();
  if (auto kind = parse_action_kind(text)) return kind;
  constexpr std::array<std::string_view, 3> kinds{"shell", "prompt", "slash_command"};
  report(out, path, "unknown-value",
         fmt::format("Invalid action_type {}. Must be one of: shell, prompt, slash_command{}",
                     quote_excerpt(text), did_you_mean(text, kinds)));
  return std::nullopt;
}

LITTLE_LOOPS_INLINE std::optional<goal_tool> read_goal_tool(const json& entry, const std::string& path,
                                               diagnostics& out) {
  if (entry.is_string()) {
    auto action = read_paradigm_text(entry, path, out);
    if (!action) return std::nullopt;
    return goal_tool{std::move(*action), std::nullopt, path};
  }
  if (!entry.is_object() || !entry.contains("tool")) {
    report(out, path, "invalid-tool",
           fmt::format("Invalid tool entry: {}. Dict entries must have a 'tool' key.",
                       paradigm_excerpt(entry.dump(-1, ' ', false, json::error_handler_t::replace))));
    return std::nullopt;
  }
  goal_tool tool;
  tool.path = member_path(path, "tool");
  bool ok = true;
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    const std::string field_path = member_path(path, it.key());
    if (it.key() == "tool") {
      if (auto v = read_paradigm_text(it.value(), field_path, out)) tool.action = std::move(*v);
      else ok = false;
    } else if (it.key() == "action_type") {
      if (auto v = read_tool_action_type(it.value(), field_path, out)) tool.action_type = *v;
      else ok = false;
    } else {
      report_unknown_key(out, path, it.key(), std::array<std::string_view, 2>{"tool", "action_type"});
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return tool;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE loop_draft draft_goal(const json& spec);

}  // namespace detail

LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_goal(const json& spec, diagnostics* warnings = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Compiles a goal spec:
/// ```yaml
/// paradigm: goal
/// goal: "No type errors in src/"      # required; the default name is goal-<slug of goal>
/// tools: [<check>, <fix>]              # required; fix defaults to check; an entry may be
///                                      # {tool: <action>, action_type: shell|prompt|slash_command}
/// action_type: prompt                  # optional default for entries without their own
/// evaluator: {type: output_contains, pattern: "Success"}   # optional, any evaluate object
/// name, description, max_iterations, backoff, timeout, context, scope, llm, on_handoff
/// ```
/// into `evaluate` (the check: success → `done`, failure → `fix`, error → `failed`),
/// `fix` (next → `evaluate`), `done` (terminal) and `failed` (failure terminal).
/// The `evaluator` object is parsed by parse_evaluate_config() with paths below
/// `evaluator` and kept whole, an explicit `exit_code` included; `null` or `{}` mean none.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_goal(const json& spec, diagnostics* warnings) {
  return detail::finish_paradigm(detail::draft_goal(spec), warnings);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// compile_goal() before validation: the compiled loop, the spec's findings and origins.
LITTLE_LOOPS_INLINE loop_draft draft_goal(const json& spec) {
  diagnostics out;
  fsm_loop loop;
  if (!spec.is_object()) {
    report_type(out, "", "a goal spec (a JSON object)", spec);
    return paradigm_draft("goal", std::move(loop), std::move(out));
  }
  require_paradigm_fields(spec, "Goal", {"goal", "tools"}, out);
  std::optional<std::string> goal;
  std::optional<std::string> name;
  std::optional<goal_tool> check;
  std::optional<goal_tool> fix;
  std::optional<action_kind> default_type;
  std::optional<evaluate_config> evaluator;
  const auto keys = paradigm_keys({"goal", "tools", "action_type", "evaluator"});
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string path = member_path("", key);
    if (read_paradigm_common("goal", key, field, loop, out)) continue;
    if (key == "name") {
      name = read_paradigm_text(field, path, out);
    } else if (key == "goal") {
      goal = read_string(field, path, out);
    } else if (key == "tools") {
      if (!field.is_array()) {
        report_type(out, path, "an array of tools (check, then optional fix)", field);
      } else if (field.empty()) {
        report(out, path, "empty-value", "Goal paradigm 'tools' requires at least one tool");
      } else if (field.size() > 2) {
        report(out, paradigm_index_path(path, 2), "too-many-tools",
               fmt::format("Goal paradigm 'tools' takes at most 2 entries (check, fix), got {}",
                           field.size()));
      } else {
        check = read_goal_tool(field[0], paradigm_index_path(path, 0), out);
        fix = field.size() > 1 ? read_goal_tool(field[1], paradigm_index_path(path, 1), out) : check;
      }
    } else if (key == "action_type") {
      default_type = read_tool_action_type(field, path, out);
    } else if (key == "evaluator") {
      read_paradigm_evaluator(field, path, evaluator, out);
    } else {
      report_unknown_key(out, "", key, keys);
    }
  }
  if (has_errors(out) || !goal || !check || !fix)
    return paradigm_draft("goal", std::move(loop), std::move(out));

  loop.name = name ? std::move(*name) : "goal-" + slugify(*goal);
  loop.paradigm = "goal";
  loop.initial = "evaluate";
  const std::string failed{paradigm_error_state};

  state_config evaluate;
  evaluate.action = check->action;
  evaluate.action_type = check->action_type ? check->action_type : default_type;
  evaluate.evaluate = std::move(evaluator);
  evaluate.on["success"] = "done";
  evaluate.on["failure"] = "fix";
  evaluate.on["error"] = failed;

  state_config fix_state;
  fix_state.action = fix->action;
  fix_state.action_type = fix->action_type ? fix->action_type : default_type;
  fix_state.next = "evaluate";

  paradigm_origins origins;
  origins.add_state_field("evaluate", "action", check->path);
  origins.add_state_field("evaluate", "evaluate", "evaluator");
  origins.add_state_field("fix", "action", fix->path);

  loop.states["evaluate"] = std::move(evaluate);
  loop.states["fix"] = std::move(fix_state);
  loop.states["done"] = paradigm_terminal();
  loop.states[failed] = paradigm_failure_terminal();
  return paradigm_draft("goal", std::move(loop), std::move(out), std::move(origins));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

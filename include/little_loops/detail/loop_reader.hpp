// little_loops — reading a loop document: its states, routes, evaluators and settings
// SPDX-License-Identifier: MIT
#pragma once

// Part of schema.hpp (included there after the value types and parse_enum): the readers
// behind parse_loop, parse_loop_text and parse_evaluate_config, shared with the paradigm
// compilers and the load pipeline. Each reports every finding with its path and goes on.

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/foreign_keys.hpp>
#include <little_loops/detail/host_fields.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/schema_enums.hpp>
#include <little_loops/detail/state_plugin_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::array<std::string_view, 17> evaluate_keys{
    "type",   "operator", "target",         "tolerance",        "pattern",
    "negate", "path",     "prompt",         "schema",           "min_confidence",
    "uncertain_suffix",   "source",         "previous",         "direction",
    "line",   "key",      "error_patterns"};

inline constexpr std::array<std::string_view, 32> state_keys{
    "action",  "action_type", "evaluate",    "route",      "next",       "terminal",
    "failure", "capture",     "timeout",     "on_maintain", "on_success", "on_failure",
    "on_error", "on_yes",     "on_no",       "on_partial", "on_blocked", "description",
    "max_retries", "on_retry_exhausted", "retryable_exit_codes",
    "loop", "with", "context_passthrough", "output",
    "type", "throttle", "on_throttle_hard", "learning", "tamper_guard", "prepatch_check",
    "worktree"};

inline constexpr std::array<std::string_view, 26> loop_keys{
    "name",    "description",    "initial", "states", "context",    "scope",
    "max_iterations", "backoff", "timeout", "maintain", "llm",     "on_handoff",
    "on_max_iterations", "paradigm", "dialect", "max_steps", "on_max_steps",
    "category", "visibility", "labels", "input_key", "required_inputs", "singleton",
    "default_timeout", "tamper_guard", "prepatch_check"};

inline constexpr std::array<std::string_view, 4> llm_keys{"enabled", "model", "max_tokens",
                                                           "timeout"};

inline constexpr std::array<std::string_view, 2> route_reserved_keys{"_", "_error"};

LITTLE_LOOPS_INLINE bool check_value_tree(const json& root, const std::string& path,
                                          diagnostics& out);
LITTLE_LOOPS_INLINE llm_config parse_llm(const json& value, const std::string& path,
                                         diagnostics& out);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// null, boolean or number: nothing to check inside.
inline bool is_plain_scalar(const json& value) noexcept {
  return value.is_null() || value.is_boolean() || value.is_number();
}

/// Checks an arbitrary JSON value kept verbatim (context, schema, target): nesting depth at
/// most max_value_depth, every string and key well-formed UTF-8 and every number finite (a
/// YAML `.inf`, `.nan` or `1e400`: JSON, and so a compiled loop or a journal, has no way to
/// write it). Iterative (no recursion). Returns false after reporting.
LITTLE_LOOPS_INLINE bool check_value_tree(const json& root, const std::string& path, diagnostics& out) {
  struct frame {
    const json* value;
    std::size_t depth;
    std::string path;
  };
  const std::size_t errors_before = count_errors(out);
  std::vector<frame> stack;
  stack.push_back(frame{&root, 0, path});
  while (!stack.empty()) {
    frame current = std::move(stack.back());
    stack.pop_back();
    const json& value = *current.value;
    if (value.is_string()) {
      if (!is_valid_utf8(value.get_ref<const std::string&>()))
        report(out, current.path, "invalid-utf8", "string is not valid UTF-8");
      continue;
    }
    if (value.is_number_float()) {
      if (!std::isfinite(value.get<double>()))
        report(out, current.path, "out-of-range",
               "number is not finite (JSON has no infinity or NaN: write a finite number, or a "
               "string)");
      continue;
    }
    if (value.is_binary()) {
      report(out, current.path, "wrong-type", "binary values cannot be used in a loop");
      continue;
    }
    if (!value.is_structured() || value.empty()) continue;
    if (current.depth >= max_value_depth) {
      report(out, current.path, "too-deep",
             fmt::format("value is nested deeper than {} levels", max_value_depth));
      return false;
    }
    if (value.is_object()) {
      for (auto it = value.crbegin(); it != value.crend(); ++it) {
        // reverse iteration + stack = document order
        const std::string& key = it.key();
        if (!is_valid_utf8(key)) report(out, member_path(current.path, key), "invalid-utf8",
                                        "key is not valid UTF-8");
        if (is_plain_scalar(it.value()) && !it.value().is_number_float()) continue;
        stack.push_back(frame{&it.value(), current.depth + 1, member_path(current.path, key)});
      }
    } else {
      for (std::size_t i = value.size(); i-- > 0;) {
        const json& element = value[i];
        if (is_plain_scalar(element) && !element.is_number_float()) continue;
        stack.push_back(frame{&element, current.depth + 1, index_path(current.path, i)});
      }
    }
  }
  return count_errors(out) == errors_before;
}

/// Reads a list of strings into `to`.
inline void read_string_list(const json& field, const std::string& field_path,
                             std::vector<std::string>& to, diagnostics& out) {
  if (!field.is_array()) {
    report_type(out, field_path, "a list of strings", field);
    return;
  }
  for (std::size_t i = 0; i < field.size(); ++i)
    if (auto v = read_string(field[i], index_path(field_path, i), out)) to.push_back(std::move(*v));
}

/// Reads classify's `line:`: `"first"`, `"last"` or an integer (not a boolean, not a
/// numeric string).
inline void read_classify_line(evaluate_config& config, const json& field,
                               const std::string& field_path, diagnostics& out) {
  if (field.is_string()) {
    const auto& text = field.get_ref<const std::string&>();
    if (text == "first" || text == "last") {
      config.line = field;
      return;
    }
    std::string message = "unknown line " + quote_excerpt(text) + "; expected \"first\", \"last\" or an integer";
    if (text.find_first_not_of("-0123456789") == std::string::npos && !text.empty())
      message += " (write " + text + " without quotes)";
    else
      message += did_you_mean(text, std::array<std::string_view, 2>{"first", "last"});
    report(out, field_path, "unknown-value", std::move(message));
  } else if (field.is_number_integer()) {
    if (read_int(field, field_path, out)) config.line = field;
  } else {
    report_type(out, field_path, "\"first\", \"last\" or an integer", field);
  }
}

/// A `type:` value of the little-loops plugin (an evaluator or an action type): a
/// `plugin-key` error naming it. False when `field` is not one.
inline bool report_plugin_value(const json& field, const std::string& field_path,
                                diagnostics& out) {
  if (!field.is_string()) return false;
  const auto& text = field.get_ref<const std::string&>();
  auto what = plugin_feature(plugin_values, text);
  if (what.empty()) return false;
  report(out, field_path, "plugin-key", plugin_message("value", text, what));
  return true;
}

/// Reads member `key` of an `evaluate:` object into `config`; false when the key is unknown.
inline bool read_evaluate_field(evaluate_config& config, const std::string& key,
                                const json& field, const std::string& field_path,
                                diagnostics& out) {
  if (key == "type") {
    if (report_plugin_value(field, field_path, out)) return true;
    if (auto v = parse_enum<evaluator_type>(field, field_path, out)) config.type = *v;
  } else if (key == "operator") {
    if (auto v = parse_enum<comparison_op>(field, field_path, out)) config.op = *v;
  } else if (key == "target") {
    if (field.is_null()) {
      report_type(out, field_path, "a number, string or JSON value", field);
    } else if (check_value_tree(field, field_path, out)) {
      config.target = field;
    }
  } else if (key == "tolerance") {
    if (field.is_string()) {
      if (auto v = read_string(field, field_path, out)) config.tolerance = json(*v);
    } else if (field.is_number()) {
      if (auto v = read_number(field, field_path, out)) config.tolerance = field;
    } else {
      report_type(out, field_path, "a number or a template string", field);
    }
  } else if (key == "pattern") {
    if (auto v = read_string(field, field_path, out)) config.pattern = std::move(*v);
  } else if (key == "negate") {
    if (auto v = read_bool(field, field_path, out)) config.negate = *v;
  } else if (key == "path") {
    if (auto v = read_string(field, field_path, out)) config.path = std::move(*v);
  } else if (key == "prompt") {
    if (auto v = read_string(field, field_path, out)) config.prompt = std::move(*v);
  } else if (key == "schema") {
    if (expect_object(field, field_path, out) && check_value_tree(field, field_path, out))
      config.schema = field;
  } else if (key == "min_confidence") {
    if (auto v = read_number(field, field_path, out)) config.min_confidence = *v;
  } else if (key == "uncertain_suffix") {
    if (auto v = read_bool(field, field_path, out)) config.uncertain_suffix = *v;
  } else if (key == "source") {
    if (auto v = read_string(field, field_path, out)) config.source = std::move(*v);
  } else if (key == "previous") {
    if (auto v = read_string(field, field_path, out)) config.previous = std::move(*v);
  } else if (key == "direction") {
    if (auto v = parse_enum<convergence_direction>(field, field_path, out)) config.direction = *v;
  } else if (key == "line") {
    read_classify_line(config, field, field_path, out);
  } else if (key == "key") {
    if (auto v = read_string(field, field_path, out)) config.key = std::move(*v);
  } else if (key == "error_patterns") {
    read_string_list(field, field_path, config.error_patterns, out);
  } else if (!read_stall_field(config.stall, key, field, field_path, out)) {
    return false;
  }
  return true;
}

/// Reads an `evaluate:` object (parse_evaluate_config()).
LITTLE_LOOPS_INLINE std::optional<evaluate_config> read_evaluate(const json& value, const std::string& path,
                                                    diagnostics& out) {
  const std::size_t errors_before = count_errors(out);
  if (!expect_object(value, path, out)) return std::nullopt;
  evaluate_config config;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!read_evaluate_field(config, it.key(), it.value(), member_path(path, it.key()), out))
      report_foreign_key(out, path, it.key(), evaluate_keys);
  }
  if (!value.contains("type"))
    report(out, path, "missing-field",
           fmt::format("missing required key \"type\" (one of: {})",
                       join_names(enum_info<evaluator_type>::names)));
  if (count_errors(out) != errors_before) return std::nullopt;
  return config;
}

inline std::optional<route_config> parse_route(const json& value, const std::string& path,
                                               diagnostics& out) {
  if (!expect_object(value, path, out)) return std::nullopt;
  route_config route;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    const std::string key_path = member_path(path, key);
    if (!is_valid_utf8(key)) {
      report(out, key_path, "invalid-utf8", "key is not valid UTF-8");
      continue;
    }
    auto target = read_string(it.value(), key_path, out);
    if (key == "_") {
      if (target) route.default_target = std::move(*target);
    } else if (key == "_error") {
      if (target) route.error_target = std::move(*target);
    } else if (key.empty()) {
      report(out, key_path, "invalid-key", "a route verdict must not be empty");
    } else if (key.front() == '_') {
      report_unknown_key(out, path, key, route_reserved_keys,
                         "keys starting with '_' are reserved: \"_\" is the default route and "
                         "\"_error\" the route for the error verdict");
    } else if (target) {
      append_new_key(route.routes, key, std::move(*target));  // JSON keys are unique
    }
  }
  return route;
}

/// Reads `retryable_exit_codes`: a list of integers ≥ 1 (booleans are not integers).
inline void read_exit_codes(const json& field, const std::string& field_path, state_config& state,
                            diagnostics& out) {
  if (!field.is_array()) {
    report_type(out, field_path, "a list of exit codes", field);
    return;
  }
  for (const auto& code : field) {
    if (!code.is_number_integer() || code.get<std::int64_t>() < 1 || code.get<std::int64_t>() > 255) {
      report(out, field_path, "out-of-range",
             "'retryable_exit_codes' entries must be exit codes from 1 to 255, got " + code.dump());
      return;
    }
    state.retryable_exit_codes.push_back(code.get<int>());
  }
}

/// Reads `loop:`, the name of a sub-loop state's child (not empty).
inline void read_subloop_name(const json& field, const std::string& field_path,
                              state_config& state, diagnostics& out) {
  auto v = read_string(field, field_path, out);
  if (!v) return;
  if (v->empty())
    report(out, field_path, "empty-value", "a sub-loop name must not be empty");
  else
    state.loop = std::move(*v);
}

/// Reads a mapping of names to values (`with:`, `output:`): each value a string (a
/// template), a number, a boolean, null, or a list or mapping of those.
inline void read_value_table(const json& field, const std::string& field_path,
                             ordered_table<std::string, json>& table, diagnostics& out) {
  if (!expect_object(field, field_path, out)) return;
  for (auto it = field.begin(); it != field.end(); ++it) {
    const std::string entry_path = member_path(field_path, it.key());
    if (!is_valid_utf8(it.key())) {
      report(out, entry_path, "invalid-utf8", "key is not valid UTF-8");
    } else if (check_value_tree(it.value(), entry_path, out)) {
      append_new_key(table, it.key(), it.value());  // JSON keys are unique
    }
  }
}

// type, throttle, on_throttle_hard, learning (defined in state_plugin_fields.hpp).
LITTLE_LOOPS_INLINE bool read_state_plugin_field(state_config& state, const std::string& key,
                                                 const json& field, const std::string& path,
                                                 diagnostics& out);

/// Reads member `key` of a state into `state`; false when the key is unknown.
inline bool read_state_field(state_config& state, const std::string& key, const json& field,
                             const std::string& field_path, diagnostics& out) {
  if (key == "action") {
    if (auto v = read_string(field, field_path, out)) state.action = std::move(*v);
  } else if (key == "action_type") {
    if (report_plugin_value(field, field_path, out)) return true;
    if (auto v = parse_enum<action_kind>(field, field_path, out)) state.action_type = *v;
  } else if (key == "evaluate") {
    if (auto v = read_evaluate(field, field_path, out)) state.evaluate = std::move(*v);
  } else if (key == "route") {
    if (auto v = parse_route(field, field_path, out)) state.route = std::move(*v);
  } else if (key == "next") {
    if (auto v = read_string(field, field_path, out)) state.next = std::move(*v);
  } else if (key == "terminal") {
    if (auto v = read_bool(field, field_path, out)) state.terminal = *v;
  } else if (key == "failure") {
    if (auto v = read_bool(field, field_path, out)) state.failure = *v;
  } else if (key == "capture") {
    if (auto v = read_string(field, field_path, out)) {
      if (v->empty())
        report(out, field_path, "empty-value",
               "a capture name must not be empty (it is the name in ${captured.<name>})");
      else
        state.capture = std::move(*v);
    }
  } else if (key == "timeout") {
    if (auto v = read_number(field, field_path, out)) state.timeout = *v;
  } else if (key == "on_maintain") {
    if (auto v = read_string(field, field_path, out)) state.on_maintain = std::move(*v);
  } else if (key == "description") {
    if (auto v = read_string(field, field_path, out)) state.description = std::move(*v);
  } else if (key == "max_retries") {
    if (auto v = read_int(field, field_path, out)) state.max_retries = *v;
  } else if (key == "on_retry_exhausted") {
    if (auto v = read_string(field, field_path, out)) state.on_retry_exhausted = std::move(*v);
  } else if (key == "retryable_exit_codes") {
    read_exit_codes(field, field_path, state, out);
  } else if (key == "loop") {
    read_subloop_name(field, field_path, state, out);
  } else if (key == "with") {
    read_value_table(field, field_path, state.with, out);
  } else if (key == "worktree") {
    if (auto v = read_string(field, field_path, out)) state.worktree = std::move(*v);
  } else if (key == "context_passthrough") {
    if (auto v = read_bool(field, field_path, out)) state.context_passthrough = *v;
  } else if (key == "output") {
    read_value_table(field, field_path, state.output, out);
  } else if (key == "params") {  // an mcp_tool action's arguments: strings are templates
    if (expect_object(field, field_path, out) && check_value_tree(field, field_path, out))
      state.host.params = field;
  } else if (read_state_plugin_field(state, key, field, field_path, out)) {
    // type, throttle, on_throttle_hard, learning (state_plugin_fields.hpp)
  } else if (read_test_guard(state.guards, key, field, field_path, out)) {
    // tamper_guard, prepatch_check (guard_fields.hpp)
  } else if (read_state_resilience(state.resilience, key, field, field_path, out)) {
    // retry:, catch:, backoff, the rate-limit keys (resilience_fields.hpp)
  } else if (read_state_host(state.host, key, field, field_path, out)) {
    // agent:, pruning_profile:, session_mode: (host_fields.hpp)
  } else if (key.size() > 3 && key.compare(0, 3, "on_") == 0) {
    if (!is_valid_utf8(key)) {
      report(out, field_path, "invalid-utf8", "key is not valid UTF-8");
    } else if (auto v = read_string(field, field_path, out)) {
      append_new_key(state.on, key.substr(3), std::move(*v));  // JSON keys are unique
    }
  } else if (key == "on_") {
    report(out, field_path, "invalid-key",
           "shorthand routing needs a verdict after \"on_\", e.g. \"on_success\"");
  } else {
    return false;
  }
  return true;
}

/// Reads a state. What could not be read is left out of the result and reported: the loop
/// is then invalid, and the validator looks only at what was read (see read_and_validate).
inline state_config parse_state(const json& value, const std::string& path, diagnostics& out) {
  state_config state;
  if (!expect_object(value, path, out)) return state;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!read_state_field(state, it.key(), it.value(), member_path(path, it.key()), out))
      report_foreign_key(out, path, it.key(), state_keys);
  }
  return state;
}

LITTLE_LOOPS_INLINE llm_config parse_llm(const json& value, const std::string& path, diagnostics& out) {
  llm_config llm;
  if (!expect_object(value, path, out)) return llm;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string field_path = member_path(path, key);
    if (key == "enabled") {
      if (auto v = read_bool(field, field_path, out)) llm.enabled = *v;
    } else if (key == "model") {
      if (auto v = read_string(field, field_path, out)) llm.model = std::move(*v);
    } else if (key == "max_tokens") {
      if (auto v = read_int(field, field_path, out)) llm.max_tokens = *v;
    } else if (key == "timeout") {
      if (auto v = read_number(field, field_path, out)) llm.timeout = *v;
    } else {
      report_unknown_key(out, path, key, llm_keys);
    }
  }
  return llm;
}

/// Reads the `states` object into `loop.states`.
inline void read_states(const json& field, const std::string& field_path, fsm_loop& loop,
                        diagnostics& out) {
  if (!expect_object(field, field_path, out)) return;
  for (auto s = field.begin(); s != field.end(); ++s) {
    const std::string& state_name = s.key();
    const std::string state_path = member_path(field_path, state_name);
    if (state_name.empty()) {
      report(out, state_path, "invalid-key", "a state name must not be empty");
      continue;
    }
    if (!is_valid_utf8(state_name)) {
      report(out, state_path, "invalid-utf8", "state name is not valid UTF-8");
      continue;
    }
    // names are unique (JSON keys); a state with errors is kept with what could be read
    append_new_key(loop.states, state_name, parse_state(s.value(), state_path, out));
  }
}

/// Reads the `scope` array into `loop.scope`.
inline void read_scope(const json& field, const std::string& field_path, fsm_loop& loop,
                       diagnostics& out) {
  if (!field.is_array()) {
    report_type(out, field_path, "an array of strings", field);
    return;
  }
  for (std::size_t i = 0; i < field.size(); ++i)
    if (auto v = read_string(field[i], index_path(field_path, i), out))
      loop.scope.push_back(std::move(*v));
}

/// Reads the loop's metadata (`category`, `visibility`, `labels`), inputs (`input_key`, `required_inputs`), `singleton` and
/// the reference's lint flags; false when `key` is none of them.
inline bool read_metadata_field(fsm_loop& loop, const std::string& key, const json& field,
                                const std::string& field_path, diagnostics& out) {
  if (key == "category") {
    if (auto v = read_string(field, field_path, out)) loop.category = std::move(*v);
  } else if (key == "visibility") {
    if (auto v = read_string(field, field_path, out)) loop.visibility = std::move(*v);
  } else if (key == "labels") {
    read_string_list(field, field_path, loop.labels, out);
  } else if (key == "input_key") {
    auto v = read_string(field, field_path, out);
    if (v && v->empty()) report(out, field_path, "empty-value", "input_key must not be empty");
    else if (v) loop.input_key = std::move(*v);
  } else if (key == "required_inputs") {
    read_string_list(field, field_path, loop.required_inputs, out);
  } else if (key == "singleton") {
    if (auto v = read_bool(field, field_path, out)) loop.singleton = *v;
  } else if (names_contain(lint_flag_keys, key)) {
    if (auto v = read_bool(field, field_path, out)) append_new_key(loop.lint_flags, key, *v);
  } else {
    return false;
  }
  return true;
}

/// Reads `max_steps`/`on_max_steps` against `max_iterations`/`on_max_iterations` (design
/// §6.2): alone, `max_steps` is the step cap; with `max_iterations` in the current dialect,
/// `max_iterations` caps full passes. In the seed dialect both at once is an error.
inline void read_step_caps(const json& doc, fsm_loop& loop, diagnostics& out) {
  const auto steps = doc.find("max_steps");
  const auto on_steps = doc.find("on_max_steps");
  const bool both_caps = steps != doc.end() && doc.contains("max_iterations");
  if (both_caps && loop.dialect == loop_dialect::seed) {
    report(out, "max_steps", "dialect-conflict",
           "max_steps and max_iterations are two spellings of one field in the seed dialect");
    return;
  }
  if (steps != doc.end()) {
    if (auto v = read_int(*steps, "max_steps", out)) {
      if (both_caps) loop.max_passes = loop.max_iterations;
      loop.max_iterations = *v;
      loop.max_steps_spelling = true;
    }
  }
  if (both_caps && loop.on_max_iterations) {
    loop.on_max_passes = std::move(loop.on_max_iterations);
    loop.on_max_iterations.reset();
  }
  if (on_steps == doc.end()) return;
  auto target = read_string(*on_steps, "on_max_steps", out);
  if (!target) return;
  if (!both_caps && loop.on_max_iterations) {
    report(out, "on_max_steps", "duplicate-field",
           "on_max_steps and on_max_iterations are two spellings of one field (there is no "
           "full-pass cap: write one of them)");
    return;
  }
  loop.on_max_iterations = std::move(*target);
}

/// Current dialect: terminals named `failed`, `error`, `aborted` or `finalize_aborted` are
/// failures unless they write `failure:` (design §6.1).
inline void apply_failure_names(const json& doc, fsm_loop& loop) {
  static constexpr std::array<std::string_view, 4> names{"failed", "error", "aborted",
                                                         "finalize_aborted"};
  const auto states = doc.find("states");
  if (states == doc.end() || !states->is_object()) return;
  for (auto& [name, state] : loop.states) {
    if (!state.terminal || !names_contain(names, name)) continue;
    const auto s = states->find(name);
    if (s != states->end() && s->is_object() && !s->contains("failure")) state.failure = true;
  }
}

/// Reads top-level member `key` of a loop document into `loop`; false when the key is
/// unknown.
inline bool read_loop_field(fsm_loop& loop, const std::string& key, const json& field,
                            const std::string& field_path, diagnostics& out) {
  if (key == "name") {
    if (auto v = read_string(field, field_path, out)) loop.name = std::move(*v);
  } else if (key == "description") {
    if (auto v = read_string(field, field_path, out)) loop.description = std::move(*v);
  } else if (key == "initial") {
    if (auto v = read_string(field, field_path, out)) loop.initial = std::move(*v);
  } else if (key == "states") {
    read_states(field, field_path, loop, out);
  } else if (key == "context") {
    if (expect_object(field, field_path, out) && check_value_tree(field, field_path, out))
      loop.context = field;
  } else if (key == "scope") {
    read_scope(field, field_path, loop, out);
  } else if (key == "max_iterations") {
    if (auto v = read_int(field, field_path, out)) loop.max_iterations = *v;
  } else if (key == "max_steps" || key == "on_max_steps") {
    // read by read_step_caps(), which sees both spellings at once
  } else if (key == "backoff") {
    if (auto v = read_number(field, field_path, out)) loop.backoff = *v;
  } else if (key == "timeout") {
    if (auto v = read_number(field, field_path, out)) loop.timeout = *v;
  } else if (key == "default_timeout") {
    if (auto v = read_number(field, field_path, out)) loop.default_timeout = *v;
  } else if (key == "maintain") {
    if (auto v = read_bool(field, field_path, out)) loop.maintain = *v;
  } else if (key == "llm") {
    loop.llm = parse_llm(field, field_path, out);
  } else if (key == "on_handoff") {
    if (auto v = parse_enum<handoff_policy>(field, field_path, out)) loop.on_handoff = *v;
  } else if (key == "on_max_iterations") {
    if (auto v = read_string(field, field_path, out)) loop.on_max_iterations = std::move(*v);
  } else if (key == "dialect") {
    if (auto v = parse_enum<loop_dialect>(field, field_path, out)) loop.dialect = *v;
  } else if (read_metadata_field(loop, key, field, field_path, out)) {
    // metadata, inputs, lint flags
  } else if (read_test_guard(loop.guards, key, field, field_path, out)) {
    // tamper_guard, prepatch_check (guard_fields.hpp)
  } else if (read_loop_resilience(loop.resilience, key, field, field_path, out)) {
    // max_edge_revisits, circuit (resilience_fields.hpp)
  } else if (read_loop_host(loop.host, key, field, field_path, out)) {
    // pruning_profile:, session_mode: (host_fields.hpp)
  } else if (key == "paradigm") {
    // Provenance only: any string is kept, as the original's FSMLoop keeps it (a spec
    // naming an unknown paradigm, without `initial`, is refused by compile_paradigm).
    if (auto v = read_string(field, field_path, out)) loop.paradigm = std::move(*v);
  } else {
    return false;
  }
  return true;
}

/// Reports a top-level key that is not a loop key, with a hint for the usual mistakes.
inline void report_unknown_loop_key(diagnostics& out, const std::string& key) {
  report_foreign_key(out, "", key, loop_keys);
}

/// One diagnostic for the missing top-level keys, in the original's words ("missing
/// required fields: initial, states").
inline void report_missing_loop_keys(const json& doc, const fsm_loop& loop, diagnostics& out) {
  const bool has_initial = doc.contains("initial");
  const bool has_states = doc.contains("states");
  std::vector<std::string_view> missing;
  if (!doc.contains("name")) missing.emplace_back("name");
  if (!has_initial) missing.emplace_back("initial");
  if (!has_states) missing.emplace_back("states");
  if (missing.empty()) return;
  std::string message = "missing required fields: " + join_names(missing);
  if (!has_initial && loop.paradigm && *loop.paradigm != "fsm")
    message += " (a " + *loop.paradigm +
               " paradigm spec is compiled with compile_paradigm, not parsed as a loop)";
  else if (!has_initial || !has_states)
    message += " (`initial` names the first state; `states` is an object of states)";
  report(out, "", "missing-field", std::move(message));
}

/// Reads a loop document into `loop`, appending every finding to `out`.
LITTLE_LOOPS_INLINE void read_loop(const json& doc, fsm_loop& loop, diagnostics& out) {
  if (!doc.is_object()) {
    report_type(out, "", "a loop document (a JSON object)", doc);
    return;
  }
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!read_loop_field(loop, it.key(), it.value(), member_path("", it.key()), out))
      report_unknown_loop_key(out, it.key());
  }
  read_step_caps(doc, loop, out);
  if (dialect_of(loop) == loop_dialect::current) apply_failure_names(doc, loop);
  report_missing_loop_keys(doc, loop, out);
}

LITTLE_LOOPS_INLINE error invalid_loop_error(diagnostics found) {
  const std::size_t errors = count_errors(found);
  std::string message = fmt::format("invalid loop document: {} error{}", errors,
                                    errors == 1 ? "" : "s");
  for (const auto& d : found) {
    if (d.level != severity::error) continue;
    message += fmt::format(" (first: {}{}{})", d.path, d.path.empty() ? "" : ": ", d.message);
    break;
  }
  return error{errc::invalid_loop, std::move(message), {}, std::move(found)};
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

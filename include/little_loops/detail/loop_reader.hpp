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
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/schema_enums.hpp>
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

inline constexpr std::array<std::string_view, 14> evaluate_keys{
    "type",   "operator", "target",         "tolerance",        "pattern",
    "negate", "path",     "prompt",         "schema",           "min_confidence",
    "uncertain_suffix",   "source",         "previous",         "direction"};

inline constexpr std::array<std::string_view, 13> state_keys{
    "action",  "action_type", "evaluate",    "route",      "next",       "terminal",
    "failure", "capture",     "timeout",     "on_maintain", "on_success", "on_failure",
    "on_error"};

inline constexpr std::array<std::string_view, 14> loop_keys{
    "name",    "description",    "initial", "states", "context",    "scope",
    "max_iterations", "backoff", "timeout", "maintain", "llm",     "on_handoff",
    "on_max_iterations", "paradigm"};

inline constexpr std::array<std::string_view, 4> llm_keys{"enabled", "model", "max_tokens",
                                                           "timeout"};

inline constexpr std::array<std::string_view, 2> route_reserved_keys{"_", "_error"};

/// null, boolean or number: nothing to check inside.
inline bool is_plain_scalar(const json& value) noexcept {
  return value.is_null() || value.is_boolean() || value.is_number();
}

/// Checks an arbitrary JSON value kept verbatim (context, schema, target): nesting depth at
/// most max_value_depth, every string and key well-formed UTF-8 and every number finite (a
/// YAML `.inf`, `.nan` or `1e400`: JSON, and so a compiled loop or a journal, has no way to
/// write it). Iterative (no recursion). Returns false after reporting.
inline bool check_value_tree(const json& root, const std::string& path, diagnostics& out) {
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

/// Reads member `key` of an `evaluate:` object into `config`; false when the key is unknown.
inline bool read_evaluate_field(evaluate_config& config, const std::string& key,
                                const json& field, const std::string& field_path,
                                diagnostics& out) {
  if (key == "type") {
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
  } else {
    return false;
  }
  return true;
}

/// Reads an `evaluate:` object (parse_evaluate_config()).
inline std::optional<evaluate_config> read_evaluate(const json& value, const std::string& path,
                                                    diagnostics& out) {
  const std::size_t errors_before = count_errors(out);
  if (!expect_object(value, path, out)) return std::nullopt;
  evaluate_config config;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!read_evaluate_field(config, it.key(), it.value(), member_path(path, it.key()), out))
      report_unknown_key(out, path, it.key(), evaluate_keys);
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

/// Reads member `key` of a state into `state`; false when the key is unknown.
inline bool read_state_field(state_config& state, const std::string& key, const json& field,
                             const std::string& field_path, diagnostics& out) {
  if (key == "action") {
    if (auto v = read_string(field, field_path, out)) state.action = std::move(*v);
  } else if (key == "action_type") {
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
      report_unknown_key(out, path, it.key(), state_keys);
  }
  return state;
}

inline llm_config parse_llm(const json& value, const std::string& path, diagnostics& out) {
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
  } else if (key == "backoff") {
    if (auto v = read_number(field, field_path, out)) loop.backoff = *v;
  } else if (key == "timeout") {
    if (auto v = read_number(field, field_path, out)) loop.timeout = *v;
  } else if (key == "maintain") {
    if (auto v = read_bool(field, field_path, out)) loop.maintain = *v;
  } else if (key == "llm") {
    loop.llm = parse_llm(field, field_path, out);
  } else if (key == "on_handoff") {
    if (auto v = parse_enum<handoff_policy>(field, field_path, out)) loop.on_handoff = *v;
  } else if (key == "on_max_iterations") {
    if (auto v = read_string(field, field_path, out)) loop.on_max_iterations = std::move(*v);
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
  if (key == "max_steps")
    report_unknown_key(out, "", key, std::array<std::string_view, 1>{"max_iterations"},
                       "use \"max_iterations\" (it counts state executions)");
  else if (key == "on_max_steps")
    report_unknown_key(out, "", key, std::array<std::string_view, 1>{"on_max_iterations"},
                       "use \"on_max_iterations\"");
  else
    report_unknown_key(out, "", key, loop_keys);
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
inline void read_loop(const json& doc, fsm_loop& loop, diagnostics& out) {
  if (!doc.is_object()) {
    report_type(out, "", "a loop document (a JSON object)", doc);
    return;
  }
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!read_loop_field(loop, it.key(), it.value(), member_path("", it.key()), out))
      report_unknown_loop_key(out, it.key());
  }
  report_missing_loop_keys(doc, loop, out);
}

inline error invalid_loop_error(diagnostics found) {
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

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

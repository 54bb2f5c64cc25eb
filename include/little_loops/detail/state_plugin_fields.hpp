// little_loops — reading and writing a state's `type`, `throttle`, `on_throttle_hard`, `learning`
// SPDX-License-Identifier: MIT
#pragma once

// Part of the loop reader (loop_reader.hpp): the state keys of the reference's executor
// that this engine provides beside the seed's (design §6.3). Strict as the rest: an unknown
// member is an error with a did-you-mean, a wrong type or value says what was expected.

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/throttle.hpp>
#include <little_loops/detail/foreign_keys.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/resilience_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::array<std::string_view, 3> throttle_keys{"normal_max", "warn_max", "hard_max"};
inline constexpr std::array<std::string_view, 4> learning_keys{"targets", "targets_csv", "max_retries",
                                                              "max_retries_expr"};
/// The values of a state's `type:`.
inline constexpr std::array<std::string_view, 1> state_types{"learning"};

LITTLE_LOOPS_INLINE void read_throttle(const json& field, const std::string& path, state_config& state,
                          diagnostics& out);
LITTLE_LOOPS_INLINE void read_learning_targets(const json& field, const std::string& path, learning_config& l,
                                  diagnostics& out);
LITTLE_LOOPS_INLINE void read_learning(const json& field, const std::string& path, state_config& state,
                          diagnostics& out);
LITTLE_LOOPS_INLINE void read_state_type(const json& field, const std::string& path, state_config& state,
                            diagnostics& out);
LITTLE_LOOPS_INLINE bool read_state_plugin_field(state_config& state, const std::string& key,
                                    const json& field, const std::string& path,
                                    diagnostics& out);
LITTLE_LOOPS_INLINE void write_state_plugins(json& j, const state_config& s);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `throttle: {normal_max, warn_max, hard_max}`, each an integer ≥ 1.
LITTLE_LOOPS_INLINE void read_throttle(const json& field, const std::string& path, state_config& state,
                          diagnostics& out) {
  if (!expect_object(field, path, out)) return;
  throttle_config t;
  for (auto it = field.begin(); it != field.end(); ++it) {
    const std::string& key = it.key();
    const std::string at = member_path(path, key);
    std::optional<int>* slot = key == "normal_max" ? &t.normal_max
                               : key == "warn_max" ? &t.warn_max
                               : key == "hard_max" ? &t.hard_max
                                                   : nullptr;
    if (slot == nullptr)
      report_unknown_key(out, path, key, throttle_keys);
    else if (auto v = read_int_at_least(it.value(), at, "throttle." + key, 1, out))
      *slot = *v;
  }
  state.throttle = t;
}

/// `learning.targets`: a list of strings.
LITTLE_LOOPS_INLINE void read_learning_targets(const json& field, const std::string& path, learning_config& l,
                                  diagnostics& out) {
  if (!field.is_array()) {
    report_type(out, path, "a list of strings", field);
    return;
  }
  for (std::size_t i = 0; i < field.size(); ++i)
    if (auto v = read_string(field[i], path + "[" + std::to_string(i) + "]", out))
      l.targets.push_back(std::move(*v));
}

/// `learning: {targets, targets_csv, max_retries, max_retries_expr}`.
LITTLE_LOOPS_INLINE void read_learning(const json& field, const std::string& path, state_config& state,
                          diagnostics& out) {
  if (!expect_object(field, path, out)) return;
  learning_config l;
  for (auto it = field.begin(); it != field.end(); ++it) {
    const std::string& key = it.key();
    const std::string at = member_path(path, key);
    if (key == "targets") {
      read_learning_targets(it.value(), at, l, out);
    } else if (key == "targets_csv" || key == "max_retries_expr") {
      auto v = read_string(it.value(), at, out);
      if (v && !v->empty()) (key == "targets_csv" ? l.targets_csv : l.max_retries_expr) = std::move(*v);
    } else if (key == "max_retries") {
      if (auto v = read_int_at_least(it.value(), at, "learning.max_retries", 0, out)) l.max_retries = *v;
    } else {
      report_unknown_key(out, path, key, learning_keys);
    }
  }
  state.learning = std::move(l);
}

/// `type:` — a string naming one of state_types.
LITTLE_LOOPS_INLINE void read_state_type(const json& field, const std::string& path, state_config& state,
                            diagnostics& out) {
  auto text = read_string(field, path, out);
  if (!text) return;
  if (names_contain(state_types, *text)) {
    state.type = std::move(*text);
    return;
  }
  std::string message = "unknown state type " + quote_excerpt(*text);
  std::string hint = did_you_mean(*text, state_types);
  message += hint.empty() ? " (the only state type is \"learning\")" : hint;
  report(out, path, "unknown-value", std::move(message));
}

/// Reads member `key` of a state when it is one of the keys above; false otherwise.
LITTLE_LOOPS_INLINE bool read_state_plugin_field(state_config& state, const std::string& key,
                                    const json& field, const std::string& path,
                                    diagnostics& out) {
  if (key == "type") {
    read_state_type(field, path, state, out);
  } else if (key == "throttle") {
    read_throttle(field, path, state, out);
  } else if (key == "on_throttle_hard") {
    if (auto v = read_string(field, path, out)) state.on_throttle_hard = std::move(*v);
  } else if (key == "learning") {
    read_learning(field, path, state, out);
  } else {
    return false;
  }
  return true;
}

/// The keys above, into the JSON form of a state (each only when set).
LITTLE_LOOPS_INLINE void write_state_plugins(json& j, const state_config& s) {
  if (s.type) j["type"] = *s.type;
  if (s.throttle) {
    json t = json::object();
    if (s.throttle->normal_max) t["normal_max"] = *s.throttle->normal_max;
    if (s.throttle->warn_max) t["warn_max"] = *s.throttle->warn_max;
    if (s.throttle->hard_max) t["hard_max"] = *s.throttle->hard_max;
    j["throttle"] = std::move(t);
  }
  if (s.on_throttle_hard) j["on_throttle_hard"] = *s.on_throttle_hard;
  if (const auto& l = s.learning) {
    json out = {{"targets", l->targets}, {"max_retries", l->max_retries}};
    if (l->targets_csv) out["targets_csv"] = *l->targets_csv;
    if (l->max_retries_expr) out["max_retries_expr"] = *l->max_retries_expr;
    j["learning"] = std::move(out);
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

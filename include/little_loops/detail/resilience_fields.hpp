// little_loops — reading and writing the resilience keys of states, evaluators and loops
// SPDX-License-Identifier: MIT
#pragma once

// Part of the loop reader (loop_reader.hpp): `retry:`, `catch:`, the per-state `backoff`, the
// reference's rate-limit keys, the stall evaluators' fields, `max_edge_revisits` and
// `circuit:`. Each reader returns false for a key it does not own; ranges are checked here,
// where the value is read, and state names where every target is (validation_rules.hpp).

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/resilience.hpp>
#include <little_loops/detail/foreign_keys.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::array<std::string_view, 8> state_resilience_keys{
    "retry", "catch", "backoff", "max_rate_limit_retries", "on_rate_limit_exhausted",
    "rate_limit_backoff_base_seconds", "rate_limit_max_wait_seconds",
    "rate_limit_long_wait_ladder"};
inline constexpr std::array<std::string_view, 9> retry_policy_keys{
    "on", "interval", "backoff_rate", "max_delay", "delays", "jitter", "max_attempts",
    "max_duration", "description"};
inline constexpr std::array<std::string_view, 6> stall_keys{
    "scope", "max_stall", "history_file", "epsilon", "track", "max_repeat"};
inline constexpr std::array<std::string_view, 2> loop_resilience_keys{"max_edge_revisits",
                                                                      "circuit"};
inline constexpr std::array<std::string_view, 5> repeated_failure_keys{
    "window", "on_repeated_failure", "progress_paths", "exclude_paths", "recurrent_window"};

/// The longest wait a policy may name (as schema.hpp's max_duration_seconds: clock
/// durations cannot overflow).
inline constexpr double max_seconds = 1e9;

LITTLE_LOOPS_INLINE std::optional<double> read_seconds(const json& field, const std::string& path,
                                          double minimum, diagnostics& out);
LITTLE_LOOPS_INLINE std::optional<int> read_int_at_least(const json& field, const std::string& path,
                                            std::string_view name, int minimum,
                                            diagnostics& out);
LITTLE_LOOPS_INLINE void read_seconds_list(const json& field, const std::string& path, double minimum,
                              std::vector<double>& to, diagnostics& out);
LITTLE_LOOPS_INLINE std::optional<std::vector<std::string>> read_names(const json& field,
                                                          const std::string& path,
                                                          diagnostics& out);
LITTLE_LOOPS_INLINE void read_error_match(const json& item, const std::string& path, retry_policy& policy,
                             diagnostics& out);
LITTLE_LOOPS_INLINE void read_jitter(const json& field, const std::string& path, retry_policy& policy,
                        diagnostics& out);
LITTLE_LOOPS_INLINE bool read_retry_field(retry_policy& p, const std::string& key, const json& field,
                             const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE void read_retry_list(const json& field, const std::string& path,
                            std::vector<retry_policy>& to, diagnostics& out);
LITTLE_LOOPS_INLINE void read_catch_table(const json& field, const std::string& path,
                             std::vector<std::pair<std::string, std::string>>& to,
                             diagnostics& out);
LITTLE_LOOPS_INLINE bool read_state_resilience(state_resilience& r, const std::string& key, const json& field,
                                  const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE bool read_stall_field(stall_config& s, const std::string& key, const json& field,
                             const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE void read_circuit(const json& field, const std::string& path, loop_resilience& r,
                         diagnostics& out);
LITTLE_LOOPS_INLINE bool read_loop_resilience(loop_resilience& r, const std::string& key, const json& field,
                                 const std::string& path, diagnostics& out);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// A number of seconds in [minimum, max_seconds]; reported otherwise.
LITTLE_LOOPS_INLINE std::optional<double> read_seconds(const json& field, const std::string& path,
                                          double minimum, diagnostics& out) {
  auto v = read_number(field, path, out);
  if (!v) return std::nullopt;
  if (*v < minimum || *v > max_seconds) {
    report(out, path, "out-of-range",
           fmt::format("expected seconds from {} to {}, got {}", minimum, max_seconds, field.dump()));
    return std::nullopt;
  }
  return v;
}

/// An integer ≥ `minimum`; reported otherwise (the reference's `must be >= N, got M`).
LITTLE_LOOPS_INLINE std::optional<int> read_int_at_least(const json& field, const std::string& path,
                                            std::string_view name, int minimum,
                                            diagnostics& out) {
  auto v = read_int(field, path, out);
  if (!v) return std::nullopt;
  if (*v < minimum) {
    report(out, path, "out-of-range", fmt::format("'{}' must be >= {}, got {}", name, minimum, *v));
    return std::nullopt;
  }
  return v;
}

/// A list of seconds, each ≥ `minimum` (a ladder of waits).
LITTLE_LOOPS_INLINE void read_seconds_list(const json& field, const std::string& path, double minimum,
                              std::vector<double>& to, diagnostics& out) {
  if (!field.is_array() || field.empty()) {
    report(out, path, field.is_array() ? "empty-value" : "wrong-type",
           fmt::format("expected a non-empty list of seconds, got {}", describe_value(field)));
    return;
  }
  for (std::size_t i = 0; i < field.size(); ++i)
    if (auto v = read_seconds(field[i], index_path(path, i), minimum, out)) to.push_back(*v);
}

/// A list of strings.
LITTLE_LOOPS_INLINE std::optional<std::vector<std::string>> read_names(const json& field,
                                                          const std::string& path,
                                                          diagnostics& out) {
  if (!field.is_array()) {
    report_type(out, path, "a list of strings", field);
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < field.size(); ++i)
    if (auto v = read_string(field[i], index_path(path, i), out)) names.push_back(std::move(*v));
  return names;
}

/// One error class (error_class_names) or an exit code from 1 to 255, into `policy`.
LITTLE_LOOPS_INLINE void read_error_match(const json& item, const std::string& path, retry_policy& policy,
                             diagnostics& out) {
  if (item.is_number_integer()) {
    const auto code = item.get<std::int64_t>();
    if (code < 1 || code > 255)
      report(out, path, "out-of-range", "an exit code in 'on' is from 1 to 255, got " + item.dump());
    else
      policy.exit_codes.push_back(static_cast<int>(code));
    return;
  }
  auto name = read_string(item, path, out);
  if (!name) return;
  if (names_contain(error_class_names, *name)) {
    policy.on.push_back(std::move(*name));
    return;
  }
  report(out, path, "unknown-value",
         "unknown error class " + quote_excerpt(*name) + did_you_mean(*name, error_class_names) +
             "; expected one of: " + join_names(error_class_names) + ", or an exit code");
}

/// `jitter:` — `none`, `full`, or seconds.
LITTLE_LOOPS_INLINE void read_jitter(const json& field, const std::string& path, retry_policy& policy,
                        diagnostics& out) {
  if (field.is_string()) {
    const auto& text = field.get_ref<const std::string&>();
    if (text == "full") {
      policy.full_jitter = true;
    } else if (text != "none") {
      report(out, path, "unknown-value",
             "unknown jitter " + quote_excerpt(text) +
                 did_you_mean(text, std::array<std::string_view, 2>{"none", "full"}) +
                 "; expected \"none\", \"full\" or a number of seconds");
    }
    return;
  }
  if (auto v = read_seconds(field, path, 0, out)) policy.jitter = *v;
}

/// Member `key` of a `retry:` entry; false when unknown.
LITTLE_LOOPS_INLINE bool read_retry_field(retry_policy& p, const std::string& key, const json& field,
                             const std::string& path, diagnostics& out) {
  if (key == "on") {
    if (field.is_array()) {
      for (std::size_t i = 0; i < field.size(); ++i) read_error_match(field[i], index_path(path, i), p, out);
    } else {
      read_error_match(field, path, p, out);
    }
  } else if (key == "interval") {
    if (auto v = read_seconds(field, path, 0, out)) p.interval = *v;
  } else if (key == "backoff_rate") {
    if (auto v = read_seconds(field, path, 1, out)) p.backoff_rate = *v;
  } else if (key == "max_delay") {
    if (auto v = read_seconds(field, path, 0, out)) p.max_delay = *v;
  } else if (key == "delays") {
    read_seconds_list(field, path, 0, p.delays, out);
  } else if (key == "jitter") {
    read_jitter(field, path, p, out);
  } else if (key == "max_attempts") {
    if (auto v = read_int_at_least(field, path, "max_attempts", 0, out)) p.max_attempts = *v;
  } else if (key == "max_duration") {
    if (auto v = read_seconds(field, path, 0, out)) p.max_duration = *v;
  } else if (key == "description") {
    (void)read_string(field, path, out);  // a note for readers, not kept
  } else {
    return false;
  }
  return true;
}

/// `retry:` — a list of entries, each with `on:`.
LITTLE_LOOPS_INLINE void read_retry_list(const json& field, const std::string& path,
                            std::vector<retry_policy>& to, diagnostics& out) {
  if (!field.is_array()) {
    report_type(out, path, "a list of retry entries", field);
    return;
  }
  for (std::size_t i = 0; i < field.size(); ++i) {
    const std::string item_path = index_path(path, i);
    if (!expect_object(field[i], item_path, out)) continue;
    retry_policy policy;
    for (auto it = field[i].begin(); it != field[i].end(); ++it)
      if (!read_retry_field(policy, it.key(), it.value(), member_path(item_path, it.key()), out))
        report_unknown_key(out, item_path, it.key(), retry_policy_keys);
    if (!field[i].contains("on"))
      report(out, item_path, "missing-field",
             "a retry entry needs 'on': the error classes or exit codes it retries");
    to.push_back(std::move(policy));
  }
}

/// `catch:` — error class → state.
LITTLE_LOOPS_INLINE void read_catch_table(const json& field, const std::string& path,
                             std::vector<std::pair<std::string, std::string>>& to,
                             diagnostics& out) {
  if (!expect_object(field, path, out)) return;
  for (auto it = field.begin(); it != field.end(); ++it) {
    const std::string item_path = member_path(path, it.key());
    if (!names_contain(error_class_names, it.key())) {
      report(out, item_path, "unknown-value",
             "unknown error class " + quote_excerpt(it.key()) +
                 did_you_mean(it.key(), error_class_names) +
                 "; expected one of: " + join_names(error_class_names));
      continue;
    }
    if (auto target = read_string(it.value(), item_path, out)) to.emplace_back(it.key(), std::move(*target));
  }
}

/// Member `key` of a state that is a resilience key; false otherwise.
LITTLE_LOOPS_INLINE bool read_state_resilience(state_resilience& r, const std::string& key, const json& field,
                                  const std::string& path, diagnostics& out) {
  if (key == "retry") {
    read_retry_list(field, path, r.retry, out);
  } else if (key == "catch") {
    read_catch_table(field, path, r.catches, out);
  } else if (key == "backoff") {
    if (auto v = read_seconds(field, path, 0, out)) r.backoff = *v;
  } else if (key == "max_rate_limit_retries") {
    if (auto v = read_int_at_least(field, path, key, 1, out)) r.max_rate_limit_retries = *v;
  } else if (key == "on_rate_limit_exhausted") {
    if (auto v = read_string(field, path, out)) r.on_rate_limit_exhausted = std::move(*v);
  } else if (key == "rate_limit_backoff_base_seconds") {
    if (auto v = read_seconds(field, path, 1, out)) r.rate_limit_backoff_base_seconds = *v;
  } else if (key == "rate_limit_max_wait_seconds") {
    if (auto v = read_seconds(field, path, 1, out)) r.rate_limit_max_wait_seconds = *v;
  } else if (key == "rate_limit_long_wait_ladder") {
    read_seconds_list(field, path, 1, r.rate_limit_long_wait_ladder, out);
  } else {
    return false;
  }
  return true;
}

/// Member `key` of an `evaluate:` object that is a stall evaluator's field; false otherwise.
LITTLE_LOOPS_INLINE bool read_stall_field(stall_config& s, const std::string& key, const json& field,
                             const std::string& path, diagnostics& out) {
  if (key == "scope") {
    if (auto v = read_names(field, path, out)) s.scope = std::move(*v);
  } else if (key == "max_stall") {
    if (auto v = read_int_at_least(field, path, "max_stall", 1, out)) s.max_stall = *v;
  } else if (key == "history_file") {
    if (auto v = read_string(field, path, out)) s.history_file = std::move(*v);
  } else if (key == "epsilon") {
    if (auto v = read_seconds(field, path, 0, out)) s.epsilon = *v;
  } else if (key == "track") {
    if (auto v = read_names(field, path, out)) s.track = std::move(*v);
  } else if (key == "max_repeat") {
    if (auto v = read_int_at_least(field, path, "max_repeat", 1, out)) s.max_repeat = *v;
  } else {
    return false;
  }
  return true;
}

/// `circuit: {repeated_failure: {...}}`.
LITTLE_LOOPS_INLINE void read_circuit(const json& field, const std::string& path, loop_resilience& r,
                         diagnostics& out) {
  if (!expect_object(field, path, out)) return;
  r.circuit = true;
  for (auto it = field.begin(); it != field.end(); ++it) {
    const std::string rf_path = member_path(path, it.key());
    if (it.key() != "repeated_failure") {
      report_unknown_key(out, path, it.key(), std::array<std::string_view, 1>{"repeated_failure"});
      continue;
    }
    if (it.value().is_null()) continue;  // the reference: disabled
    if (!expect_object(it.value(), rf_path, out)) continue;
    repeated_failure_config rf;
    for (auto m = it.value().begin(); m != it.value().end(); ++m) {
      const std::string& key = m.key();
      const std::string at = member_path(rf_path, key);
      if (key == "window") {
        if (auto v = read_int_at_least(m.value(), at, "circuit.repeated_failure.window", 1, out)) rf.window = *v;
      } else if (key == "on_repeated_failure") {
        if (auto v = read_string(m.value(), at, out)) rf.on_repeated_failure = std::move(*v);
      } else if (key == "progress_paths" || key == "exclude_paths") {
        if (auto v = read_names(m.value(), at, out))
          (key == "progress_paths" ? rf.progress_paths : rf.exclude_paths) = std::move(*v);
      } else if (key == "recurrent_window") {
        if (auto v = read_int_at_least(m.value(), at, "circuit.repeated_failure.recurrent_window", 2, out))
          rf.recurrent_window = *v;
      } else {
        report_unknown_key(out, rf_path, key, repeated_failure_keys);
      }
    }
    r.repeated_failure = std::move(rf);
  }
}

/// A top-level resilience key; false otherwise.
LITTLE_LOOPS_INLINE bool read_loop_resilience(loop_resilience& r, const std::string& key, const json& field,
                                 const std::string& path, diagnostics& out) {
  if (key == "max_edge_revisits") {
    if (auto v = read_int_at_least(field, path, "max_edge_revisits", 1, out)) r.max_edge_revisits = *v;
  } else if (key == "circuit") {
    read_circuit(field, path, r, out);
  } else {
    return false;
  }
  return true;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// ---- writing (to_json of the records, defaults omitted) ----

LITTLE_LOOPS_INLINE json retry_policy_json(const retry_policy& p);
LITTLE_LOOPS_INLINE void write_state_resilience(json& j, const state_resilience& r);
LITTLE_LOOPS_INLINE void write_stall_fields(json& j, const stall_config& s);
LITTLE_LOOPS_INLINE void write_loop_resilience(json& j, const loop_resilience& r);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE json retry_policy_json(const retry_policy& p) {
  json j = json::object();
  json on = json::array();
  for (const auto& c : p.on) on.push_back(c);
  for (int code : p.exit_codes) on.push_back(code);
  j["on"] = std::move(on);
  if (!p.delays.empty()) {
    json delays = json::array();
    for (double d : p.delays) delays.push_back(number_json(d));
    j["delays"] = std::move(delays);
  } else {
    j["interval"] = number_json(p.interval);
    j["backoff_rate"] = number_json(p.backoff_rate);
  }
  if (p.max_delay) j["max_delay"] = number_json(*p.max_delay);
  if (p.full_jitter) j["jitter"] = "full";
  else if (p.jitter) j["jitter"] = number_json(*p.jitter);
  if (p.max_attempts) j["max_attempts"] = *p.max_attempts;
  if (p.max_duration) j["max_duration"] = number_json(*p.max_duration);
  return j;
}

/// Writes the state's resilience keys into its object `j`.
LITTLE_LOOPS_INLINE void write_state_resilience(json& j, const state_resilience& r) {
  if (!r.retry.empty()) {
    json list = json::array();
    for (const auto& p : r.retry) list.push_back(retry_policy_json(p));
    j["retry"] = std::move(list);
  }
  if (!r.catches.empty()) {
    json table = json::object();
    for (const auto& [cls, target] : r.catches) table[cls] = target;
    j["catch"] = std::move(table);
  }
  if (r.backoff) j["backoff"] = number_json(*r.backoff);
  if (r.max_rate_limit_retries) j["max_rate_limit_retries"] = *r.max_rate_limit_retries;
  if (r.on_rate_limit_exhausted) j["on_rate_limit_exhausted"] = *r.on_rate_limit_exhausted;
  if (r.rate_limit_backoff_base_seconds)
    j["rate_limit_backoff_base_seconds"] = number_json(*r.rate_limit_backoff_base_seconds);
  if (r.rate_limit_max_wait_seconds)
    j["rate_limit_max_wait_seconds"] = number_json(*r.rate_limit_max_wait_seconds);
  if (!r.rate_limit_long_wait_ladder.empty()) {
    json ladder = json::array();
    for (double d : r.rate_limit_long_wait_ladder) ladder.push_back(number_json(d));
    j["rate_limit_long_wait_ladder"] = std::move(ladder);
  }
}

/// Writes the stall fields into an `evaluate:` object `j`.
LITTLE_LOOPS_INLINE void write_stall_fields(json& j, const stall_config& s) {
  if (s.scope) j["scope"] = *s.scope;
  if (s.max_stall) j["max_stall"] = *s.max_stall;
  if (s.history_file) j["history_file"] = *s.history_file;
  if (s.epsilon) j["epsilon"] = number_json(*s.epsilon);
  if (s.track) j["track"] = *s.track;
  if (s.max_repeat) j["max_repeat"] = *s.max_repeat;
}

/// Writes `max_edge_revisits` and `circuit` into the loop object `j`.
LITTLE_LOOPS_INLINE void write_loop_resilience(json& j, const loop_resilience& r) {
  if (r.max_edge_revisits) j["max_edge_revisits"] = *r.max_edge_revisits;
  if (!r.circuit) return;
  json circuit = json::object();
  if (const auto& rf = r.repeated_failure) {
    json o = json::object();
    if (rf->window != 3) o["window"] = rf->window;
    if (rf->on_repeated_failure != "abort") o["on_repeated_failure"] = rf->on_repeated_failure;
    if (!rf->progress_paths.empty()) o["progress_paths"] = rf->progress_paths;
    if (!rf->exclude_paths.empty()) o["exclude_paths"] = rf->exclude_paths;
    if (rf->recurrent_window) o["recurrent_window"] = *rf->recurrent_window;
    circuit["repeated_failure"] = std::move(o);
  }
  j["circuit"] = std::move(circuit);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

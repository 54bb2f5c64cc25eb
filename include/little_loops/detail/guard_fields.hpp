// little_loops — reading, writing and checking the test guards of states and loops
// SPDX-License-Identifier: MIT
#pragma once

// Part of the loop reader (loop_reader.hpp) and of validation (validation.hpp): the
// `tamper_guard:` and `prepatch_check:` keys (guards.hpp), at the top of a loop and in a
// state. A value of the wrong type is an error where it is read; a string outside the
// key's values is a warning, as in the reference, which its loop-level `*_ok` flag silences
// (validation_rules.hpp: lint_flag_codes).

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/guards.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/foreign_keys.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::array<std::string_view, 2> test_guard_keys{"tamper_guard", "prepatch_check"};

LITTLE_LOOPS_INLINE bool read_test_guard(test_guards& g, const std::string& key, const json& field,
                            const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE void write_test_guards(json& j, const test_guards& g);
LITTLE_LOOPS_INLINE void check_test_guards(const test_guards& g, std::string_view base, diagnostics& out);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// A test-guard key (`tamper_guard`, `prepatch_check`) into `g`; false for another key.
LITTLE_LOOPS_INLINE bool read_test_guard(test_guards& g, const std::string& key, const json& field,
                            const std::string& path, diagnostics& out) {
  std::optional<std::string>* slot = key == "tamper_guard"     ? &g.tamper_guard
                                     : key == "prepatch_check" ? &g.prepatch_check
                                                               : nullptr;
  if (slot == nullptr) return false;
  if (auto v = read_string(field, path, out)) *slot = std::move(*v);
  return true;
}

/// Writes the test guards into a state or loop object `j`.
LITTLE_LOOPS_INLINE void write_test_guards(json& j, const test_guards& g) {
  if (g.tamper_guard) j["tamper_guard"] = *g.tamper_guard;
  if (g.prepatch_check) j["prepatch_check"] = *g.prepatch_check;
}

/// `unknown-tamper-guard` / `unknown-prepatch-check` (warnings) for the guards `g` at `base`
/// ("" for the loop), each naming the values it may take.
LITTLE_LOOPS_INLINE void check_test_guards(const test_guards& g, std::string_view base, diagnostics& out) {
  const auto check = [&](const std::optional<std::string>& value, std::string_view key,
                         const auto& values, std::string_view code) {
    if (!value || names_contain(values, *value)) return;
    std::string names;
    for (std::string_view v : values) names += (names.empty() ? "" : ", ") + std::string(v);
    report(out, base.empty() ? std::string(key) : member_path(base, key), code,
           fmt::format("{} {} is not one of {}: the guard is off (set `{}_ok: true` at the top "
                       "of the loop to silence this)",
                       key, quote_excerpt(*value), names, key),
           severity::warning);
  };
  check(g.tamper_guard, "tamper_guard", tamper_guard_values, "unknown-tamper-guard");
  check(g.prepatch_check, "prepatch_check", prepatch_check_values, "unknown-prepatch-check");
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// The guards of every state that runs an action, as render_guards_json() (render.hpp).
template <class Loop>
json guards_json(const Loop& loop) {
  json out = json::object();
  write_test_guards(out, loop.guards);
  json states = json::object();
  for (const auto& [name, state] : loop.states) {
    if (!state.action || state.terminal) continue;
    json g = json::object();
    const auto effective = [&](const std::optional<std::string>& own,
                               const std::optional<std::string>& dflt, const auto& values,
                               const char* key) {
      const std::optional<std::string>& v = own && !own->empty() ? own : dflt;
      if (v && names_contain(values, *v)) g[key] = *v;
    };
    effective(state.guards.tamper_guard, loop.guards.tamper_guard, tamper_guard_values, "tamper_guard");
    effective(state.guards.prepatch_check, loop.guards.prepatch_check, prepatch_check_values,
              "prepatch_check");
    if (!g.empty()) states[name] = std::move(g);
  }
  if (!states.empty()) out["states"] = std::move(states);
  return out;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

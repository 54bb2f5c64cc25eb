// little_loops — the retry and catch policy a state runs with, and how `show` writes it
// SPDX-License-Identifier: MIT
#pragma once

// A state's effective policy (design §6.6) is, in order: its written `retry:` entries; the
// entries its reference rate-limit keys map onto; and, in the current dialect, for a state
// with an action, the reference's built-in ladders for the error classes nothing above
// names. `catch:` likewise: written entries first, then `rate_limit` → on_rate_limit_exhausted
// (else on_error) and `auth` → on_error. The executor (resilience_runtime.hpp) and `show`
// (render.hpp) read the same policy.

#include <little_loops/config.hpp>
#include <little_loops/resilience.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/foreign_keys.hpp>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// The reference's rate-limit defaults (executor.py): 3 short retries of 30 s doubling with
/// up to 30 s of jitter, then waits of 300, 900, 1800 and 3600 s until 21600 s were waited.
inline constexpr int default_rate_limit_retries = 3;
inline constexpr double default_rate_limit_base = 30;
inline constexpr double default_rate_limit_max_wait = 21600;
inline constexpr std::array<double, 4> default_long_wait_ladder{300, 900, 1800, 3600};
/// API server errors: 2 retries 30 s apart, then the ordinary routes.
inline constexpr int default_api_error_retries = 2;
inline constexpr double default_api_error_backoff = 30;
/// Infra teardowns (exit 143 after the agent's result): 2 re-runs 5 s apart.
inline constexpr int default_infra_retries = 2;
inline constexpr double default_infra_backoff = 5;

/// What a state runs with: retry entries in the order they are tried, catch entries.
struct policy_set {
  std::vector<retry_policy> retry;
  std::vector<std::pair<std::string, std::string>> catches;
};

LITTLE_LOOPS_INLINE bool names_class(const retry_policy& p, std::string_view cls) noexcept;
LITTLE_LOOPS_INLINE void add_rate_limit_tiers(const state_resilience& r, std::vector<retry_policy>& to);
LITTLE_LOOPS_INLINE bool has_rate_limit_keys(const state_resilience& r) noexcept;
LITTLE_LOOPS_INLINE bool retries_class(const std::vector<retry_policy>& list, std::string_view cls);
LITTLE_LOOPS_INLINE bool catches_class(const std::vector<std::pair<std::string, std::string>>& list,
                          std::string_view cls);
LITTLE_LOOPS_INLINE const std::string* on_error_of(const state_config& s);
LITTLE_LOOPS_INLINE policy_set effective_policies(const state_config& s, loop_dialect dialect);
LITTLE_LOOPS_INLINE std::optional<int> attempts_of(const retry_policy& p) noexcept;
LITTLE_LOOPS_INLINE std::string describe_policy(const retry_policy& p);
LITTLE_LOOPS_INLINE std::optional<int> edge_revisit_cap(const fsm_loop& loop, loop_dialect dialect) noexcept;
LITTLE_LOOPS_INLINE std::string render_policies(const fsm_loop& loop, loop_dialect dialect);
LITTLE_LOOPS_INLINE json policies_json(const fsm_loop& loop, loop_dialect dialect);
LITTLE_LOOPS_INLINE void render_stall_fields(const stall_config& s, std::vector<std::string>& parts);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE bool names_class(const retry_policy& p, std::string_view cls) noexcept {
  for (const auto& c : p.on)
    if (c == cls || c == "any") return true;
  return false;
}

/// The two rate-limit tiers of the reference, from the state's keys (defaults where unset).
LITTLE_LOOPS_INLINE void add_rate_limit_tiers(const state_resilience& r, std::vector<retry_policy>& to) {
  retry_policy short_tier;
  short_tier.on = {"rate_limit"};
  short_tier.interval = r.rate_limit_backoff_base_seconds.value_or(default_rate_limit_base);
  short_tier.backoff_rate = 2;
  short_tier.jitter = short_tier.interval;
  short_tier.max_attempts = r.max_rate_limit_retries.value_or(default_rate_limit_retries);
  short_tier.written = false;
  retry_policy long_tier;
  long_tier.on = {"rate_limit"};
  if (r.rate_limit_long_wait_ladder.empty())
    long_tier.delays.assign(default_long_wait_ladder.begin(), default_long_wait_ladder.end());
  else
    long_tier.delays = r.rate_limit_long_wait_ladder;
  long_tier.max_duration = r.rate_limit_max_wait_seconds.value_or(default_rate_limit_max_wait);
  long_tier.written = false;
  to.push_back(std::move(short_tier));
  to.push_back(std::move(long_tier));
}

LITTLE_LOOPS_INLINE bool has_rate_limit_keys(const state_resilience& r) noexcept {
  return r.max_rate_limit_retries || r.on_rate_limit_exhausted || r.rate_limit_backoff_base_seconds ||
         r.rate_limit_max_wait_seconds || !r.rate_limit_long_wait_ladder.empty();
}

LITTLE_LOOPS_INLINE bool retries_class(const std::vector<retry_policy>& list, std::string_view cls) {
  for (const auto& p : list)
    if (names_class(p, cls)) return true;
  return false;
}

LITTLE_LOOPS_INLINE bool catches_class(const std::vector<std::pair<std::string, std::string>>& list,
                          std::string_view cls) {
  for (const auto& [c, target] : list)
    if (c == cls || c == "any") return true;
  return false;
}

/// The state's `on_error` shorthand, if it has one.
LITTLE_LOOPS_INLINE const std::string* on_error_of(const state_config& s) {
  const auto it = s.on.find("error");
  return it == s.on.end() ? nullptr : &it->second;
}

/// The effective policy of `s` in a loop of `dialect` (see the top of this file).
LITTLE_LOOPS_INLINE policy_set effective_policies(const state_config& s, loop_dialect dialect) {
  const state_resilience& r = s.resilience;
  policy_set set;
  set.retry = r.retry;
  set.catches = r.catches;
  const bool defaults = dialect == loop_dialect::current && s.action.has_value() && !s.terminal;
  if ((has_rate_limit_keys(r) || defaults) && !retries_class(set.retry, "rate_limit"))
    add_rate_limit_tiers(r, set.retry);
  const auto add_flat = [&](std::string_view cls, double interval, int attempts) {
    if (!defaults || retries_class(set.retry, cls)) return;
    retry_policy p;
    p.on = {std::string(cls)};
    p.interval = interval;
    p.backoff_rate = 1;
    p.max_attempts = attempts;
    p.written = false;
    set.retry.push_back(std::move(p));
  };
  add_flat("api_error", default_api_error_backoff, default_api_error_retries);
  add_flat("infra", default_infra_backoff, default_infra_retries);
  const std::string* on_error = on_error_of(s);
  if (!catches_class(set.catches, "rate_limit")) {
    if (r.on_rate_limit_exhausted)
      set.catches.emplace_back("rate_limit", *r.on_rate_limit_exhausted);
    else if (on_error && (defaults || has_rate_limit_keys(r)))
      set.catches.emplace_back("rate_limit", *on_error);
  }
  if (defaults && on_error && !catches_class(set.catches, "auth"))
    set.catches.emplace_back("auth", *on_error);
  return set;
}

/// The most attempts an entry allows (nullopt: unbounded, when only max_duration ends it).
LITTLE_LOOPS_INLINE std::optional<int> attempts_of(const retry_policy& p) noexcept {
  if (p.max_attempts) return *p.max_attempts;
  if (p.max_duration) return std::nullopt;
  return 3;
}

/// `rate_limit: 30s ×2 (+≤30s jitter), 3 attempts` — one line of `show`.
LITTLE_LOOPS_INLINE std::string describe_policy(const retry_policy& p) {
  std::string on;
  for (const auto& c : p.on) on += (on.empty() ? "" : ", ") + c;
  for (int code : p.exit_codes) on += (on.empty() ? "" : ", ") + std::to_string(code);
  std::string text = on + ": ";
  if (!p.delays.empty()) {
    text += "waits";
    for (std::size_t i = 0; i < p.delays.size(); ++i)
      text += fmt::format("{}{}s", i == 0 ? " " : ", ", p.delays[i]);
    text += " (the last repeats)";
  } else {
    text += fmt::format("{}s", p.interval);
    if (p.backoff_rate != 1) text += fmt::format(" \u00d7{}", p.backoff_rate);
  }
  if (p.max_delay) text += fmt::format(", at most {}s each", *p.max_delay);
  if (p.full_jitter) text += ", full jitter";
  else if (p.jitter && *p.jitter > 0) text += fmt::format(" (+\u2264{}s jitter)", *p.jitter);
  if (const auto n = attempts_of(p)) text += fmt::format(", {} attempt{}", *n, *n == 1 ? "" : "s");
  if (p.max_duration) text += fmt::format(", until {}s waited", *p.max_duration);
  if (!p.written) text += " [built in]";
  return text;
}

/// The edge cap of a loop: as written, else 100 in the current dialect, none in the seed.
LITTLE_LOOPS_INLINE std::optional<int> edge_revisit_cap(const fsm_loop& loop, loop_dialect dialect) noexcept {
  if (loop.resilience.max_edge_revisits) return loop.resilience.max_edge_revisits;
  if (dialect == loop_dialect::current) return 100;
  return std::nullopt;
}

/// The `Policies:` block of `show`: in the current dialect the built-in entries once, then
/// per state the entries it writes or its rate-limit keys give; then `max_edge_revisits`
/// and `circuit`. Empty when there is nothing to say.
LITTLE_LOOPS_INLINE std::string render_policies(const fsm_loop& loop, loop_dialect dialect) {
  std::string out;
  for (const auto& [name, state] : loop.states) {
    const policy_set set = effective_policies(state, loop_dialect::seed);
    std::vector<std::string> items;
    for (const auto& p : set.retry) items.push_back("retry " + describe_policy(p));
    for (const auto& [cls, target] : set.catches) items.push_back("catch " + cls + "\u2192" + target);
    if (state.resilience.backoff) items.push_back(fmt::format("backoff {}s", *state.resilience.backoff));
    if (items.empty()) continue;
    out += "  " + name + ":\n";
    for (const auto& item : items) out += "    " + item + "\n";
  }
  if (dialect == loop_dialect::current && !loop.states.empty()) {
    state_config probe;
    probe.action = "";
    std::string built_in;
    for (const auto& p : effective_policies(probe, dialect).retry)
      built_in += "    retry " + describe_policy(p) + "\n";
    out = "  every state with an action, unless it names the class:\n" + built_in +
          "    catch rate_limit, auth\u2192its on_error\n" + out;
  }
  if (!out.empty()) out = "Policies:\n" + out;
  const auto& lr = loop.resilience;
  if (const auto cap = edge_revisit_cap(loop, dialect))
    out += fmt::format("Max edge revisits: {}{}\n", *cap, lr.max_edge_revisits ? "" : " (built in)");
  if (const auto& rf = lr.repeated_failure) {
    out += fmt::format("Circuit: the same (state, exit code, verdict) {} times in a row", rf->window);
    if (rf->recurrent_window) out += fmt::format(" or {} times in all", *rf->recurrent_window);
    out += " \u2192 " + rf->on_repeated_failure + "\n";
  }
  return out;
}

/// The effective policies as JSON (`validate --json`): `states` maps each state with any to
/// `{retry: [...], catch: {class: state}, backoff}` (built-in entries carry `built_in: true`);
/// then `max_edge_revisits` (null: no cap) and `circuit` (null: none).
LITTLE_LOOPS_INLINE json policies_json(const fsm_loop& loop, loop_dialect dialect) {
  json states = json::object();
  for (const auto& [name, state] : loop.states) {
    const policy_set set = effective_policies(state, dialect);
    json entry = json::object();
    if (!set.retry.empty()) {
      json list = json::array();
      for (const auto& p : set.retry) {
        json j = retry_policy_json(p);
        if (!p.written) j["built_in"] = true;
        list.push_back(std::move(j));
      }
      entry["retry"] = std::move(list);
    }
    if (!set.catches.empty()) {
      json table = json::object();
      for (const auto& [cls, target] : set.catches) table[cls] = target;
      entry["catch"] = std::move(table);
    }
    if (state.resilience.backoff) entry["backoff"] = number_json(*state.resilience.backoff);
    if (!entry.empty()) states[name] = std::move(entry);
  }
  json circuit = nullptr;
  write_loop_resilience(circuit, loop.resilience);  // writes `circuit` when there is one
  const auto cap = edge_revisit_cap(loop, dialect);
  return json{{"states", std::move(states)},
              {"max_edge_revisits", cap ? json(*cap) : json(nullptr)},
              {"circuit", circuit.is_object() && circuit.contains("circuit") ? circuit["circuit"] : json(nullptr)}};
}

/// The stall evaluator's fields for `show` (`max_stall: 2`, …).
LITTLE_LOOPS_INLINE void render_stall_fields(const stall_config& s, std::vector<std::string>& parts) {
  const auto list = [](const std::vector<std::string>& names) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
  };
  if (s.scope) parts.push_back("scope: " + list(*s.scope));
  if (s.max_stall) parts.push_back(fmt::format("max_stall: {}", *s.max_stall));
  if (s.history_file) parts.push_back("history_file: " + *s.history_file);
  if (s.epsilon) parts.push_back(fmt::format("epsilon: {}", *s.epsilon));
  if (s.track) parts.push_back("track: " + list(*s.track));
  if (s.max_repeat) parts.push_back(fmt::format("max_repeat: {}", *s.max_repeat));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — the host settings a loop runs with, for `show` and `validate --json`
// SPDX-License-Identifier: MIT
#pragma once

// Part of render.hpp: what each state asks of the host (host_settings.hpp), as it takes
// effect (a state's own setting, else the loop's).

#include <little_loops/config.hpp>
#include <little_loops/host_settings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/host_fields.hpp>

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

LITTLE_LOOPS_INLINE json state_host_json(const fsm_loop& loop, const state_config& state);
LITTLE_LOOPS_INLINE json host_settings_json(const fsm_loop& loop);
LITTLE_LOOPS_INLINE std::vector<std::pair<std::string, std::string>> host_setting_lines(const fsm_loop& loop);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// What `state` asks of the host, as JSON: `agent`, `automation_profile` (the enabled
/// profile's name), `pruning_profile` (the effective one, defaults omitted),
/// `session_mode` (when `continue`) and `params`; empty when nothing.
LITTLE_LOOPS_INLINE json state_host_json(const fsm_loop& loop, const state_config& state) {
  json j = json::object();
  if (runs_prompt_action(state)) {
    if (state.host.agent) j["agent"] = *state.host.agent;
    if (const pruning_profile* p = effective_pruning_profile(loop.host, state.host)) {
      j["pruning_profile"] = pruning_profile_json(*p);
      if (p->enabled) j["automation_profile"] = p->name;
    }
    if (effective_session_mode(loop.host, state.host) == session_mode::continued)
      j["session_mode"] = "continue";
  }
  if (state.host.params) j["params"] = *state.host.params;
  return j;
}

/// `validate --json`'s `host`: `{states: {name: state_host_json}}`, states asking nothing
/// left out.
LITTLE_LOOPS_INLINE json host_settings_json(const fsm_loop& loop) {
  json states = json::object();
  for (const auto& [name, state] : loop.states) {
    json j = state_host_json(loop, state);
    if (!j.empty()) states[name] = std::move(j);
  }
  return json{{"states", std::move(states)}};
}

/// The lines of `show`'s `Host settings:` block: per state that asks something of the host,
/// its name and what it asks (`agent reviewer, automation profile ci, session continue`).
LITTLE_LOOPS_INLINE std::vector<std::pair<std::string, std::string>> host_setting_lines(const fsm_loop& loop) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& [name, state] : loop.states) {
    const json j = state_host_json(loop, state);
    if (j.empty()) continue;
    std::vector<std::string> items;
    if (j.contains("agent")) items.push_back("agent " + j["agent"].get<std::string>());
    if (j.contains("automation_profile"))
      items.push_back("automation profile " + j["automation_profile"].get<std::string>());
    else if (j.contains("pruning_profile"))
      items.emplace_back("pruning profile disabled");
    if (j.contains("session_mode")) items.emplace_back("session continue");
    if (j.contains("params")) items.push_back("params " + j["params"].dump());
    lines.emplace_back(name, fmt::format("{}", fmt::join(items, ", ")));
  }
  return lines;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — what a state asks of the host beyond its action text: agent, pruning profile, session mode, MCP params
// SPDX-License-Identifier: MIT
#pragma once

// The keys of today's little-loops that change how the host runs an action, not what the
// executor does with its result (design §6.3). The core spawns nothing: the executor puts
// what they ask into the action_request (results.hpp) and the host's runner acts on it
// (runners/posix_process_runner.hpp). Their reader and writer: detail/host_fields.hpp.

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Whether a prompt action continues the chain of the prompt states before it
/// (`session_mode:`, written `fresh` or `continue`).
enum class session_mode {
  fresh,      ///< a session of its own (the default)
  continued,  ///< `continue`: the prompt starts with the prior chained state's summary
};

/// `pruning_profile:`: an automation profile for the host's prompt process. When enabled,
/// the process gets `LL_AUTOMATION=1` and `LL_AUTOMATION_PROFILE=<name>` in its environment
/// (automation-aware hooks then trim what they add to the session). `suppress_catalog` and
/// `suppress_claude_md` are declarative, as in the reference: no host reads them, and
/// `suppress_catalog` only feeds a validation warning.
struct pruning_profile {
  bool enabled = true;
  std::string name = "default";
  bool suppress_catalog = false;
  bool suppress_claude_md = false;

  friend bool operator==(const pruning_profile&, const pruning_profile&) = default;
};

/// A state's host settings. `agent`, `pruning_profile` and `session_mode` apply to prompt
/// actions (`prompt`, `slash_command`); `params` to `mcp_tool` actions.
struct state_host_settings {
  std::optional<std::string> agent;             ///< `agent:`: the host CLI's agent
  std::optional<pruning_profile> pruning;       ///< `pruning_profile:` (overrides the loop's)
  std::optional<session_mode> session;          ///< `session_mode:` (overrides the loop's)
  /// `params:` of an `mcp_tool` action: the tool's arguments (an object; strings anywhere
  /// in it are templates, rendered when the state runs).
  std::optional<json> params;

  friend bool operator==(const state_host_settings&, const state_host_settings&) = default;
};

/// A loop's defaults for its states' host settings.
struct loop_host_settings {
  std::optional<pruning_profile> pruning;  ///< `pruning_profile:`
  std::optional<session_mode> session;     ///< `session_mode:`

  friend bool operator==(const loop_host_settings&, const loop_host_settings&) = default;
};

/// `"fresh"` / `"continue"`.
constexpr std::string_view to_string(session_mode v) noexcept {
  return v == session_mode::continued ? "continue" : "fresh";
}

/// The profile a state runs under: its own, else the loop's (null: none).
inline const pruning_profile* effective_pruning_profile(const loop_host_settings& loop,
                                                        const state_host_settings& state) noexcept {
  if (state.pruning) return &*state.pruning;
  return loop.pruning ? &*loop.pruning : nullptr;
}

/// The session mode a state runs with: its own, else the loop's, else `fresh`.
inline session_mode effective_session_mode(const loop_host_settings& loop,
                                           const state_host_settings& state) noexcept {
  if (state.session) return *state.session;
  return loop.session.value_or(session_mode::fresh);
}

/// The automation profile name a prompt action's process gets: the effective profile's
/// name when it is enabled, else empty.
inline std::string_view automation_profile_of(const loop_host_settings& loop,
                                              const state_host_settings& state) noexcept {
  const pruning_profile* p = effective_pruning_profile(loop, state);
  return p && p->enabled ? std::string_view(p->name) : std::string_view{};
}

LITTLE_LOOPS_NAMESPACE_END

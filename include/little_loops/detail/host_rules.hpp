// little_loops — the validation rules of the host settings (agent, pruning_profile, session_mode, params)
// SPDX-License-Identifier: MIT
#pragma once

// Part of validation.hpp: validate() runs check_host_settings() after the state rules. The
// reference's rules (its MR-12 pruning-profile checks, the session-continuity check of
// evaluator states, `params` only with `mcp_tool`) plus ours: a host key on a state whose
// action does not read it is dead configuration and is said to be (design §3.1).

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/host_settings.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/strings.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// The skill a state's action invokes, as the reference finds it: an action that starts
/// (after leading whitespace) with `/` and holds `/ll:<skill>` (letters, digits, `_`, `-`);
/// empty when there is none.
LITTLE_LOOPS_INLINE std::string_view invoked_skill(const state_config& state) noexcept;

/// `unused-state-field`: a host key the state's action does not read (agent, pruning_profile
/// and session_mode: prompt actions); `params-without-mcp`: `params` on a state whose
/// action_type is not mcp_tool (an error, as in the reference).
LITTLE_LOOPS_INLINE void check_host_fields_used(const state_config& state, const std::string& path,
                                                diagnostics& out);

/// The reference's MR-12 warnings for a state that invokes a `/ll:` skill: under a profile
/// with `suppress_catalog: true` (`pruning-profile-catalog`: the host may not find the skill),
/// or under no profile at all (`pruning-profile-missing`). `pruning_profile_ok` silences
/// both.
LITTLE_LOOPS_INLINE void check_pruning_profile(const fsm_loop& loop, const std::string& name,
                                               const state_config& state, diagnostics& out);

/// `session-mode-evaluator`: an llm_structured state that continues a session chain gets
/// the prior state's summary in its prompt, so its judgment is not independent (the
/// reference's rule; `session_mode_ok` silences it).
LITTLE_LOOPS_INLINE void check_session_mode(const fsm_loop& loop, const std::string& name,
                                            const state_config& state, diagnostics& out);

/// The host-setting rules of every state, in document order.
LITTLE_LOOPS_INLINE void check_host_settings(const fsm_loop& loop, diagnostics& out);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::string_view invoked_skill(const state_config& state) noexcept {
  if (!state.action) return {};
  const std::string_view text = *state.action;
  const auto first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos || text[first] != '/') return {};
  const auto skill_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  };
  for (auto at = text.find("/ll:"); at != std::string_view::npos; at = text.find("/ll:", at + 1)) {
    std::size_t end = at + 4;
    while (end < text.size() && skill_char(text[end])) ++end;
    if (end > at + 4) return text.substr(at + 4, end - at - 4);
  }
  return {};
}

LITTLE_LOOPS_INLINE void check_host_fields_used(const state_config& state, const std::string& path,
                                                diagnostics& out) {
  const state_host_settings& host = state.host;
  const bool prompt = runs_prompt_action(state) && !state.terminal;
  const auto unused = [&](std::string_view key) {
    report(out, join_path(path, key), "unused-state-field",
           fmt::format("'{}' applies to prompt actions (action_type prompt or slash_command), "
                       "and this state runs none: it is never used",
                       key),
           severity::warning);
  };
  if (!prompt && host.agent) unused("agent");
  if (!prompt && host.pruning) unused("pruning_profile");
  if (!prompt && host.session) unused("session_mode");
  if (host.params && state.action_type != action_kind::mcp_tool)
    report(out, join_path(path, "params"), "params-without-mcp",
           "'params' field is only valid when action_type is 'mcp_tool'");
}

LITTLE_LOOPS_INLINE void check_pruning_profile(const fsm_loop& loop, const std::string& name,
                                               const state_config& state, diagnostics& out) {
  const std::string_view skill = invoked_skill(state);
  if (skill.empty()) return;
  const std::string path = member_path("states", name);
  const pruning_profile* profile = effective_pruning_profile(loop.host, state.host);
  if (profile && profile->enabled && profile->suppress_catalog)
    report(out, join_path(path, "action"), "pruning-profile-catalog",
           fmt::format("runs under a pruning profile with suppress_catalog: true and invokes "
                       "/ll:{}: a host that suppresses its catalog may not resolve the skill "
                       "(set pruning_profile_ok: true to silence)",
                       sanitize_utf8(skill)),
           severity::warning);
  if (!profile)
    report(out, join_path(path, "pruning_profile"), "pruning-profile-missing",
           fmt::format("invokes /ll:{} with no pruning_profile (the state's or the loop's): its "
                       "prompt process runs without LL_AUTOMATION, so the host's hooks add their "
                       "full context on every visit (set pruning_profile_ok: true to silence)",
                       sanitize_utf8(skill)),
           severity::warning);
}

LITTLE_LOOPS_INLINE void check_session_mode(const fsm_loop& loop, const std::string& name,
                                            const state_config& state, diagnostics& out) {
  if (!state.evaluate || state.evaluate->type != evaluator_type::llm_structured) return;
  if (effective_session_mode(loop.host, state.host) != session_mode::continued) return;
  report(out, join_path(member_path("states", name), "session_mode"), "session-mode-evaluator",
         "an llm_structured state inherits session_mode: continue: the prior chained state's "
         "summary would prime its judgment; set session_mode: fresh on it (or session_mode_ok: "
         "true to silence)",
         severity::warning);
}

LITTLE_LOOPS_INLINE void check_host_settings(const fsm_loop& loop, diagnostics& out) {
  for (const auto& [name, state] : loop.states) {
    check_host_fields_used(state, member_path("states", name), out);
    check_pruning_profile(loop, name, state, out);
    check_session_mode(loop, name, state, out);
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

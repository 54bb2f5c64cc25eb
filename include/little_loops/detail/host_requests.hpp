// little_loops — what the executor asks of the host beside an action's text: agent, profile, session chain
// SPDX-License-Identifier: MIT
#pragma once

// Part of the executor: the host settings of a state (host_settings.hpp) turned into the
// fields of its action_request, and the session chain of `session_mode: continue`, a
// per-run memory carried by sub-loop frames and snapshots (in `counters`).

#include <little_loops/config.hpp>
#include <little_loops/host_settings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/output_signal.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/subloop_calls.hpp>
#include <little_loops/detail/utf8.hpp>

#include <cstddef>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// True for the kinds the host runs as an LLM prompt (prompt, slash_command).
constexpr bool is_prompt_kind(action_kind kind) noexcept {
  return kind == action_kind::prompt || kind == action_kind::slash_command;
}

/// The heading a continued prompt starts with, before the prior chained state's summary.
inline constexpr std::string_view continuity_heading =
    "## Continuity summary from the prior chained state\n\n";
/// The most characters of a summary kept (its end: where a prompt's answer concludes).
inline constexpr std::size_t continuity_summary_limit = 8000;

/// @brief The session chain of one running loop (`session_mode: continue`).
///
/// A prompt action that ends normally (exit 0) in a `continue` state leaves its output as
/// the summary the next prompt action takes; that one, when it is `continue` too, is sent
/// the summary first, and either way the summary is gone (a `fresh` prompt breaks the
/// chain). Shell and MCP actions between them neither take nor leave one. A handoff drops
/// it: the chain never crosses into a continuation session.
class session_chain {
 public:
  /// The text prompt action `text` of a state in `mode` is sent: with a pending summary
  /// and `continue`, the heading, the summary, a rule and `text` (built in `buffer`), else
  /// `text`. The pending summary is taken either way.
  std::string_view take(session_mode mode, std::string_view text, std::string& buffer);

  /// After an action of `kind` in a state in `mode`: a `continue` prompt that exited 0
  /// leaves its output (trimmed, at most continuity_summary_limit characters, its end) as
  /// the summary; a `handoff` (the output's CONTEXT_HANDOFF signal) drops it.
  void leave(action_kind kind, session_mode mode, const action_result& a, bool handoff);
  /// leave() for `state` of `loop`, after its action's output `signal` (if any) was found.
  template <class Signal>
  void leave(action_kind kind, const fsm_loop& loop, const state_config& state,
             const action_result& a, const Signal& signal) {
    leave(kind, effective_session_mode(loop.host, state.host), a,
          signal && signal->kind == signal_kind::handoff);
  }

  /// The pending summary (empty: none).
  [[nodiscard]] const std::string& summary() const noexcept { return summary_; }
  void clear() noexcept { summary_.clear(); }

  /// `counters` with the pending summary as `session_summary` (unchanged when none).
  [[nodiscard]] json into(json counters) const;
  /// The pending summary of a snapshot's `counters`.
  void restore(const json& counters);

 private:
  std::string summary_;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE auto session_chain::take(session_mode mode, std::string_view text, std::string& buffer) -> std::string_view {
  if (mode == session_mode::continued && !summary_.empty()) {
    std::string joined;  // `text` may view `buffer`
    joined.reserve(continuity_heading.size() + summary_.size() + 7 + text.size());
    joined.append(continuity_heading).append(summary_).append("\n\n---\n\n").append(text);
    buffer = std::move(joined);
    text = buffer;
  }
  summary_.clear();
  return text;
}

LITTLE_LOOPS_INLINE auto session_chain::leave(action_kind kind, session_mode mode, const action_result& a, bool handoff) -> void {
  if (handoff) {
    summary_.clear();
    return;
  }
  if (!is_prompt_kind(kind) || mode != session_mode::continued || a.exit_code != 0 || a.abnormal())
    return;
  summary_.assign(utf8_suffix(trim_py(a.output), continuity_summary_limit));
}

LITTLE_LOOPS_INLINE auto session_chain::into(json counters) const -> json {
  if (summary_.empty()) return counters;
  if (!counters.is_object()) counters = json::object();
  counters["session_summary"] = summary_;
  return counters;
}

LITTLE_LOOPS_INLINE auto session_chain::restore(const json& counters) -> void {
  summary_.clear();
  if (!counters.is_object()) return;
  const auto it = counters.find("session_summary");
  if (it != counters.end() && it->is_string()) summary_ = it->get<std::string>();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE expected<std::string_view, std::string> prepare_mcp_request(
    action_request& req, const state_config& state, std::string_view text, std::string& buffer,
    const interpolation_context& ctx);
LITTLE_LOOPS_INLINE expected<std::string_view, std::string> prepare_host_request(
    action_request& req, const fsm_loop& loop, const state_config& state, session_chain& chain,
    std::string_view text, std::string& buffer, const interpolation_context& ctx);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// An mcp_tool action's text (`server/tool`) and its `params:` rendered against `ctx` (every
/// string in them a template, as the reference's interpolate_dict) as compact JSON, both in
/// `buffer`, in `req.params`; the text to send, or why the params could not be rendered.
LITTLE_LOOPS_INLINE expected<std::string_view, std::string> prepare_mcp_request(
    action_request& req, const state_config& state, std::string_view text, std::string& buffer,
    const interpolation_context& ctx) {
  const expected<json, error> params =
      state.host.params ? render_value(*state.host.params, ctx) : expected<json, error>(json::object());
  if (!params) return unexpected("params: " + params.error().message);
  std::string joined(text);  // `text` may view `buffer`
  joined += params->dump(-1, ' ', false, json::error_handler_t::replace);
  buffer = std::move(joined);
  req.params = std::string_view(buffer).substr(text.size());
  return std::string_view(buffer).substr(0, text.size());
}

/// @brief Fills the host fields of `req` (its `kind` set) for `state` of `loop` and returns
/// the text to send: a prompt action gets the state's agent and automation profile and
/// takes the session chain's summary (session_chain::take, `buffer` holding a joined text);
/// an mcp_tool action gets its rendered params (prepare_mcp_request); a shell action gets
/// none and `text` as it is.
LITTLE_LOOPS_INLINE expected<std::string_view, std::string> prepare_host_request(
    action_request& req, const fsm_loop& loop, const state_config& state, session_chain& chain,
    std::string_view text, std::string& buffer, const interpolation_context& ctx) {
  const bool prompt = is_prompt_kind(req.kind);
  req.agent = prompt && state.host.agent ? std::string_view(*state.host.agent) : std::string_view{};
  req.automation_profile = prompt ? automation_profile_of(loop.host, state.host) : std::string_view{};
  req.params = {};
  if (req.kind == action_kind::mcp_tool) return prepare_mcp_request(req, state, text, buffer, ctx);
  if (!prompt) return text;
  return chain.take(effective_session_mode(loop.host, state.host), text, buffer);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — keys of the little-loops plugin and of stages this engine does not read
// SPDX-License-Identifier: MIT
#pragma once

// Part of the loop reader: a key that is not ours but that today's little-loops loops write
// gets a diagnostic that says what it is, instead of a bare "unknown key". A plugin key (a
// behaviour of the little-loops plugin this engine does not provide) is an error naming the
// plugin; a lint-suppression flag of the reference is accepted (loop_reader.hpp).

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/detail/json_fields.hpp>

#include <array>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A foreign key and what it does where it comes from.
struct foreign_key {
  std::string_view key;
  std::string_view what;
};

/// Keys of the little-loops plugin whose behaviour this engine does not provide.
inline constexpr std::array<foreign_key, 7> plugin_keys{{
    {"default_idle_timeout", "the default idle timeout of actions"},
    {"host_guard", "host guards"},
    {"prompt_size_guard", "prompt size guards"},
    {"baseline_path", "comparator baselines"},
    {"auto_promote", "comparator baseline promotion"},
    {"min_pairs", "comparator pairs"},
    {"pairs", "comparator pairs"},
}};

/// Values of `type:`/`action_type:` that belong to the plugin.
inline constexpr std::array<foreign_key, 2> plugin_values{{
    {"comparator", "the comparator evaluator"},
    {"contract", "the contract evaluator"},
}};

/// Composition keys (`import`, `fragment`, `from`, …): the composition stage (compose.hpp)
/// consumes them before the reader; the reader sees one only in a document that was not
/// composed.
inline constexpr std::array<std::string_view, 7> composition_keys{
    "import", "fragment", "fragments", "from", "flow", "state_defs", "parameters"};
/// The resilience keys (resilience_fields.hpp reads them): candidates for "did you mean".
inline constexpr std::array<std::string_view, 16> resilience_keys{
    "retry", "catch", "backoff", "max_rate_limit_retries", "on_rate_limit_exhausted",
    "rate_limit_backoff_base_seconds", "rate_limit_max_wait_seconds",
    "rate_limit_long_wait_ladder", "scope", "max_stall", "history_file", "epsilon", "track",
    "max_repeat", "max_edge_revisits", "circuit"};

/// The host keys (host_fields.hpp reads them): candidates for "did you mean".
inline constexpr std::array<std::string_view, 4> host_keys{"agent", "pruning_profile",
                                                           "session_mode", "params"};

/// The reference's lint-suppression flags: loop-level booleans, accepted and kept.
inline constexpr std::array<std::string_view, 21> lint_flag_keys{
    "artifact_versioning",   "artifact_versioning_ok", "meta_self_eval_ok",
    "shared_state_ok",       "capture_reachability_ok", "partial_route_ok",
    "shell_pid_ok",          "unsafe_context_interpolation_ok", "terminal_action_ok",
    "bash_default_ok",       "evaluate_unknown_keys_ok", "parse_swallow_ok",
    "policy_dims_scored_ok", "evidence_contract_ok",    "haiku_generator_ok",
    "abandonment_verdict_ok", "generator_fix_ok",       "pruning_profile_ok",
    "tamper_guard_ok",       "prepatch_check_ok",       "session_mode_ok"};

template <class Range>
constexpr bool names_contain(const Range& names, std::string_view key) noexcept {
  for (std::string_view n : names)
    if (n == key) return true;
  return false;
}

/// The plugin feature behind `key` (a key or a `type:` value), or empty.
template <std::size_t N>
constexpr std::string_view plugin_feature(const std::array<foreign_key, N>& table,
                                          std::string_view key) noexcept {
  for (const auto& k : table)
    if (k.key == key) return k.what;
  return {};
}

/// `"`K` is a little-loops plugin key (what); this engine does not provide it"`.
inline std::string plugin_message(std::string_view kind, std::string_view key,
                                  std::string_view what) {
  return std::string(kind) + " \"" + std::string(key) + "\" belongs to the little-loops plugin (" +
         std::string(what) + "); this engine does not provide it";
}

/// Reports an unknown key at `base`: a plugin key (`plugin-key`), a composition key in a
/// document that was not composed (`unsupported-key`), or a plain `unknown-key` with a
/// did-you-mean against `candidates`, the composition and the resilience keys.
template <class Range>
void report_foreign_key(diagnostics& out, std::string_view base, std::string_view key,
                        const Range& candidates) {
  if (auto what = plugin_feature(plugin_keys, key); !what.empty()) {
    report(out, member_path(base, key), "plugin-key", plugin_message("key", key, what));
  } else if (names_contain(composition_keys, key)) {
    report(out, member_path(base, key), "unsupported-key",
           "\"" + std::string(key) + "\" is a composition key: loop files are composed when "
           "they load (compose_loop, load_loop_file), this document was not");
  } else {
    std::string message = "unknown key " + quote_excerpt(key);
    std::string hint = did_you_mean(key, candidates);
    if (hint.empty()) hint = did_you_mean(key, composition_keys);
    if (hint.empty()) hint = did_you_mean(key, resilience_keys);
    if (hint.empty()) hint = did_you_mean(key, host_keys);
    message += hint;
    report(out, member_path(base, key), "unknown-key", std::move(message));
  }
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

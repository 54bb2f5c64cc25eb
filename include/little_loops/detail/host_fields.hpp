// little_loops — reading and writing the host settings: agent, pruning_profile, session_mode
// SPDX-License-Identifier: MIT
#pragma once

// Part of the loop reader (loop_reader.hpp) and of the loop writer (schema.hpp's to_json):
// the keys of host_settings.hpp. `params:` is a value tree, read beside `with:` by the loop
// reader.

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/host_settings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/schema_enums.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

template <>
struct enum_info<session_mode> {
  static constexpr std::array<std::string_view, 2> names{"fresh", "continue"};
  static constexpr std::string_view what = "session_mode";
};

/// The members of `pruning_profile:`.
inline constexpr std::array<std::string_view, 4> pruning_profile_keys{
    "enabled", "name", "suppress_catalog", "suppress_claude_md"};

LITTLE_LOOPS_INLINE std::optional<std::string> read_host_name(const json& field, const std::string& path,
                                                 std::string_view what, diagnostics& out);
LITTLE_LOOPS_INLINE void read_pruning_profile(const json& field, const std::string& path,
                                 std::optional<pruning_profile>& to, diagnostics& out);
LITTLE_LOOPS_INLINE void read_session_mode(const json& field, const std::string& path,
                              std::optional<session_mode>& to, diagnostics& out);
LITTLE_LOOPS_INLINE bool read_shared_host_key(std::optional<pruning_profile>& pruning,
                                 std::optional<session_mode>& session, const std::string& key,
                                 const json& field, const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE bool read_state_host(state_host_settings& host, const std::string& key, const json& field,
                            const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE bool read_loop_host(loop_host_settings& host, const std::string& key, const json& field,
                           const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE json pruning_profile_json(const pruning_profile& p);
LITTLE_LOOPS_INLINE void write_state_host(json& j, const state_host_settings& host);
LITTLE_LOOPS_INLINE void write_loop_host(json& j, const loop_host_settings& host);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// A name handed to the host process (an agent, a profile): not empty and without a NUL,
/// which no argument or environment variable can carry.
LITTLE_LOOPS_INLINE std::optional<std::string> read_host_name(const json& field, const std::string& path,
                                                 std::string_view what, diagnostics& out) {
  auto v = read_string(field, path, out);
  if (!v) return std::nullopt;
  if (v->empty()) {
    report(out, path, "empty-value", fmt::format("{} must not be empty", what));
    return std::nullopt;
  }
  if (v->find('\0') != std::string::npos) {
    report(out, path, "invalid-value", fmt::format("{} holds a NUL byte, which a process cannot be given", what));
    return std::nullopt;
  }
  return v;
}

/// Reads `pruning_profile:` strictly (null: unset, as the reference reads a loop's).
LITTLE_LOOPS_INLINE void read_pruning_profile(const json& field, const std::string& path,
                                 std::optional<pruning_profile>& to, diagnostics& out) {
  if (field.is_null()) return;
  if (!expect_object(field, path, out)) return;
  pruning_profile p;
  bool ok = true;
  for (auto it = field.begin(); it != field.end(); ++it) {
    const std::string& key = it.key();
    const std::string key_path = member_path(path, key);
    if (key == "name") {
      auto v = read_host_name(it.value(), key_path, "a pruning profile's name", out);
      if (v) p.name = std::move(*v);
      ok = ok && v.has_value();
      continue;
    }
    if (key != "enabled" && key != "suppress_catalog" && key != "suppress_claude_md") {
      report_unknown_key(out, path, key, pruning_profile_keys);
      ok = false;
      continue;
    }
    bool& member = key == "enabled"            ? p.enabled
                   : key == "suppress_catalog" ? p.suppress_catalog
                                               : p.suppress_claude_md;
    const auto flag = read_bool(it.value(), key_path, out);
    if (flag) member = *flag;
    ok = ok && flag.has_value();
  }
  if (ok) to = std::move(p);
}

/// Reads `session_mode:`: `fresh` or `continue`.
LITTLE_LOOPS_INLINE void read_session_mode(const json& field, const std::string& path,
                              std::optional<session_mode>& to, diagnostics& out) {
  auto v = read_string(field, path, out);
  if (!v) return;
  if (*v == "fresh") to = session_mode::fresh;
  else if (*v == "continue") to = session_mode::continued;
  else report(out, path, "unknown-value", unknown_enum_message<session_mode>(*v));
}

/// Reads `pruning_profile:` or `session_mode:`, which a state and a loop both write; false
/// when `key` is neither.
LITTLE_LOOPS_INLINE bool read_shared_host_key(std::optional<pruning_profile>& pruning,
                                 std::optional<session_mode>& session, const std::string& key,
                                 const json& field, const std::string& path, diagnostics& out) {
  if (key == "pruning_profile") read_pruning_profile(field, path, pruning, out);
  else if (key == "session_mode") read_session_mode(field, path, session, out);
  else return false;
  return true;
}

/// Reads member `key` of a state into `host`; false when it is not a host key (`params`
/// is read by the loop reader).
LITTLE_LOOPS_INLINE bool read_state_host(state_host_settings& host, const std::string& key, const json& field,
                            const std::string& path, diagnostics& out) {
  if (key != "agent") return read_shared_host_key(host.pruning, host.session, key, field, path, out);
  if (auto v = read_host_name(field, path, "an agent name", out)) host.agent = std::move(*v);
  return true;
}

/// Reads top-level member `key` into `host`; false when it is not a loop host key.
LITTLE_LOOPS_INLINE bool read_loop_host(loop_host_settings& host, const std::string& key, const json& field,
                           const std::string& path, diagnostics& out) {
  return read_shared_host_key(host.pruning, host.session, key, field, path, out);
}

/// `{enabled, name, suppress_catalog, suppress_claude_md}`, defaults omitted.
LITTLE_LOOPS_INLINE json pruning_profile_json(const pruning_profile& p) {
  json j = json::object();
  if (!p.enabled) j["enabled"] = false;
  if (p.name != "default") j["name"] = p.name;
  if (p.suppress_catalog) j["suppress_catalog"] = true;
  if (p.suppress_claude_md) j["suppress_claude_md"] = true;
  return j;
}

/// Writes the state's host keys into `j` (a state object), each only when set.
LITTLE_LOOPS_INLINE void write_state_host(json& j, const state_host_settings& host) {
  if (host.agent) j["agent"] = *host.agent;
  if (host.pruning) j["pruning_profile"] = pruning_profile_json(*host.pruning);
  if (host.session) j["session_mode"] = std::string(to_string(*host.session));
  if (host.params) j["params"] = *host.params;
}

/// Writes the loop's host keys into `j` (a loop object), each only when set.
LITTLE_LOOPS_INLINE void write_loop_host(json& j, const loop_host_settings& host) {
  if (host.pruning) j["pruning_profile"] = pruning_profile_json(*host.pruning);
  if (host.session) j["session_mode"] = std::string(to_string(*host.session));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

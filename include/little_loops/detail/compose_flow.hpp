// little_loops — `flow:` and `state_defs:`: a list of state names written as states
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp. Each `flow:` entry is a state: `name` goes on to the next entry
// (`next:`), `name?yes:no` routes its verdicts (`on_yes:`, `on_no:`), and the last entry
// is also `terminal: true`. `state_defs.<name>` is merged over the generated state, so it
// may replace any generated field. The states replace `states:` (an inherited one; a
// document that writes both is refused while inheriting); `initial:` is still written.

#include <little_loops/config.hpp>
#include <little_loops/detail/compose_findings.hpp>
#include <little_loops/detail/compose_merge.hpp>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// One `flow:` entry: a state name and, for `name?yes:no`, its two targets.
struct flow_entry {
  std::string name;
  std::optional<std::pair<std::string, std::string>> branches;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Parses entry `text`; nullopt after reporting at `path`.
inline std::optional<flow_entry> parse_flow_entry(const std::string& text, const std::string& path,
                                                  diagnostics& out) {
  const auto question = text.find('?');
  if (question == std::string::npos) return flow_entry{text, std::nullopt};
  const auto colon = text.find(':', question + 1);
  if (colon == std::string::npos) {
    report(out, path, "malformed-flow",
           fmt::format("Malformed ternary in flow entry '{}': must be name?yes_target:no_target", text));
    return std::nullopt;
  }
  flow_entry entry{text.substr(0, question),
                   std::pair{text.substr(question + 1, colon - question - 1), text.substr(colon + 1)}};
  if (entry.name.empty() || entry.branches->first.empty() || entry.branches->second.empty()) {
    report(out, path, "malformed-flow",
           fmt::format("Malformed ternary in flow entry '{}': the name and both yes and no targets "
                       "must be non-empty",
                       text));
    return std::nullopt;
  }
  return entry;
}

/// The entries of `flow:`; empty after reporting what is wrong.
inline std::vector<flow_entry> read_flow(const json& flow, diagnostics& out) {
  std::vector<flow_entry> entries;
  if (!flow.is_array()) {
    report(out, "flow", "wrong-type", fmt::format("'flow:' must be a list, got {}", describe_value(flow)));
    return entries;
  }
  if (flow.empty()) report(out, "flow", "empty-flow", "'flow:' must contain at least one state");
  for (std::size_t i = 0; i < flow.size(); ++i) {
    const std::string path = index_path("flow", i);
    if (!flow[i].is_string()) {
      report(out, path, "wrong-type",
             fmt::format("'flow:' entry {} must be a string, got {}", i + 1, describe_value(flow[i])));
      continue;
    }
    auto entry = parse_flow_entry(flow[i].get<std::string>(), path, out);
    if (!entry) continue;
    for (const auto& seen : entries)
      if (seen.name == entry->name)
        report(out, path, "duplicate-state", fmt::format("'flow:' names state '{}' twice", entry->name));
    entries.push_back(std::move(*entry));
  }
  if (count_errors(out) > 0) entries.clear();
  return entries;
}

/// The state entry `i` of `entries` stands for, before its `state_defs:` entry.
inline json flow_skeleton(const std::vector<flow_entry>& entries, std::size_t i) {
  json state = json::object();
  if (entries[i].branches) {
    state["on_yes"] = entries[i].branches->first;
    state["on_no"] = entries[i].branches->second;
  } else if (i + 1 < entries.size()) {
    state["next"] = entries[i + 1].name;
  }
  if (i + 1 == entries.size()) state["terminal"] = true;
  return state;
}

/// `doc` with `flow:` and `state_defs:` written out as `states:`.
inline composing expand_flow(composing doc, compose_findings& found) {
  const auto flow = doc.value.find("flow");
  const auto defs = doc.value.find("state_defs");
  if (flow == doc.value.end()) {
    if (defs != doc.value.end())
      found.add(doc.positions, "state_defs", "orphan-key", "'state_defs:' needs a 'flow:' list");
    return doc;
  }
  diagnostics problems;
  const std::vector<flow_entry> entries = read_flow(*flow, problems);
  const json no_defs = json::object();
  const json& definitions = defs == doc.value.end() ? no_defs : *defs;
  if (!definitions.is_object()) report_type(problems, "state_defs", "a mapping", definitions);
  for (auto it = definitions.begin(); definitions.is_object() && it != definitions.end(); ++it) {
    bool named = false;
    for (const auto& e : entries) named = named || e.name == it.key();
    if (!named && !entries.empty())
      report(problems, member_path("state_defs", it.key()), "unknown-state",
             fmt::format("'state_defs.{}' names no 'flow:' entry", it.key()));
  }
  found.take(problems, doc.positions);
  if (entries.empty() || !definitions.is_object()) return doc;
  composing out;
  out.positions.set_file_name(doc.positions.file_name());
  if (const auto at = doc.positions.find("")) out.positions.add("", *at);
  json states = json::object();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string to = member_path("states", entries[i].name);
    const auto at = doc.positions.find(index_path("flow", i));
    source_map generated;
    const json skeleton = flow_skeleton(entries, i);
    if (at) {
      generated.add("", *at);
      for (auto it = skeleton.begin(); it != skeleton.end(); ++it) generated.add(it.key(), *at);
    }
    const auto def = definitions.find(entries[i].name);
    states[entries[i].name] =
        def == definitions.end()
            ? deep_merge({skeleton, generated, ""}, {skeleton, generated, ""}, out.positions, to)
            : deep_merge({skeleton, generated, ""},
                         {*def, doc.positions, member_path("state_defs", entries[i].name)},
                         out.positions, to);
  }
  if (const auto at = doc.positions.find("flow")) out.positions.add("states", *at);
  out.value = json::object();
  for (auto it = doc.value.begin(); it != doc.value.end(); ++it) {
    if (it.key() == "flow" || it.key() == "state_defs" || it.key() == "states") continue;
    copy_positions({it.value(), doc.positions, it.key()}, out.positions, it.key());
    out.value[it.key()] = it.value();
  }
  out.value["states"] = std::move(states);
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

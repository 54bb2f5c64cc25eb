// little_loops — sub-loop names that are written out must name a valid loop
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp (included after loop_resolver). A `loop:` state whose name holds no
// `${...}` names its child at load, so the child is looked up then, with the same resolver
// (and so the same search path) a run uses, and is itself composed, read and validated,
// its own children included: a name that does not resolve, or a child that is invalid, is
// a load error at the state's `loop:`; `with:` is checked against the child's
// `parameters:`. A child already being checked (a static cycle, A → B → A) is not checked
// again: at run time the depth limit bounds it. A name with a template is resolved when
// the state runs.

#include <little_loops/compose/resolver.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/compose_findings.hpp>
#include <little_loops/detail/compose_params.hpp>
#include <little_loops/detail/json_fields.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// What loading a child found: its failure (the first finding, with its position, and
/// every finding in error::details), or its declared parameters.
struct child_check {
  std::optional<error> failure;
  /// Why a loop further down (a child of this child) cannot run, when one cannot.
  std::optional<std::string> grandchild_failure;
  json parameters = json::object();
};

/// The children checked during one load, by id, and the chain being checked (cycles).
struct child_checks {
  std::vector<std::string> in_progress;
  std::map<std::string, child_check, std::less<>> done;
};

/// Composes, reads and validates a child, checking its own children with `checks`
/// (defined in compose.hpp, after compose_loop).
child_check check_child_loop(loop_source source, loop_resolver& resolver, child_checks& checks);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `child loop 'n' is invalid: FIRST (+N more)`.
inline std::string invalid_child_message(std::string_view name, const error& why) {
  std::size_t errors = 0;
  for (const auto& d : why.details) errors += d.level == severity::error ? 1 : 0;
  std::string message = fmt::format("child loop '{}' is invalid: {}", name, why.message);
  if (errors > 1) message += fmt::format(" (+{} more)", errors - 1);
  return message;
}

/// The check of the child `source`, made once per load.
inline const child_check* checked_child(loop_source source, loop_resolver& resolver,
                                        child_checks& checks) {
  const std::string id = source.id;
  if (const auto it = checks.done.find(id); it != checks.done.end()) return &it->second;
  if (std::find(checks.in_progress.begin(), checks.in_progress.end(), id) != checks.in_progress.end())
    return nullptr;  // a static cycle: bounded at run time by the depth limit
  checks.in_progress.push_back(id);
  child_check result = check_child_loop(std::move(source), resolver, checks);
  checks.in_progress.pop_back();
  return &checks.done.emplace(id, std::move(result)).first->second;
}

/// Checks that every static `loop:` name of `doc`'s states names a valid loop from
/// `referrer`, and that the state's `with:` fits that loop's `parameters:`.
inline void check_children(const composing& doc, std::string_view referrer, loop_resolver& resolver,
                           compose_findings& found, child_checks& checks) {
  const auto states = doc.value.find("states");
  if (states == doc.value.end() || !states->is_object()) return;
  for (auto it = states->begin(); it != states->end(); ++it) {
    if (!it.value().is_object()) continue;
    const auto name = it.value().find("loop");
    if (name == it.value().end() || !name->is_string()) continue;
    const std::string& child = name->get_ref<const std::string&>();
    if (child.find("${") != std::string::npos) continue;
    const std::string state_path = member_path("states", it.key());
    const std::string path = member_path(state_path, "loop");
    auto source = resolver.resolve(reference_kind::child, child, referrer);
    if (!source) {
      if (source.error().code == errc::reference_not_found)
        found.add(doc.positions, path, "not-found",
                  fmt::format("Loop reference '{}' does not resolve to any file ({})", child,
                              source.error().message));
      else
        found.add(doc.positions, path, "invalid-child",
                  fmt::format("child loop '{}' cannot be read: {}", child, source.error().message));
      continue;
    }
    const child_check* checked = checked_child(std::move(*source), resolver, checks);
    if (checked == nullptr) continue;
    // Not an error: the parent loads as in the reference, and the state takes its error
    // route when it runs (the executor refuses the child then).
    if (checked->failure || checked->grandchild_failure) {
      found.add(doc.positions, path, "invalid-child",
                checked->failure ? invalid_child_message(child, *checked->failure) + "; this state takes its error route"
                                 : fmt::format("child loop '{}' runs one that cannot run: {}", child,
                                               *checked->grandchild_failure),
                severity::warning);
      if (checked->failure) continue;
    }
    const auto with = it.value().find("with");
    if (with == it.value().end() || !with->is_object() || with->empty()) continue;
    diagnostics problems;
    bind_parameters(checked->parameters, *with, fmt::format("loop '{}'", child),
                    member_path(state_path, "with"), problems);
    found.take(problems, doc.positions);
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

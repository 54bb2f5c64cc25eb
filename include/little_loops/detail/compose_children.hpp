// little_loops — sub-loop names that are written out must name a loop that exists
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp (included after loop_resolver). A `loop:` state whose name holds no
// `${...}` names its child at load, so the child is looked up then, with the same resolver
// (and so the same search path) a run uses; a name that does not resolve is a load error
// at the state's `loop:`. A name with a template is resolved when the state runs.

#include <little_loops/compose/resolver.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/compose_findings.hpp>
#include <little_loops/detail/json_fields.hpp>

#include <fmt/format.h>

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// Checks that every static `loop:` name of `doc`'s states resolves from `referrer`.
template <class Resolver>
void check_children(const composing& doc, std::string_view referrer, Resolver& resolver,
                    compose_findings& found) {
  const auto states = doc.value.find("states");
  if (states == doc.value.end() || !states->is_object()) return;
  for (auto it = states->begin(); it != states->end(); ++it) {
    if (!it.value().is_object()) continue;
    const auto name = it.value().find("loop");
    if (name == it.value().end() || !name->is_string()) continue;
    const std::string& child = name->get_ref<const std::string&>();
    if (child.find("${") != std::string::npos) continue;
    auto source = resolver.resolve(reference_kind::child, child, referrer);
    if (source) continue;
    const std::string path = member_path(member_path("states", it.key()), "loop");
    if (source.error().code == errc::reference_not_found)
      found.add(doc.positions, path, "not-found",
                fmt::format("Loop reference '{}' does not resolve to any file ({})", child,
                            source.error().message));
    else
      found.add(doc.positions, path, "invalid-child",
                fmt::format("child loop '{}' cannot be read: {}", child, source.error().message));
  }
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — `from:`: a loop inherits a parent loop, the parent's own parent first
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp (included after loop_resolver). The parent is found by the resolver
// from the directory of the document that names it; its own `from:` is resolved first, so
// the deepest ancestor is the base of the first merge. The child is merged over the
// parent (compose_merge.hpp): everything is inherited, a child's mapping extends the
// parent's and any other child value replaces it. A chain that comes back to a document
// already in it is an error that shows the chain.

#include <little_loops/compose/resolver.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/compose_findings.hpp>
#include <little_loops/detail/compose_merge.hpp>

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// One document of a `from:` chain: its identity and how to name it in messages.
struct chain_link {
  std::string id;
  std::string shown;
};

/// The most parents a chain may have.
inline constexpr std::size_t max_from_depth = 32;

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `flow:` and `states:` written in the same document contradict each other.
inline void check_flow_and_states(const composing& doc, compose_findings& found) {
  if (doc.value.contains("flow") && doc.value.contains("states"))
    found.add(doc.positions, "flow", "conflicting-keys",
              "'flow:' and 'states:' are mutually exclusive in one document (a child's "
              "'flow:' replaces inherited states)");
}

/// The chain as text: `a.yaml -> b -> a`.
inline std::string show_chain(const std::vector<chain_link>& chain, std::string_view again) {
  std::string text;
  for (const auto& link : chain) text += link.shown + " -> ";
  return text + std::string(again);
}

/// Resolves `doc`'s `from:` (and its parent's, recursively) and returns `doc` merged over
/// its ancestors. `chain` holds the documents from the top one to `doc`.
template <class Resolver>
composing inherit(composing doc, Resolver& resolver, std::vector<chain_link>& chain,
                  std::vector<std::string>& sources, compose_findings& found) {
  check_flow_and_states(doc, found);
  const auto from = doc.value.find("from");
  if (from == doc.value.end()) return doc;
  if (!from->is_string()) {
    found.add(doc.positions, "from", "wrong-type",
              fmt::format("`from:` must be a string, got {}", describe_value(*from)));
    return doc;
  }
  const std::string name = from->get<std::string>();
  if (chain.size() > max_from_depth) {
    found.add(doc.positions, "from", "too-deep",
              fmt::format("`from:` chain longer than {}: {}", max_from_depth, show_chain(chain, name)));
    return doc;
  }
  auto parent = resolver.resolve(reference_kind::parent, name, chain.back().id);
  if (!parent) {
    found.not_found(doc.positions, "from", parent.error());
    return doc;
  }
  for (const auto& link : chain)
    if (link.id == parent->id) {
      found.add(doc.positions, "from", "from-cycle",
                fmt::format("Circular `from:` chain: {}", show_chain(chain, name)));
      return doc;
    }
  if (!parent->document.is_object()) {
    found.add(doc.positions, "from", "wrong-type",
              fmt::format("Parent loop '{}' is not a mapping (got {})", name,
                          describe_value(parent->document)));
    return doc;
  }
  sources.push_back(parent->id);
  chain.push_back(chain_link{parent->id, name});
  composing base = inherit(composing{std::move(parent->document), std::move(parent->positions)},
                           resolver, chain, sources, found);
  chain.pop_back();
  composing merged;
  merged.positions.set_file_name(doc.positions.file_name());
  json child = std::move(doc.value);
  child.erase("from");
  merged.value = deep_merge({base.value, base.positions, ""}, {child, doc.positions, ""},
                            merged.positions, "");
  return merged;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

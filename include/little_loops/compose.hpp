// little_loops — composition: `from:`, `flow:`, `import:` and `fragment:` into one loop document
// SPDX-License-Identifier: MIT
#pragma once

// The stage of the load pipeline between the document and the loop: text → document →
// composition → fsm_loop → validated → compiled. A loop may inherit a parent (`from:`),
// list its states as a `flow:` with `state_defs:`, and build states from fragments of
// libraries (`import:`, `fragments:`, `fragment:` with `with:` bindings and
// `${param.*}`). compose_loop() writes all of it out, in that order, as an ordinary loop
// document that the strict reader and the validator then take like any other. The core
// reads no files: a host passes a loop_resolver that finds the named documents
// (<little_loops/yaml/file_resolver.hpp> searches directories).

#include <little_loops/compose/resolver.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/compose_children.hpp>
#include <little_loops/detail/compose_findings.hpp>
#include <little_loops/detail/compose_flow.hpp>
#include <little_loops/detail/compose_fragments.hpp>
#include <little_loops/detail/compose_inherit.hpp>
#include <little_loops/detail/compose_params.hpp>
#include <little_loops/document.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/paradigms.hpp>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The result of compose_loop().
struct composed_loop {
  json document;                     ///< without from/flow/state_defs/import/fragments/parameters
  json parameters = json::object();  ///< the loop's own `parameters:` (checked declarations)
  std::vector<std::string> sources;  ///< ids of the parents and libraries read, in order
  /// Findings that do not stop the load: a static child that cannot run (`invalid-child`).
  diagnostics warnings;
};


namespace detail {

LITTLE_LOOPS_INLINE expected<composed_loop, error> compose_checked(loop_source top,
                                                                   loop_resolver& resolver,
                                                                   source_map* positions,
                                                                   child_checks& checks);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
inline bool needs_composition(const json& doc) {
  for (const char* key : {"from", "flow", "state_defs", "import", "fragments", "parameters"})
    if (doc.contains(key)) return true;
  const auto states = doc.find("states");
  if (states == doc.end() || !states->is_object()) return false;
  for (const auto& state : *states)
    if (state.is_object() && (state.contains("fragment") || state.contains("loop"))) return true;
  return false;
}

// compose_loop(), with the children checked so far during this load.
LITTLE_LOOPS_INLINE expected<composed_loop, error> compose_checked(loop_source top, loop_resolver& resolver,
                                                      source_map* positions, child_checks& checks) {
  composed_loop result;
  if (!top.document.is_object() || !detail::needs_composition(top.document)) {
    result.document = std::move(top.document);
    if (positions != nullptr) *positions = std::move(top.positions);
    return result;
  }
  detail::compose_findings found;
  found.positions.set_file_name(top.positions.file_name());
  std::vector<detail::chain_link> chain{{top.id, top.positions.file_name()}};
  detail::composing doc = detail::inherit(
      detail::composing{std::move(top.document), std::move(top.positions)}, resolver, chain,
      result.sources, found);
  if (!found.failed()) doc = detail::expand_flow(std::move(doc), found);
  if (!found.failed()) doc = detail::expand_fragments(std::move(doc), top.id, resolver, result.sources, found);
  if (!found.failed()) detail::check_children(doc, top.id, resolver, found, checks);
  if (const auto params = doc.value.find("parameters"); params != doc.value.end()) {
    diagnostics problems;
    detail::check_parameter_specs(*params, "parameters", problems);
    found.take(problems, doc.positions);
    result.parameters = *params;
    doc.value.erase("parameters");
  }
  if (found.failed()) {
    error failure = found.to_error();
    if (positions != nullptr) *positions = std::move(found.positions);
    return unexpected(std::move(failure));
  }
  for (auto& d : found.list)
    if (d.level != severity::error) result.warnings.push_back(std::move(d));
  result.document = std::move(doc.value);
  if (positions != nullptr) *positions = std::move(doc.positions);
  return result;
}

inline child_check check_child_loop(loop_source source, loop_resolver& resolver, child_checks& checks) {
  child_check out;
  source_map positions;
  auto composed = compose_checked(std::move(source), resolver, &positions, checks);
  if (!composed) {
    out.failure = std::move(composed.error());
    return out;
  }
  auto loop = compile_paradigm(composed->document, nullptr);
  if (!loop) {
    out.failure = annotate_error(std::move(loop.error()), positions);
    return out;
  }
  out.parameters = std::move(composed->parameters);
  for (const auto& d : composed->warnings)
    if (d.code == "invalid-child" && !out.grandchild_failure) out.grandchild_failure = d.message;
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

/// Composes `top`: `from:` (the parent's own `from:` first), then `flow:`/`state_defs:`,
/// then `import:`/`fragments:`/`fragment:`, with the merge rules of the detail headers;
/// then every `loop:` name without a template must name a loop (reference_kind::child; the
/// child is composed, read and validated in turn: an invalid one is a warning in
/// composed_loop::warnings, as the reference loads such a parent) whose `parameters:` fit
/// the `with:`;
/// `parameters:` is checked and moved to composed_loop::parameters. A document that uses
/// none of these (or is not a mapping) is returned as it is. The positions of the result
/// go to `*positions` (each value in its own file); on failure `*positions` locates each
/// finding of the error, which is errc::composition_failed or errc::reference_not_found
/// with every finding in error::details and the first, with its position, as the message.
inline expected<composed_loop, error> compose_loop(loop_source top, loop_resolver& resolver,
                                                   source_map* positions = nullptr) {
  detail::child_checks checks;
  checks.in_progress.push_back(top.id);
  return detail::compose_checked(std::move(top), resolver, positions, checks);
}

/// A loop document loaded through the whole pipeline: compose_loop(), then
/// compile_paradigm() (strict reading and validation, once). Errors of either stage carry
/// their findings; the message starts with the first one's position. `*positions`
/// receives the positions of the composed document (see compose_loop()).
inline expected<fsm_loop, error> load_composed_loop(loop_source top, loop_resolver& resolver,
                                                    diagnostics* warnings = nullptr,
                                                    source_map* positions = nullptr) {
  source_map local;
  source_map& map = positions != nullptr ? *positions : local;
  auto composed = compose_loop(std::move(top), resolver, &map);
  if (!composed) return unexpected(std::move(composed.error()));
  auto loop = compile_paradigm(composed->document, warnings);
  if (!loop) return unexpected(annotate_error(std::move(loop.error()), map));
  if (warnings != nullptr) warnings->insert(warnings->end(), composed->warnings.begin(), composed->warnings.end());
  return loop;
}

LITTLE_LOOPS_NAMESPACE_END

#include <little_loops/compose/loop_library.hpp>

// little_loops — `import:`, `fragments:` and `fragment:`: states built from named parts
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp (included after loop_resolver). Every `import:` entry names a
// library (a document whose `fragments:` maps names to partial states), found by the
// resolver from the top document; a later library's fragment replaces an earlier one of
// the same name whole, and the loop's own `fragments:` replaces both. A state with
// `fragment: NAME` is the fragment merged under the state (the state wins at every
// depth); the fragment's `description` and `parameters` stay out of the state, its `with:`
// is a default under the state's, and the bindings fill `${param.*}` (compose_params.hpp).

#include <little_loops/compose/resolver.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/compose_findings.hpp>
#include <little_loops/detail/compose_merge.hpp>
#include <little_loops/detail/compose_params.hpp>

#include <fmt/format.h>

#include <array>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// Keys a fragment library may hold besides its fragments (shown, not used).
inline constexpr std::array<std::string_view, 4> library_keys{"fragments", "name", "description",
                                                              "category"};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// A fragment and the document it is written in.
struct fragment_ref {
  const json* body = nullptr;
  const source_map* positions = nullptr;
  std::string path;  ///< `fragments.<name>` in that document
};

/// The fragments in scope of a loop, by name.
struct fragment_scope {
  std::deque<composing> libraries;  // the documents the references point into
  std::map<std::string, fragment_ref> by_name;

  /// Adds the fragments of `doc`'s `fragments:` (checked at paths of `doc`).
  void add_all(const composing& doc, compose_findings& found) {
    const auto all = doc.value.find("fragments");
    if (all == doc.value.end()) return;
    if (!all->is_object()) {
      found.add(doc.positions, "fragments", "wrong-type",
                fmt::format("'fragments:' must be a mapping, got {}", describe_value(*all)));
      return;
    }
    for (auto it = all->begin(); it != all->end(); ++it) {
      const std::string path = member_path("fragments", it.key());
      if (!it.value().is_object()) {
        found.add(doc.positions, path, "wrong-type",
                  fmt::format("fragment '{}' must be a mapping, got {}", it.key(),
                              describe_value(it.value())));
      } else if (it.value().contains("fragment")) {
        found.add(doc.positions, member_path(path, "fragment"), "nested-fragment",
                  "fragments do not nest: a fragment cannot use 'fragment:'");
      } else {
        diagnostics problems;
        if (const auto specs = it.value().find("parameters"); specs != it.value().end())
          check_parameter_specs(*specs, member_path(path, "parameters"), problems);
        found.take(problems, doc.positions);
        by_name[it.key()] = fragment_ref{&it.value(), &doc.positions, path};
      }
    }
  }

  [[nodiscard]] std::string names() const {
    std::string text;
    for (const auto& [name, ref] : by_name) text += (text.empty() ? "" : ", ") + name;
    return text.empty() ? std::string("(none)") : text;
  }
};

/// Loads the libraries of `doc`'s `import:` in order, then `doc`'s own `fragments:`.
template <class Resolver>
void collect_fragments(const composing& doc, std::string_view referrer, Resolver& resolver,
                       fragment_scope& scope, std::vector<std::string>& sources,
                       compose_findings& found) {
  const auto imports = doc.value.find("import");
  if (imports != doc.value.end() && !imports->is_array())
    found.add(doc.positions, "import", "wrong-type",
              fmt::format("'import:' must be a list of library paths, got {}", describe_value(*imports)));
  for (std::size_t i = 0; imports != doc.value.end() && imports->is_array() && i < imports->size(); ++i) {
    const std::string path = index_path("import", i);
    const json& entry = (*imports)[i];
    if (!entry.is_string()) {
      found.add(doc.positions, path, "wrong-type",
                fmt::format("an 'import:' entry must be a string, got {}", describe_value(entry)));
      continue;
    }
    auto library = resolver.resolve(reference_kind::library, entry.get<std::string>(), referrer);
    if (!library) {
      found.not_found(doc.positions, path, library.error());
      continue;
    }
    sources.push_back(library->id);
    const composing& lib = scope.libraries.emplace_back(
        composing{std::move(library->document), std::move(library->positions)});
    if (!lib.value.is_object()) {
      found.add(doc.positions, path, "wrong-type",
                fmt::format("Fragment library '{}' is not a mapping (got {})", entry.get<std::string>(),
                            describe_value(lib.value)));
      continue;
    }
    for (auto it = lib.value.begin(); it != lib.value.end(); ++it)
      if (!is_one_of(library_keys, it.key())) {
        diagnostics unknown;
        report_unknown_key(unknown, "", it.key(), library_keys);
        found.take(unknown, lib.positions);
      }
    scope.add_all(lib, found);
  }
  scope.add_all(doc, found);
}

/// State `name` (at `from` in the composed document) with its fragment expanded and its
/// `${param.*}` folded; positions of the result go to `out` under `states.<name>`.
inline json expand_state(const std::string& name, const placed_value& from, const fragment_scope& scope,
                         source_map& out, compose_findings& found) {
  const std::string to = member_path("states", name);
  const json& state = from.value;
  const auto use = state.is_object() ? state.find("fragment") : state.end();
  if (!state.is_object() || use == state.end()) {
    diagnostics unbound;
    json plain = state;
    fold_parameters_in(plain, json::object(), to, unbound);
    found.take(unbound, from.positions);
    copy_positions(from, out, to);
    return plain;
  }
  const std::string fragment = use->is_string() ? use->get<std::string>() : std::string();
  const auto ref = scope.by_name.find(fragment);
  if (ref == scope.by_name.end()) {
    found.add(from.positions, member_path(to, "fragment"), "unknown-fragment",
              use->is_string()
                  ? fmt::format("State '{}': fragment '{}' not found. Available fragments: {}", name,
                                fragment, scope.names())
                  : fmt::format("State '{}': 'fragment:' must name a fragment, got {}", name,
                                describe_value(*use)));
    copy_positions(from, out, to);
    return state;
  }
  json body = *ref->second.body;
  body.erase("description");
  const json specs = body.contains("parameters") ? body["parameters"] : json::object();
  body.erase("parameters");
  json merged = deep_merge({body, *ref->second.positions, ref->second.path}, from, out, to);
  if (merged.contains("loop") && state.contains("with"))
    found.add(from.positions, member_path(to, "with"), "ambiguous-with",
              "a state with both 'fragment:' and 'loop:' cannot bind 'with:' (it would bind the "
              "fragment's parameters, not the sub-loop's); use context_passthrough or split the state");
  const json bindings = merged.contains("with") ? merged["with"] : json::object();
  merged.erase("with");
  merged.erase("fragment");
  diagnostics problems;
  if (!bindings.is_object()) report_type(problems, member_path(to, "with"), "a mapping", bindings);
  const json values = bind_parameters(specs, bindings, fmt::format("fragment '{}'", fragment),
                                      member_path(to, "with"), problems);
  fold_parameters_in(merged, values, to, problems);
  found.take(problems, out);
  return merged;
}

/// `doc` with every `fragment:` state expanded; `import:` and `fragments:` are consumed.
template <class Resolver>
composing expand_fragments(composing doc, std::string_view referrer, Resolver& resolver,
                           std::vector<std::string>& sources, compose_findings& found) {
  fragment_scope scope;
  collect_fragments(doc, referrer, resolver, scope, sources, found);
  composing out;
  out.positions.set_file_name(doc.positions.file_name());
  if (const auto at = doc.positions.find("")) out.positions.add("", *at);
  out.value = json::object();
  for (auto it = doc.value.begin(); it != doc.value.end(); ++it) {
    if (it.key() == "import" || it.key() == "fragments") continue;
    if (it.key() != "states" || !it.value().is_object()) {
      copy_positions({it.value(), doc.positions, it.key()}, out.positions, it.key());
      out.value[it.key()] = it.value();
      continue;
    }
    if (const auto at = doc.positions.find("states")) out.positions.add("states", *at);
    json states = json::object();
    for (auto s = it.value().begin(); s != it.value().end(); ++s)
      states[s.key()] = expand_state(
          s.key(), {s.value(), doc.positions, member_path("states", s.key())}, scope, out.positions, found);
    out.value["states"] = std::move(states);
  }
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

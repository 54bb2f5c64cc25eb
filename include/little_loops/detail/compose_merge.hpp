// little_loops — the composition merge: one document over another, positions kept per value
// SPDX-License-Identifier: MIT
#pragma once

// The one merge rule of composition, used for `from:` (parent under child), `state_defs:`
// (generated state under its definition) and `fragment:` (fragment body under the state):
// mappings merge key by key at every depth; anything else in the override (a scalar, a
// list, null, a value of another type) replaces the base value whole. Base keys keep
// their order; keys new in the override follow, in its order. Each value of the result
// keeps the position of the document it came from, so a diagnostic names that file.

#include <little_loops/config.hpp>
#include <little_loops/document.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <string>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A value inside a document with the document's positions and the value's path there.
struct placed_value {
  const json& value;
  const source_map& positions;
  std::string path;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Records in `to` the position of `from`'s value and of every value inside it, each at
/// the same relative path under `to_path`.
inline void copy_positions(const placed_value& from, source_map& to, const std::string& to_path) {
  if (const auto at = from.positions.find(from.path)) to.add(to_path, *at);
  if (from.value.is_object()) {
    for (auto it = from.value.begin(); it != from.value.end(); ++it)
      copy_positions({it.value(), from.positions, member_path(from.path, it.key())}, to,
                     member_path(to_path, it.key()));
  } else if (from.value.is_array()) {
    for (std::size_t i = 0; i < from.value.size(); ++i)
      copy_positions({from.value[i], from.positions, index_path(from.path, i)}, to,
                     index_path(to_path, i));
  }
}

/// `over` merged onto `base` (see the rule above); positions of the result go to `out`
/// under `path`. Neither input changes.
inline json deep_merge(const placed_value& base, const placed_value& over, source_map& out,
                       const std::string& path) {
  if (!base.value.is_object() || !over.value.is_object()) {
    copy_positions(over, out, path);
    return over.value;
  }
  if (const auto at = over.positions.find(over.path)) out.add(path, *at);
  json result = json::object();
  for (auto it = base.value.begin(); it != base.value.end(); ++it) {
    const std::string to = member_path(path, it.key());
    const placed_value from{it.value(), base.positions, member_path(base.path, it.key())};
    const auto o = over.value.find(it.key());
    if (o == over.value.end()) {
      copy_positions(from, out, to);
      result[it.key()] = it.value();
    } else {
      result[it.key()] =
          deep_merge(from, {*o, over.positions, member_path(over.path, it.key())}, out, to);
    }
  }
  for (auto it = over.value.begin(); it != over.value.end(); ++it) {
    if (base.value.contains(it.key())) continue;
    copy_positions({it.value(), over.positions, member_path(over.path, it.key())}, out,
                   member_path(path, it.key()));
    result[it.key()] = it.value();
  }
  return result;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

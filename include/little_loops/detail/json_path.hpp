// little_loops — jq-style dotted paths (`.a.b`, `.a.0.b`, `.a[0].b`, `.`) into JSON values
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/numbers.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// One step of a path: an object key, or (when all digits) also an array index.
struct path_segment {
  std::string key;
  bool bracket = false;  // written as `[N]`

  friend bool operator==(const path_segment&, const path_segment&) = default;
};

using path_segments = std::vector<path_segment>;

inline bool all_digits(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// The array index a path segment names, as the original reads it (`part.isdigit()`, then
// `int(part)`): decimal digits only, of any script (`٠` is 0), leading zeros allowed. An
// index too large for size_t is SIZE_MAX (it names no element). nullopt: not an index.
inline std::optional<std::size_t> path_index(std::string_view key) noexcept {
  if (key.empty()) return std::nullopt;
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::size_t value = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(key.data());
  for (std::size_t i = 0; i < key.size();) {
    int digit;
    if (bytes[i] < 0x80) {
      if (bytes[i] < '0' || bytes[i] > '9') return std::nullopt;
      digit = bytes[i] - '0';
      ++i;
    } else {
      const std::size_t len = utf8_sequence_length(bytes + i, bytes + key.size());
      if (len == 0) return std::nullopt;
      digit = unicode_decimal_value(utf8_code_point(bytes + i, len));
      if (digit < 0) return std::nullopt;
      i += len;
    }
    const auto d = static_cast<std::size_t>(digit);
    value = value > (none - d) / 10 ? none : value * 10 + d;
  }
  return value;
}

LITTLE_LOOPS_INLINE path_segments parse_json_path(std::string_view path, bool brackets = true);
LITTLE_LOOPS_INLINE std::optional<path_segments> parse_member_path(std::string_view path, bool brackets = true);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Splits a path into segments. "" and "." select the root (no segments). A leading "." is
// optional; `[N]` (digits only) is an index segment; any other `[` is part of a key.
// Empty keys (`a..b`) are kept and simply never match. With `brackets` false, `[` is never
// special: the path splits at dots only, as the original's (a key may hold `[0]`).
LITTLE_LOOPS_INLINE path_segments parse_json_path(std::string_view path, bool brackets) {
  path_segments out;
  if (path.empty() || path == ".") return out;
  if (path.front() == '.') path.remove_prefix(1);
  std::string current;
  bool pending = true;  // a key segment is open (possibly empty)
  std::size_t i = 0;
  while (i < path.size()) {
    char c = path[i];
    if (c == '.') {
      if (pending) out.push_back({std::move(current), false});
      current.clear();
      pending = true;
      ++i;
      continue;
    }
    if (c == '[' && brackets) {
      std::size_t close = path.find(']', i + 1);
      if (close != std::string_view::npos && all_digits(path.substr(i + 1, close - i - 1))) {
        if (pending && !current.empty()) out.push_back({std::move(current), false});
        current.clear();
        out.push_back({std::string(path.substr(i + 1, close - i - 1)), true});
        pending = false;
        i = close + 1;
        continue;
      }
    }
    current += c;
    pending = true;
    ++i;
  }
  if (pending) out.push_back({std::move(current), false});
  return out;
}

// A path that starts below a root already named (`${context.PATH}`, whose `context.` is the
// root): split as parse_json_path splits it, but every segment must have a key, a leading
// "." included (it is an empty segment, not the root). nullopt: an empty segment (`a..b`,
// `a.`, `.a`) or an empty path, which name nothing.
LITTLE_LOOPS_INLINE std::optional<path_segments> parse_member_path(std::string_view path, bool brackets) {
  if (path.empty() || path.front() == '.') return std::nullopt;
  path_segments segs = parse_json_path(path, brackets);
  if (segs.empty()) return std::nullopt;
  for (const auto& seg : segs)
    if (seg.key.empty()) return std::nullopt;
  return segs;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// True when a segment was written as `[N]`.
inline bool has_bracket_segment(const path_segments& segs) noexcept {
  for (const auto& seg : segs)
    if (seg.bracket) return true;
  return false;
}

// Result of a lookup: the value, or where the walk stopped.
template <class Json>
struct path_lookup {
  const Json* value = nullptr;   // null: not found
  const Json* parent = nullptr;  // the value at which the walk stopped (when not found)
  std::size_t failed_at = 0;     // index of the segment that did not resolve
};

// Walks `segs` from `doc`: objects by key, arrays by a non-negative decimal index.
template <class Json>
path_lookup<Json> lookup_json_path(const Json& doc, const path_segments& segs,
                                   std::size_t first = 0) {
  const Json* cur = &doc;
  for (std::size_t i = first; i < segs.size(); ++i) {
    const auto& seg = segs[i];
    if (cur->is_object()) {
      // The object's own map, without basic_json's iterator wrapper (a hot path: every
      // `${context.…}` of a rendering walks here).
      const auto& members = cur->template get_ref<const typename Json::object_t&>();
      auto it = members.find(seg.key);
      if (it != members.end()) {
        cur = &it->second;
        continue;
      }
      return {nullptr, cur, i};
    }
    if (cur->is_array()) {
      if (const auto idx = path_index(seg.key); idx && *idx < cur->size()) {
        cur = &(*cur)[*idx];
        continue;
      }
    }
    return {nullptr, cur, i};
  }
  return {cur, nullptr, segs.size()};
}

LITTLE_LOOPS_INLINE std::string segments_text(const path_segments& segs, std::size_t n);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// `a.b[0].c` text of the first `n` segments (for messages).
LITTLE_LOOPS_INLINE std::string segments_text(const path_segments& segs, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n && i < segs.size(); ++i) {
    if (segs[i].bracket) {
      s += '[';
      s += segs[i].key;
      s += ']';
    } else {
      if (!s.empty()) s += '.';
      s += segs[i].key;
    }
  }
  return s;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

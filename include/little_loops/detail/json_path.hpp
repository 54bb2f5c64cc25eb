// little_loops — jq-style dotted paths (`.a.b`, `.a.0.b`, `.a[0].b`, `.`) into JSON values
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <cstddef>
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

// Splits a path into segments. "" and "." select the root (no segments). A leading "." is
// optional; `[N]` (digits only) is an index segment; any other `[` is part of a key.
// Empty keys (`a..b`) are kept and simply never match.
inline path_segments parse_json_path(std::string_view path) {
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
    if (c == '[') {
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
      auto it = cur->find(seg.key);
      if (it != cur->end()) {
        cur = &*it;
        continue;
      }
      return {nullptr, cur, i};
    }
    if (cur->is_array() && all_digits(seg.key) && seg.key.size() < 19) {
      std::size_t idx = 0;
      for (char c : seg.key) idx = idx * 10 + static_cast<std::size_t>(c - '0');
      if (idx < cur->size()) {
        cur = &(*cur)[idx];
        continue;
      }
    }
    return {nullptr, cur, i};
  }
  return {cur, nullptr, segs.size()};
}

// `a.b[0].c` text of the first `n` segments (for messages).
inline std::string segments_text(const path_segments& segs, std::size_t n) {
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

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

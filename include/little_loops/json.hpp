// little_loops — the JSON type used throughout the library
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The library's JSON value: key order is preserved (documents round-trip in the order they
/// were written, events serialise as `{"event", "ts", ...}`).
using json = nlohmann::ordered_json;

/// An insertion-ordered string map (a vector of pairs with a map interface).
template <class Key, class Value>
using ordered_map = nlohmann::ordered_map<Key, Value>;

namespace detail {

// Writers of JSON text that match the library's one-line dump,
// `dump(-1, ' ', false, json::error_handler_t::replace)`, byte for byte, for the records
// written on the loop's path (event lines, journal records) without building JSON objects.

/// Appends `v` as that dump writes it.
inline void append_json_text(std::string& out, const json& v) {
  out += v.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Appends `s` as a JSON string exactly as that dump writes it: printable ASCII without `"`
/// or `\\` is copied as is; anything else goes through nlohmann's serializer (escapes,
/// UTF-8 checks, U+FFFD for invalid bytes).
inline void append_json_string(std::string& out, std::string_view s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
      append_json_text(out, json(s));
      return;
    }
  }
  out += '"';
  out.append(s);
  out += '"';
}

/// Appends `key` → `value` to an ordered map (e.g. a JSON object's `object_t`) without
/// looking for `key` first, for callers that know it is new (the keys of one JSON object
/// are unique): n keys cost O(n), where `map[key] = value` costs O(n²) in all.
template <class Map, class Key, class Value>
void append_new_key(Map& map, Key&& key, Value&& value) {
  map.Container::emplace_back(std::forward<Key>(key), std::forward<Value>(value));
}

/// Appends an integer as that dump writes it.
inline void append_json_integer(std::string& out, std::int64_t v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, end);
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

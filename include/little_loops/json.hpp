// little_loops — the JSON type used throughout the library
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/utf8.hpp>

#include <nlohmann/json.hpp>

#include <charconv>
#include <concepts>
#include <cstdint>
#include <cstring>
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

LITTLE_LOOPS_INLINE void append_json_dump(std::string& out, const json& v);
LITTLE_LOOPS_INLINE bool json_plain_ascii(std::string_view s) noexcept;
LITTLE_LOOPS_INLINE bool append_json_string(std::string& out, std::string_view s);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Appends `v` exactly as nlohmann's serializer writes it (see append_json_text).
LITTLE_LOOPS_INLINE void append_json_dump(std::string& out, const json& v) {
  out += v.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// True when every byte of `s` is printable ASCII other than `"` and `\\` (a JSON string
/// that needs no escape). Eight bytes per test: a control byte borrows when 0x20 is
/// subtracted, a byte with the high bit set is seen directly, and `"` or `\\` make a zero
/// byte when xor-ed with their own value (borrows only ever follow a byte that matched).
LITTLE_LOOPS_INLINE bool json_plain_ascii(std::string_view s) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t highs = 0x8080808080808080ULL;
  const auto has_zero_byte = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    if (((w | (w - 0x20 * ones)) & highs) != 0 || has_zero_byte(w ^ ('"' * ones)) != 0 ||
        has_zero_byte(w ^ ('\\' * ones)) != 0)
      return false;
  }
  for (; n > 0; ++p, --n) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') return false;
  }
  return true;
}

/// Appends `s` as a JSON string exactly as that dump writes it, straight into `out` (no
/// temporary copies: a capped 16 MiB output is written once): `"`, `\\` and control
/// characters escaped (`\b \t \n \f \r`, the others `\u00xx`), well-formed UTF-8 (Unicode's
/// table 3-7: no overlong forms, surrogates or code points past U+10FFFF) copied, and each
/// ill-formed sequence replaced as nlohmann's replace handler does: a byte that cannot
/// start a sequence is one U+FFFD; a sequence cut short by a byte that cannot continue it
/// is one U+FFFD and that byte is read again; one cut short by the end of `s` is one U+FFFD.
/// Returns true when something was replaced (the text does not hold `s` exactly).
LITTLE_LOOPS_INLINE bool append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  out.reserve(out.size() + n + 2);
  out += '"';
  bool replaced = false;
  std::size_t i = 0;
  while (i < n) {
    // A run copied as it is: printable ASCII but `"` and `\\` (eight bytes at a time).
    std::size_t j = i;
    while (n - j >= 8 && json_plain_ascii(std::string_view(s.data() + j, 8))) j += 8;
    while (j < n && p[j] >= 0x20 && p[j] < 0x80 && p[j] != '"' && p[j] != '\\') ++j;
    out.append(s.data() + i, j - i);
    i = j;
    if (i == n) break;
    const unsigned char c = p[i];
    if (c < 0x80) {
      out += '\\';
      switch (c) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '\b': out += 'b'; break;
        case '\t': out += 't'; break;
        case '\n': out += 'n'; break;
        case '\f': out += 'f'; break;
        case '\r': out += 'r'; break;
        default:
          out += "u00";
          out += hex[c >> 4];
          out += hex[c & 0xF];
      }
      ++i;
      continue;
    }
    const utf8_sequence seq = utf8_sequence_at(p, i, n);
    if (seq.well_formed) {
      out.append(s.data() + i, seq.length);
    } else {
      out += utf8_replacement;
      replaced = true;
    }
    i += seq.length;
  }
  out += '"';
  return replaced;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Appends an integer as that dump writes it.
template <class Int>
  requires std::integral<Int>
void append_json_integer(std::string& out, Int v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, end);
}

LITTLE_LOOPS_INLINE bool append_json_text(std::string& out, const json& v);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Appends `v` as that dump writes it. Containers, strings, integers, booleans and null are
/// written here (no serializer is built per value: event details, contexts and records are
/// written at every step); floating-point numbers and binary values go through nlohmann's
/// serializer, whose number format this does not reimplement. Recursion follows the
/// value's nesting, as the serializer's does. Returns true when a string (or key) that is
/// not valid UTF-8 was written with replacements.
LITTLE_LOOPS_INLINE bool append_json_text(std::string& out, const json& v) {
  using namespace std::string_view_literals;
  switch (v.type()) {
    case json::value_t::null:
      out += "null"sv;
      return false;
    case json::value_t::boolean:
      out += v.get_ref<const json::boolean_t&>() ? "true"sv : "false"sv;
      return false;
    case json::value_t::number_integer:
      append_json_integer(out, v.get_ref<const json::number_integer_t&>());
      return false;
    case json::value_t::number_unsigned:
      append_json_integer(out, v.get_ref<const json::number_unsigned_t&>());
      return false;
    case json::value_t::string:
      return append_json_string(out, v.get_ref<const json::string_t&>());
    case json::value_t::array: {
      out += '[';
      bool first = true, replaced = false;
      for (const json& element : v.get_ref<const json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        replaced |= append_json_text(out, element);
      }
      out += ']';
      return replaced;
    }
    case json::value_t::object: {
      out += '{';
      bool first = true, replaced = false;
      for (const auto& [key, value] : v.get_ref<const json::object_t&>()) {
        if (!first) out += ',';
        first = false;
        replaced |= append_json_string(out, key);
        out += ':';
        replaced |= append_json_text(out, value);
      }
      out += '}';
      return replaced;
    }
    case json::value_t::number_float:
    case json::value_t::binary:
    case json::value_t::discarded:
      break;
  }
  append_json_dump(out, v);
  return false;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// An empty JSON object: the default of the `json` members that start as `{}`. A member
/// initialised with `json::object()` makes every includer instantiate its initializer-list
/// construction; a call of this function keeps that work in its one definition.
LITTLE_LOOPS_INLINE json empty_json_object();
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE json empty_json_object() { return json::object(); }
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Parses `text` as one JSON document; text that is not JSON gives a discarded value
/// (`is_discarded()`), never an exception. It parses a range of chars, as sax_parse_json and
/// every other parse in the library do: `json::parse` of a `std::string` would instantiate
/// a second parser and lexer in each includer.
LITTLE_LOOPS_INLINE json parse_json_or_discarded(std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE json parse_json_or_discarded(std::string_view text) {
  return json::parse(text.data(), text.data() + text.size(), nullptr, false);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Runs nlohmann's JSON parser over `text`, reporting to the SAX consumer `sax`; with
/// `strict`, the whole text must be one value. Returns false when the consumer stopped the
/// parse or the text is not JSON. `json::sax_parse` would also instantiate, per consumer,
/// the readers of the binary formats (CBOR, MessagePack, UBJSON, BSON: about 45 KB of code
/// in each includer) that the library never reads; nlohmann's parser of JSON text is the
/// same one `json::sax_parse` runs for text.
template <class Sax>
bool sax_parse_json(std::string_view text, Sax& sax, bool strict = true) {
  const char* first = text.data();
  auto input = nlohmann::detail::input_adapter(first, first + text.size());
  return nlohmann::detail::parser<json, decltype(input)>(std::move(input)).sax_parse(&sax, strict);
}

/// Appends `key` → `value` to an ordered map (e.g. a JSON object's `object_t`) without
/// looking for `key` first, for callers that know it is new (the keys of one JSON object
/// are unique): n keys cost O(n), where `map[key] = value` costs O(n²) in all.
template <class Map, class Key, class Value>
void append_new_key(Map& map, Key&& key, Value&& value) {
  map.Container::emplace_back(std::forward<Key>(key), std::forward<Value>(value));
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

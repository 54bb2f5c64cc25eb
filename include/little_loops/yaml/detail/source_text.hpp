// little_loops — YAML source-text checks that yaml-cpp does not make (PyYAML's stricter reading)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/strings.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

// yaml-cpp writes the escapes `\N` and `\_` of a double-quoted scalar as the single bytes
// 0x85 and 0xA0 instead of the UTF-8 of U+0085 and U+00A0 (its other escapes are UTF-8).
// In a source that is well-formed UTF-8 such a lone byte can only come from those escapes:
// it is re-encoded, so "non\_breaking" reads as PyYAML reads it. Anything else is kept (and
// diagnosed by the schema parser when invalid).
inline void reencode_yaml_escapes(std::string& text) {
  if (is_valid_utf8(text)) return;
  std::string out;
  out.reserve(text.size() + 8);
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    std::size_t n = utf8_sequence_length(p, end);
    if (n == 0 && (*p == 0x85 || *p == 0xA0)) {
      out += static_cast<char>(0xC2);
      out += static_cast<char>(*p);
      ++p;
      continue;
    }
    if (n == 0) n = 1;
    out.append(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  text = std::move(out);
}

// The first character YAML does not allow in a stream (PyYAML's Reader: anything but TAB, LF,
// CR, printable ASCII, NEL, U+00A0–U+D7FF, U+E000–U+FFFD and U+10000 up), in well-formed
// UTF-8 `text`: its byte offset and code point, or nullopt. yaml-cpp reads such bytes
// silently (a NUL even as an escape), so they are refused before it sees them.
struct unacceptable_char {
  std::size_t offset = 0;
  char32_t code = 0;
};
inline std::optional<unacceptable_char> find_unacceptable_char(std::string_view text) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = std::max<std::size_t>(utf8_sequence_length(bytes + i, bytes + text.size()), 1);
    const char32_t c = utf8_code_point(bytes + i, len);
    if ((c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0D) || (c >= 0x7F && c <= 0x9F && c != 0x85) ||
        c == 0xFFFE || c == 0xFFFF)
      return unacceptable_char{i, c};
    i += len;
  }
  return std::nullopt;
}

// The offset just past the quoted scalar opening at `text[pos]` (`"` or `'`), or npos when
// it is not closed before the end of the text (yaml-cpp takes an unterminated one at the end
// of the stream as ending there).
inline std::size_t quoted_scalar_end(std::string_view text, std::size_t pos) noexcept {
  const char q = text[pos];
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    if (q == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == q) {
      if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is a quote inside a single-quoted scalar
        continue;
      }
      return i + 1;
    }
  }
  return std::string_view::npos;
}

inline bool is_yaml_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
inline bool is_flow_indicator(char c) noexcept {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

// Skips the properties (`!tag`, `&anchor`, in either order, with the blanks and comments
// between them) of the node whose event mark is `text[pos]`; the anchor's name goes to
// `*anchor`. Returns where the node's content starts.
inline std::size_t skip_node_properties(std::string_view text, std::size_t pos,
                                        std::string_view* anchor) noexcept {
  while (pos < text.size() && (text[pos] == '!' || text[pos] == '&')) {
    const std::size_t start = pos;
    while (pos < text.size() && !is_yaml_blank(text[pos]) && !is_flow_indicator(text[pos])) ++pos;
    if (text[start] == '&' && anchor != nullptr) *anchor = text.substr(start + 1, pos - start - 1);
    for (;;) {
      while (pos < text.size() && is_yaml_blank(text[pos])) ++pos;
      if (pos >= text.size() || text[pos] != '#') break;
      while (pos < text.size() && text[pos] != '\n') ++pos;
    }
  }
  return pos;
}

// PyYAML's scanner takes a tab only inside a quoted or block scalar or a comment: anywhere
// else (indentation, after `key:`, inside a plain scalar, before a comment, at the end of a
// line, between flow items) it is "found character '\t' that cannot start any token". yaml-cpp
// takes most of those. `verbatim` are the [begin, end) ranges of the quoted and block
// scalars, in document order. Returns the offset of the first tab outside them and outside
// comments.
inline std::optional<std::size_t> find_stray_tab(
    std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& verbatim) noexcept {
  std::size_t next = 0;         // the first range not passed yet
  std::size_t token_end = 0;    // the end of the last range skipped (a comment may follow it)
  for (std::size_t i = 0; i < text.size(); ++i) {
    while (next < verbatim.size() && verbatim[next].second <= i) ++next;
    if (next < verbatim.size() && verbatim[next].first <= i) {
      i = verbatim[next].second - 1;
      token_end = verbatim[next].second;
      continue;
    }
    const char c = text[i];
    if (c == '\t') return i;
    if (c == '#' && (i == 0 || is_yaml_blank(text[i - 1]) || i == token_end)) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    }
  }
  return std::nullopt;
}

// The 1-based line and column (in code points) of `offset` in UTF-8 `text`.
inline std::pair<std::size_t, std::size_t> line_and_column(std::string_view text,
                                                           std::size_t offset) noexcept {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

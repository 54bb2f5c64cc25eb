// little_loops — validating JSON scanner that extracts the text of one path without a DOM
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/json_path.hpp>
#include <little_loops/detail/utf8.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

LITTLE_LOOPS_INLINE int json_hex_digit(char c) noexcept;
LITTLE_LOOPS_INLINE void decode_json_string(std::string_view raw, std::string& out);
LITTLE_LOOPS_INLINE std::string replace_lone_surrogates(std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE int json_hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes the contents of a JSON string (the text between the quotes, already validated by
// json_path_scanner) like Python's json module: the simple escapes, `\uXXXX`, and a high
// surrogate escape followed by a low one (`\ud83d\ude00`) as one code point (U+1F600).
// Other surrogates stay lone, in the generalised 3-byte form utf8_append gives them
// ("WTF-8"): that is not valid UTF-8, so it never equals a well-formed string, just as
// Python's lone-surrogate str differs from every string that can be written in a loop
// file. See replace_lone_surrogates().
LITTLE_LOOPS_INLINE void decode_json_string(std::string_view raw, std::string& out) {
  out.reserve(out.size() + raw.size());
  const auto hex4 = [&](std::size_t at) {
    unsigned cp = 0;
    for (std::size_t h = 0; h < 4; ++h)
      cp = cp * 16 + static_cast<unsigned>(json_hex_digit(raw[at + h]));
    return cp;
  };
  for (std::size_t k = 0; k < raw.size(); ++k) {
    if (raw[k] != '\\') {
      out += raw[k];
      continue;
    }
    const char e = raw[++k];
    switch (e) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = hex4(k + 1);
        k += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && k + 6 < raw.size() && raw[k + 1] == '\\' &&
            raw[k + 2] == 'u') {
          const unsigned low = hex4(k + 3);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            k += 6;
          }
        }
        utf8_append(out, cp);
        break;
      }
      default: out += e; break;  // " \ /
    }
  }
}

// `text` with every lone surrogate decode_json_string produced (ED A0–BF 80–BF) replaced by
// U+FFFD, so the value can be shown in details (which must be valid UTF-8).
LITTLE_LOOPS_INLINE std::string replace_lone_surrogates(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '\xED' && k + 2 < text.size() &&
        static_cast<unsigned char>(text[k + 1]) >= 0xA0 &&
        static_cast<unsigned char>(text[k + 1]) <= 0xBF) {
      out += utf8_replacement;
      k += 2;
      continue;
    }
    out += text[k];
  }
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// Scans a whole JSON document (RFC 8259 grammar plus the `NaN`, `Infinity` and `-Infinity`
// that Python's json module accepts; nesting limited to `max_depth`), and
// records the byte span of the value at `path` (when an object repeats a key on the path, at
// any depth, only its last copy counts, as Python's json module keeps the last). Nothing is
// allocated except for keys with escapes.
// Error messages follow Python's json module: "Expecting value: line 1 column 5 (char 4)",
// with positions counted in characters.
class json_path_scanner {
 public:
  json_path_scanner(std::string_view text, const path_segments& path, std::size_t max_depth)
      : s_(text), path_(path), max_depth_(max_depth) {}

  // True when the document is valid; then found() tells whether the path exists.
  bool scan();

  [[nodiscard]] bool found() const noexcept { return found_; }
  [[nodiscard]] std::string_view match() const noexcept {
    return s_.substr(match_begin_, match_end_ - match_begin_);
  }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  static constexpr std::size_t off_path = static_cast<std::size_t>(-1);

  // Length of the character starting at byte `k`: a well-formed UTF-8 sequence, or the
  // maximal ill-formed prefix of one, or one stray byte (each of which Python's
  // decode(errors="replace") turns into one character).
  std::size_t char_length(std::size_t k) const noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(s_.data());
    return p[k] < 0x80 ? 1 : utf8_sequence_at(p, k, s_.size()).length;
  }

  // Python's json module reports positions in characters (code points), not bytes.
  bool fail(std::string_view what, std::size_t pos);

  void skip_ws() noexcept;

  // `matched`: number of path segments matched by the position of this value, or off_path.
  bool value(std::size_t matched, std::size_t depth);

  bool any_value(std::size_t matched, std::size_t depth);

  bool literal(std::string_view word);

  static bool digit(char c) noexcept { return c >= '0' && c <= '9'; }

  bool number();

  static int hex(char c) noexcept { return json_hex_digit(c); }

  // Scans a string starting at the opening quote. When `raw` is given, stores the contents
  // between the quotes (escapes not decoded; see key_matches()).
  bool string(std::string_view* raw);

  bool key_matches(std::string_view raw, std::size_t matched) const;

  bool object(std::size_t matched, std::size_t depth);

  bool array(std::size_t matched, std::size_t depth);

  std::string_view s_;
  const path_segments& path_;
  std::size_t max_depth_;
  std::size_t i_ = 0;
  bool found_ = false;
  std::size_t match_begin_ = 0;
  std::size_t match_end_ = 0;
  std::string error_;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE auto json_path_scanner::scan() -> bool {
  if (s_.starts_with("\xEF\xBB\xBF"))
    return fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
  skip_ws();
  if (!value(0, 0)) return false;
  skip_ws();
  if (i_ != s_.size()) return fail("Extra data", i_);
  return true;
}

LITTLE_LOOPS_INLINE auto json_path_scanner::fail(std::string_view what, std::size_t pos) -> bool {
  std::size_t line = 1, col = 1, chars = 0;
  for (std::size_t k = 0; k < pos && k < s_.size(); k += char_length(k)) {
    ++chars;
    if (s_[k] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  error_ = fmt::format("{}: line {} column {} (char {})", what, line, col, chars);
  return false;
}

LITTLE_LOOPS_INLINE auto json_path_scanner::skip_ws() noexcept -> void {
  while (i_ < s_.size()) {
    const char c = s_[i_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++i_;
  }
}

LITTLE_LOOPS_INLINE auto json_path_scanner::value(std::size_t matched, std::size_t depth) -> bool {
  const bool target = matched == path_.size();
  const std::size_t begin = i_;
  if (!any_value(target ? off_path : matched, depth)) return false;
  if (target) {
    found_ = true;
    match_begin_ = begin;
    match_end_ = i_;
  }
  return true;
}

LITTLE_LOOPS_INLINE auto json_path_scanner::any_value(std::size_t matched, std::size_t depth) -> bool {
  if (i_ >= s_.size()) return fail("Expecting value", i_);
  const char c = s_[i_];
  switch (c) {
    case '{': return object(matched, depth + 1);
    case '[': return array(matched, depth + 1);
    case '"': return string(nullptr);
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    case 'N': return literal("NaN");  // Python's json.loads accepts NaN and ±Infinity
    case 'I': return literal("Infinity");
    default: return number();
  }
}

LITTLE_LOOPS_INLINE auto json_path_scanner::literal(std::string_view word) -> bool {
  if (s_.compare(i_, word.size(), word) != 0) return fail("Expecting value", i_);
  i_ += word.size();
  return true;
}

LITTLE_LOOPS_INLINE auto json_path_scanner::number() -> bool {
  const std::size_t start = i_;
  if (s_.compare(i_, 9, "-Infinity") == 0) {
    i_ += 9;
    return true;
  }
  if (i_ < s_.size() && s_[i_] == '-') ++i_;
  if (i_ >= s_.size() || !digit(s_[i_])) return fail("Expecting value", start);
  if (s_[i_] == '0') {
    ++i_;
  } else {
    while (i_ < s_.size() && digit(s_[i_])) ++i_;
  }
  if (i_ < s_.size() && s_[i_] == '.' && i_ + 1 < s_.size() && digit(s_[i_ + 1])) {
    ++i_;
    while (i_ < s_.size() && digit(s_[i_])) ++i_;
  }
  if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
    std::size_t k = i_ + 1;
    if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
    if (k < s_.size() && digit(s_[k])) {
      i_ = k;
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
  }
  return true;
}

LITTLE_LOOPS_INLINE auto json_path_scanner::string(std::string_view* raw) -> bool {
  const std::size_t start = i_;
  ++i_;
  const std::size_t body = i_;
  while (i_ < s_.size()) {
    const char c = s_[i_];
    if (c == '"') {
      if (raw) *raw = s_.substr(body, i_ - body);
      ++i_;
      return true;
    }
    if (c == '\\') {
      if (i_ + 1 >= s_.size()) break;
      const char e = s_[i_ + 1];
      if (e == 'u') {
        // Python requires a character after the four digits (its `end >= len` test), so
        // `"\u1234` at the end of the text is an invalid escape, not an unterminated string.
        if (i_ + 6 >= s_.size() || hex(s_[i_ + 2]) < 0 || hex(s_[i_ + 3]) < 0 ||
            hex(s_[i_ + 4]) < 0 || hex(s_[i_ + 5]) < 0)
          return fail("Invalid \\uXXXX escape", i_ + 1);  // Python points at the `u`
        i_ += 6;
        continue;
      }
      if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' &&
          e != 't')
        return fail("Invalid \\escape", i_);
      i_ += 2;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20) return fail("Invalid control character at", i_);
    ++i_;
  }
  return fail("Unterminated string starting at", start);
}

LITTLE_LOOPS_INLINE auto json_path_scanner::key_matches(std::string_view raw, std::size_t matched) const -> bool {
  const std::string& want = path_[matched].key;
  if (raw.find('\\') == std::string_view::npos) return raw == want;
  std::string key;
  decode_json_string(raw, key);
  return key == want;
}

LITTLE_LOOPS_INLINE auto json_path_scanner::object(std::size_t matched, std::size_t depth) -> bool {
  if (depth > max_depth_) return fail("Nesting too deep", i_);
  ++i_;
  skip_ws();
  if (i_ < s_.size() && s_[i_] == '}') {
    ++i_;
    return true;
  }
  while (true) {
    if (i_ >= s_.size() || s_[i_] != '"')
      return fail("Expecting property name enclosed in double quotes", i_);
    std::string_view raw;
    if (!string(&raw)) return false;
    skip_ws();
    if (i_ >= s_.size() || s_[i_] != ':') return fail("Expecting ':' delimiter", i_);
    ++i_;
    skip_ws();
    std::size_t child = off_path;
    if (matched != off_path && key_matches(raw, matched)) {
      child = matched + 1;
      // json.loads keeps the last copy of a repeated key, so this copy replaces whatever an
      // earlier copy of the same key matched ({"a": {"b": 1}, "a": 5} has no `.a.b`). Only
      // an earlier copy can have set found_: this object is reached through the last copy
      // seen so far of each ancestor key (an earlier ancestor copy was forgotten the same
      // way), array indices are unique, and off-path keys never get here.
      found_ = false;
    }
    if (!value(child, depth)) return false;
    skip_ws();
    if (i_ < s_.size() && s_[i_] == ',') {
      ++i_;
      skip_ws();
      continue;
    }
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    return fail("Expecting ',' delimiter", i_);
  }
}

LITTLE_LOOPS_INLINE auto json_path_scanner::array(std::size_t matched, std::size_t depth) -> bool {
  if (depth > max_depth_) return fail("Nesting too deep", i_);
  ++i_;
  skip_ws();
  if (i_ < s_.size() && s_[i_] == ']') {
    ++i_;
    return true;
  }
  // The wanted index, if this array is on the path.
  std::size_t want = off_path;
  if (matched != off_path) {
    if (const auto idx = path_index(path_[matched].key); idx && *idx != off_path) want = *idx;
  }
  std::size_t index = 0;
  while (true) {
    if (!value(index == want ? matched + 1 : off_path, depth)) return false;
    ++index;
    skip_ws();
    if (i_ < s_.size() && s_[i_] == ',') {
      ++i_;
      skip_ws();
      continue;
    }
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    return fail("Expecting ',' delimiter", i_);
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

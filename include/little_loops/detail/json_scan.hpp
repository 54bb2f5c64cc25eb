// little_loops — validating JSON scanner that extracts the text of one path without a DOM
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/json_path.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// Scans a whole JSON document (RFC 8259 grammar, nesting limited to `max_depth`), and
// records the byte span of the value at `path` (the last one when an object repeats a key,
// as Python's json module keeps the last). Nothing is allocated except for keys with escapes.
// Error messages follow Python's json module: "Expecting value: line 1 column 5 (char 4)".
class json_path_scanner {
 public:
  json_path_scanner(std::string_view text, const path_segments& path, std::size_t max_depth)
      : s_(text), path_(path), max_depth_(max_depth) {}

  // True when the document is valid; then found() tells whether the path exists.
  bool scan() {
    skip_ws();
    if (!value(0, 0)) return false;
    skip_ws();
    if (i_ != s_.size()) return fail("Extra data", i_);
    return true;
  }

  [[nodiscard]] bool found() const noexcept { return found_; }
  [[nodiscard]] std::string_view match() const noexcept {
    return s_.substr(match_begin_, match_end_ - match_begin_);
  }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  static constexpr std::size_t off_path = static_cast<std::size_t>(-1);

  bool fail(std::string_view what, std::size_t pos) {
    std::size_t line = 1, col = 1;
    for (std::size_t k = 0; k < pos && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    error_ = fmt::format("{}: line {} column {} (char {})", what, line, col, pos);
    return false;
  }

  void skip_ws() noexcept {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++i_;
    }
  }

  // `matched`: number of path segments matched by the position of this value, or off_path.
  bool value(std::size_t matched, std::size_t depth) {
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

  bool any_value(std::size_t matched, std::size_t depth) {
    if (i_ >= s_.size()) return fail("Expecting value", i_);
    const char c = s_[i_];
    switch (c) {
      case '{': return object(matched, depth + 1);
      case '[': return array(matched, depth + 1);
      case '"': return string(nullptr);
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  bool literal(std::string_view word) {
    if (s_.compare(i_, word.size(), word) != 0) return fail("Expecting value", i_);
    i_ += word.size();
    return true;
  }

  static bool digit(char c) noexcept { return c >= '0' && c <= '9'; }

  bool number() {
    const std::size_t start = i_;
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

  static int hex(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Scans a string starting at the opening quote. When `decoded` is given, stores the raw
  // contents (escapes decoded only if present; see key()).
  bool string(std::string_view* raw) {
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
          if (i_ + 6 > s_.size() || hex(s_[i_ + 2]) < 0 || hex(s_[i_ + 3]) < 0 ||
              hex(s_[i_ + 4]) < 0 || hex(s_[i_ + 5]) < 0)
            return fail("Invalid \\uXXXX escape", i_);
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

  // Decodes simple escapes of a key for comparison (keys with \u escapes are compared after
  // decoding the BMP code point as UTF-8).
  static std::string decode_key(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
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
          unsigned cp = 0;
          for (int h = 1; h <= 4; ++h) cp = cp * 16 + static_cast<unsigned>(hex(raw[k + h]));
          k += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: out += e; break;
      }
    }
    return out;
  }

  bool key_matches(std::string_view raw, std::size_t matched) const {
    const std::string& want = path_[matched].key;
    if (raw.find('\\') == std::string_view::npos) return raw == want;
    return decode_key(raw) == want;
  }

  bool object(std::size_t matched, std::size_t depth) {
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
      if (matched != off_path && key_matches(raw, matched)) child = matched + 1;
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

  bool array(std::size_t matched, std::size_t depth) {
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
      const std::string& seg = path_[matched].key;
      if (all_digits(seg) && seg.size() < 19) {
        want = 0;
        for (char c : seg) want = want * 10 + static_cast<std::size_t>(c - '0');
      }
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

  std::string_view s_;
  const path_segments& path_;
  std::size_t max_depth_;
  std::size_t i_ = 0;
  bool found_ = false;
  std::size_t match_begin_ = 0;
  std::size_t match_end_ = 0;
  std::string error_;
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

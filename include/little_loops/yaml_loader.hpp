// little_loops — YAML loader: YAML text/files → little_loops::json → loops, with file:line:column diagnostics
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::yaml, needs yaml-cpp); fsm.hpp never includes it.

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/paradigms.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/strings.hpp>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// A position in a source file; line and column are 1-based.
struct source_location {
  std::string file;
  int line = 0;
  int column = 0;

  friend bool operator==(const source_location&, const source_location&) = default;
};

/// Where each value of a loaded document came from: document path (the dotted form used
/// by diagnostics, e.g. `states.fix.evaluate.operator`, `scope[0]`) → line and column. For
/// a mapping member the position is its key's; for a list item and the root, the value's.
class yaml_source_map {
 public:
  /// The file name used in positions (as given to the loader).
  [[nodiscard]] const std::string& file_name() const noexcept { return file_; }
  void set_file_name(std::string name) { file_ = std::move(name); }

  /// Records the (1-based) position of `path`; the first record of a path is kept.
  void add(std::string path, int line, int column) {
    marks_.try_emplace(std::move(path), line, column);
  }

  /// The position of `path`, or of its nearest recorded ancestor (a diagnostic about a
  /// missing key points at the object that lacks it). nullopt when nothing is recorded.
  [[nodiscard]] std::optional<source_location> locate(std::string_view path) const {
    std::string key(path);
    for (;;) {
      if (const auto it = marks_.find(key); it != marks_.end())
        return source_location{file_, it->second.first, it->second.second};
      if (key.empty()) return std::nullopt;
      const auto cut = key.find_last_of(".[");
      key.resize(cut == std::string::npos ? 0 : cut);
    }
  }

  /// Number of recorded paths.
  [[nodiscard]] std::size_t size() const noexcept { return marks_.size(); }
  void clear() noexcept { marks_.clear(); }

 private:
  std::string file_;
  std::unordered_map<std::string, std::pair<int, int>> marks_;
};

/// Limits that keep hostile documents from exhausting the stack or memory.
struct yaml_limits {
  std::size_t max_depth = 256;        ///< nesting of mappings/sequences
  std::size_t max_nodes = 1'000'000;  ///< values after alias expansion ("billion laughs")
};

/// `file:line:col: error: path: message` (the position of `d.path` looked up in `map`);
/// without a position, `file: error: path: message`; without a map, to_string(d).
inline std::string format_diagnostic(const diagnostic& d, const yaml_source_map* map) {
  if (map == nullptr) return to_string(d);
  if (const auto at = map->locate(d.path))
    return fmt::format("{}:{}:{}: {}", at->file, at->line, at->column, to_string(d));
  if (map->file_name().empty()) return to_string(d);
  return fmt::format("{}: {}", map->file_name(), to_string(d));
}

/// Prefixes `e.message` with the position of the error (its path, else its first error
/// diagnostic's path) and sets `e.path` to the file name when it was empty. Diagnostics in
/// `e.details` are left unchanged (format each with format_diagnostic()).
inline error annotate_error(error e, const yaml_source_map& map) {
  std::optional<source_location> at;
  if (!e.path.empty()) at = map.locate(e.path);
  if (!at)
    for (const auto& d : e.details)
      if (d.level == severity::error) {
        at = map.locate(d.path);
        break;
      }
  if (at)
    e.message = fmt::format("{}:{}:{}: {}", at->file, at->line, at->column, e.message);
  else if (!map.file_name().empty())
    e.message = fmt::format("{}: {}", map.file_name(), e.message);
  return e;
}

namespace detail {

/// Thrown inside the YAML event handler to stop parsing (depth or size limit, complex key).
struct yaml_abort {};

inline constexpr std::string_view yaml_tag_prefix = "tag:yaml.org,2002:";

/// Removes `_` digit separators (YAML 1.1).
inline std::string strip_underscores(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text)
    if (c != '_') out += c;
  return out;
}

inline bool all_of_chars(std::string_view s, std::string_view allowed) {
  if (s.empty()) return false;
  for (char c : s)
    if (allowed.find(c) == std::string_view::npos) return false;
  return true;
}

/// `[1-9][0-9_]*(:[0-5]?[0-9])+` style base-60 parts after the first: each 1–2 digits < 60.
inline bool sexagesimal_tail(std::string_view rest) {
  // rest starts at the first ':'
  while (!rest.empty()) {
    if (rest.front() != ':') return false;
    rest.remove_prefix(1);
    std::size_t n = 0;
    while (n < rest.size() && n < 3 && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 0 || n > 2) return false;
    if (n == 2 && rest[0] > '5') return false;
    rest.remove_prefix(n);
  }
  return true;
}

/// A PyYAML (YAML 1.1) int: `[-+]?0b[01_]+`, `[-+]?0[0-7_]+`, `[-+]?(0|[1-9][0-9_]*)`,
/// `[-+]?0x[0-9a-fA-F_]+`, `[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`.
inline std::optional<json> yaml11_int(std::string_view text) {
  std::string_view body = text;
  bool negative = false;
  if (!body.empty() && (body.front() == '-' || body.front() == '+')) {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return std::nullopt;
  int base = 10;
  std::string digits;
  if (body.size() > 2 && body[0] == '0' && body[1] == 'b') {
    if (!all_of_chars(body.substr(2), "01_")) return std::nullopt;
    base = 2;
    digits = strip_underscores(body.substr(2));
  } else if (body.size() > 2 && body[0] == '0' && body[1] == 'x') {
    if (!all_of_chars(body.substr(2), "0123456789abcdefABCDEF_")) return std::nullopt;
    base = 16;
    digits = strip_underscores(body.substr(2));
  } else if (body.size() > 1 && body[0] == '0') {
    if (!all_of_chars(body.substr(1), "01234567_")) return std::nullopt;
    base = 8;
    digits = strip_underscores(body.substr(1));
    // (push_back, not `= "0"`: GCC 12 at -O3 reports a false -Wrestrict for the latter)
    if (digits.empty()) digits.push_back('0');
  } else if (body == "0") {
    digits.push_back('0');
  } else if (body[0] >= '1' && body[0] <= '9') {
    const auto colon = body.find(':');
    if (colon != std::string_view::npos) {
      // base 60: 1:30 == 90
      if (!all_of_chars(body.substr(0, colon), "0123456789_") || !sexagesimal_tail(body.substr(colon)))
        return std::nullopt;
      double value = 0;
      std::string clean = strip_underscores(body);
      std::size_t start = 0;
      while (start <= clean.size()) {
        const auto end = clean.find(':', start);
        const std::string part = clean.substr(start, end == std::string::npos ? end : end - start);
        value = value * 60 + std::stod(part);
        if (end == std::string::npos) break;
        start = end + 1;
      }
      if (value <= 9.0e15) {
        const auto whole = static_cast<std::int64_t>(value);
        return json(negative ? -whole : whole);
      }
      return json(negative ? -value : value);
    }
    if (!all_of_chars(body, "0123456789_")) return std::nullopt;
    digits = strip_underscores(body);
  } else {
    return std::nullopt;
  }
  if (digits.empty()) return std::nullopt;
  std::uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec == std::errc() && end == digits.data() + digits.size()) {
    if (!negative) {
      if (magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return json(static_cast<std::int64_t>(magnitude));
      return json(magnitude);
    }
    if (magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return json(-static_cast<std::int64_t>(magnitude));
    if (magnitude == static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1)
      return json(std::numeric_limits<std::int64_t>::min());
  }
  // Out of 64-bit range: keep the magnitude approximately (Python would keep it exactly).
  double value = 0;
  for (char c : digits) {
    const int digit = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
    value = value * base + digit;
  }
  return json(negative ? -value : value);
}

/// A PyYAML (YAML 1.1) float: `[-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?`,
/// `\.[0-9_]+([eE][-+][0-9]+)?`, base 60 with a fraction, `[-+]?\.inf`, `\.nan`
/// (note: an exponent needs a sign and a dot is required, as in PyYAML).
inline std::optional<json> yaml11_float(std::string_view text) {
  if (text == ".nan" || text == ".NaN" || text == ".NAN")
    return json(std::numeric_limits<double>::quiet_NaN());
  std::string_view body = text;
  bool negative = false;
  bool has_sign = false;
  if (!body.empty() && (body.front() == '-' || body.front() == '+')) {
    negative = body.front() == '-';
    has_sign = true;
    body.remove_prefix(1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF")
    return json(negative ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity());
  if (body.empty()) return std::nullopt;
  const auto dot = body.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view int_part = body.substr(0, dot);
  std::string_view rest = body.substr(dot + 1);
  std::string_view frac = rest;
  std::string_view exponent;
  if (const auto e = rest.find_first_of("eE"); e != std::string_view::npos) {
    frac = rest.substr(0, e);
    exponent = rest.substr(e + 1);
    if (exponent.size() < 2 || (exponent[0] != '-' && exponent[0] != '+') ||
        !all_of_chars(exponent.substr(1), "0123456789"))
      return std::nullopt;
  }
  if (!frac.empty() && !all_of_chars(frac, "0123456789_")) return std::nullopt;
  if (int_part.empty()) {
    // `\.[0-9_]+` — PyYAML allows no sign here.
    if (has_sign || frac.empty()) return std::nullopt;
  } else if (int_part.find(':') != std::string_view::npos) {
    const auto colon = int_part.find(':');
    if (!exponent.empty() || int_part[0] < '0' || int_part[0] > '9' ||
        !all_of_chars(int_part.substr(0, colon), "0123456789_") ||
        !sexagesimal_tail(int_part.substr(colon)))
      return std::nullopt;
    double value = 0;
    const std::string clean = strip_underscores(int_part);
    std::size_t start = 0;
    while (start <= clean.size()) {
      const auto end = clean.find(':', start);
      value = value * 60 + std::stod(clean.substr(start, end == std::string::npos ? end : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    const std::string fraction = "0." + strip_underscores(frac);
    double f = 0;
    std::from_chars(fraction.data(), fraction.data() + fraction.size(), f);
    value += f;
    return json(negative ? -value : value);
  } else if (int_part[0] < '0' || int_part[0] > '9' || !all_of_chars(int_part, "0123456789_")) {
    return std::nullopt;
  }
  std::string clean = strip_underscores(int_part);
  if (clean.empty()) clean.push_back('0');  // (not `= "0"`: a false -Wrestrict of GCC 12 at -O3)
  clean += '.';
  clean += strip_underscores(frac);
  if (clean.back() == '.') clean += '0';
  if (!exponent.empty()) {
    clean += 'e';
    clean += exponent;
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (ec == std::errc::result_out_of_range) {
    // Too large (infinity, as Python's float() gives) or too small (0.0): the decimal
    // exponent of the first significant digit says which.
    const std::string_view mantissa(clean.data(), clean.find_first_of("eE") == std::string::npos
                                                      ? clean.size()
                                                      : clean.find_first_of("eE"));
    const std::size_t point = mantissa.find('.');
    const std::size_t first = mantissa.find_first_of("123456789");
    long long magnitude = first == std::string_view::npos ? 0
                          : first < point ? static_cast<long long>(point - first)
                                          : -static_cast<long long>(first - point - 1);
    if (!exponent.empty()) {
      long long e = 0;
      for (char c : exponent.substr(1)) e = std::min(e * 10 + (c - '0'), 100000LL);
      magnitude += exponent[0] == '-' ? -e : e;
    }
    value = magnitude > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  } else if (ec != std::errc() || end != clean.data() + clean.size()) {
    return std::nullopt;
  }
  return json(negative ? -value : value);
}

/// PyYAML's bool words (YAML 1.1).
inline std::optional<bool> yaml11_bool(std::string_view text) {
  static constexpr std::string_view yes[] = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
  static constexpr std::string_view no[] = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
  for (auto w : yes)
    if (text == w) return true;
  for (auto w : no)
    if (text == w) return false;
  return std::nullopt;
}

inline bool yaml11_null(std::string_view text) {
  return text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL";
}

/// Resolves an untagged plain scalar the way PyYAML's safe_load does (bool, int, float,
/// null; everything else — timestamps included — stays a string).
inline json resolve_plain_scalar(const std::string& text) {
  if (yaml11_null(text)) return json(nullptr);
  if (auto b = yaml11_bool(text)) return json(*b);
  if (auto f = yaml11_float(text)) return *f;
  if (auto i = yaml11_int(text)) return *i;
  return json(text);
}

/// Builds a json value from yaml-cpp parser events without recursion, recording positions
/// and diagnostics.
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

class yaml_json_builder final : public YAML::EventHandler {
 public:
  yaml_json_builder(yaml_source_map* map, const yaml_limits& limits, bool utf8_source = false,
                    std::string_view source = {})
      : map_(map), limits_(limits), utf8_source_(utf8_source), source_(source) {}

  json root;
  bool have_root = false;
  diagnostics found;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    note_node(mark, anchor);
    // `[a, , b]`: yaml-cpp reads the empty entry as null; PyYAML (and YAML) refuse it.
    if (!frames_.empty() && !frames_.back().is_map && frames_.back().flow && mark.pos >= 0 &&
        static_cast<std::size_t>(mark.pos) < source_.size() &&
        source_[static_cast<std::size_t>(mark.pos)] == ',')
      fail(value_path(mark), mark, "parse-error", "expected the node content, but found ','");
    if (key_expected()) {
      begin_key("null", mark);
      return;
    }
    const std::string path = value_path(mark);
    complete(json(nullptr), anchor, path, mark);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    note_node(mark, 0);
    const auto it = anchors_.find(anchor);
    if (key_expected()) {
      if (it != anchors_.end() && !it->second.value.is_structured()) {
        begin_key(it->second.value.is_string() ? it->second.value.get<std::string>()
                                               : it->second.value.dump(),
                  mark);
        return;
      }
      fail(frames_.back().path, mark, "complex-key", "mapping keys must be scalars");
    }
    const std::string path = value_path(mark);
    if (it == anchors_.end()) {
      fail(path, mark, "yaml-alias", "unknown alias");
    }
    const std::size_t nodes = it->second.nodes;
    count_nodes(nodes, path, mark);
    attach(json(it->second.value), nodes);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    const std::size_t content = note_node(mark, anchor);
    if (content < source_.size()) {
      const char first = source_[content];
      std::size_t end = std::string_view::npos;  // just past the scalar's text, when known
      if (first == '"' || first == '\'') {
        end = quoted_scalar_end(source_, content);
        if (end == std::string_view::npos)
          fail(key_expected() ? frames_.back().path : value_path(mark), mark, "parse-error",
               "while scanning a quoted scalar: found unexpected end of stream");
        verbatim_.emplace_back(content, end);
      } else if (tag == "?" && source_.compare(content, text.size(), text) == 0) {
        end = content + text.size();  // a plain scalar on one line, as every simple key is
      }
      if (end != std::string_view::npos && key_expected() && !frames_.back().flow &&
          !simple_key_closed(end) && !explicit_key(content))
        fail(frames_.back().path, mark, "parse-error",
             "while scanning a simple key: could not find expected ':'");
      if (first == '|' || first == '>') {
        // The content starts after the header line (`|-2 # comment`, read as any other
        // line) and ends where the next node's line starts.
        const std::size_t eol = source_.find('\n', content);
        block_start_ = eol == std::string_view::npos ? source_.size() : eol;
      }
    }
    if (tag == "?" && text == "=" && !key_expected())  // PyYAML resolves it to !!value, which
                                                        // safe_load cannot build (a key stays "=")
      diag(value_path(mark), mark, "yaml-tag",
           "could not determine a constructor for the tag 'tag:yaml.org,2002:value' (a plain = "
           "is YAML's value indicator: quote it, '=')");
    std::string value = text;
    if (utf8_source_) reencode_yaml_escapes(value);
    if (key_expected()) {
      if (anchor != 0) anchors_[anchor] = anchored{json(value), 1};  // `&k a: 1`, then `*k`
      begin_key(std::move(value), mark, tag == "?");
      frames_.back().key_explicit = content < source_.size() && explicit_key(content);
      return;
    }
    // A scalar value of a block mapping on a later line is indented more than its key
    // (yaml-cpp took `a:\n"b"` as a: b; PyYAML reads the "b" as a key without ':').
    if (!frames_.empty() && frames_.back().is_map && !frames_.back().flow &&
        !frames_.back().key_explicit && mark.line > frames_.back().key_mark.line &&
        mark.column <= frames_.back().key_mark.column)
      fail(frames_.back().path, mark, "parse-error",
           "while scanning a simple key: could not find expected ':'");
    const std::string path = value_path(mark);
    complete(scalar_value(tag, value, path, mark), anchor, path, mark);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, false, "seq", style == YAML::EmitterStyle::Flow);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, true, "map", style == YAML::EmitterStyle::Flow);
  }
  void OnMapEnd() override { close(); }

  /// The [begin, end) offsets of the quoted and block scalars of the source, in document
  /// order (see find_stray_tab); call once the document has been parsed.
  const std::vector<std::pair<std::size_t, std::size_t>>& verbatim_ranges() {
    if (block_start_ != std::string_view::npos) {
      verbatim_.emplace_back(block_start_, source_.size());
      block_start_ = std::string_view::npos;
    }
    return verbatim_;
  }

 private:
  struct frame {
    json value;
    bool is_map = false;
    bool flow = false;  // written `[...]` / `{...}`
    bool has_key = false;
    bool key_is_merge = false;
    bool key_is_duplicate = false;  // the current key appeared before (diagnosed; first value kept)
    YAML::Mark key_mark;            // where the current key starts
    bool key_explicit = false;      // written `? key` (its value may follow on a `:` line)
    std::string key;
    std::string path;
    YAML::anchor_t anchor = 0;
    std::size_t nodes = 1;
    std::unordered_set<std::string> keys;
    std::vector<json> merges;  // `<<` sources, in document order
  };
  struct anchored {
    json value;
    std::size_t nodes = 1;
  };

  yaml_source_map* map_;
  yaml_limits limits_;
  bool utf8_source_ = false;  // the source is well-formed UTF-8 (see reencode_yaml_escapes)
  std::string_view source_;   // the text, when its byte offsets are yaml-cpp's positions
  std::vector<frame> frames_;
  std::unordered_map<YAML::anchor_t, anchored> anchors_;
  // Anchor names as written → where first defined (yaml-cpp numbers every definition anew,
  // so a name defined twice is found in the source text).
  std::unordered_map<std::string_view, YAML::Mark> anchor_names_;
  std::vector<std::pair<std::size_t, std::size_t>> verbatim_;  // see verbatim_ranges()
  std::size_t block_start_ = std::string_view::npos;  // a block scalar whose end is not known yet
  struct {
    std::size_t pos = 0;         // read up to here
    std::size_t line_start = 0;  // the start of the line holding `pos`
    bool indicator = false;      // a `?` followed by a blank in [line_start, pos)
  } key_scan_;                   // explicit_key()
  std::size_t total_nodes_ = 0;

  static int one_based(int v) { return v < 0 ? 0 : v + 1; }

  // A block mapping's key without `?` is a simple key: `:` follows it on its line (PyYAML:
  // "could not find expected ':'"; yaml-cpp read `a:\nb` as the keys a and b, b null).
  bool simple_key_closed(std::size_t end) const {
    while (end < source_.size() && (source_[end] == ' ' || source_[end] == '\t')) ++end;
    return end < source_.size() && source_[end] == ':';
  }
  // Whether the key starting at `content` follows a `?` indicator on its line (properties
  // such as `? &a !t key` included).
  // Whether the line holding `content` has a `?` indicator before it: a `?` followed by a
  // blank, or just before `content`. Keys come in document order, so the line is read
  // forward once, from where the last call stopped (a one-line flow mapping with n keys
  // costs O(n), not O(n²)); a position before that is read backwards.
  bool explicit_key(std::size_t content) {
    if (content < key_scan_.pos) {
      std::size_t i = content;
      while (i > 0 && source_[i - 1] != '\n') {
        --i;
        if (source_[i] == '?' && (i + 1 == content || source_[i + 1] == ' ' || source_[i + 1] == '\t'))
          return true;
      }
      return false;
    }
    for (; key_scan_.pos < content; ++key_scan_.pos) {
      const char c = source_[key_scan_.pos];
      if (c == '\n') {
        key_scan_.line_start = key_scan_.pos + 1;
        key_scan_.indicator = false;
      } else if (c == '?' && key_scan_.pos + 1 < content &&
                 (source_[key_scan_.pos + 1] == ' ' || source_[key_scan_.pos + 1] == '\t')) {
        key_scan_.indicator = true;
      }
    }
    return key_scan_.indicator || (content > key_scan_.line_start && source_[content - 1] == '?');
  }

  // Every event that has a position comes here first: ends a pending block scalar (at the
  // start of this node's line), refuses an anchor name defined before (PyYAML's "found
  // duplicate anchor"). Returns the offset where the node's content starts (after its
  // properties), or npos without a source text.
  std::size_t note_node(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= source_.size())
      return std::string_view::npos;
    const auto pos = static_cast<std::size_t>(mark.pos);
    if (block_start_ != std::string_view::npos) {
      const std::size_t line_start = source_.rfind('\n', pos);
      verbatim_.emplace_back(block_start_, line_start == std::string_view::npos ? pos : line_start + 1);
      block_start_ = std::string_view::npos;
    }
    std::string_view name;
    const std::size_t content = skip_node_properties(source_, pos, &name);
    if (anchor != 0 && !name.empty()) {
      const auto [it, fresh] = anchor_names_.try_emplace(name, mark);
      if (!fresh)
        diag(frames_.empty() ? std::string() : frames_.back().path, mark, "yaml-anchor",
             fmt::format("found duplicate anchor '{}': it is defined first at line {}, column {} and again",
                         name, one_based(it->second.line), one_based(it->second.column)));
    }
    return content;
  }

  void record(const std::string& path, const YAML::Mark& mark) {
    if (map_ != nullptr) map_->add(path, one_based(mark.line), one_based(mark.column));
  }

  void diag(std::string path, const YAML::Mark& mark, std::string code, std::string message) {
    message += fmt::format(" (line {}, column {})", one_based(mark.line), one_based(mark.column));
    found.push_back(diagnostic{severity::error, std::move(path), std::move(message), std::move(code)});
  }

  [[noreturn]] void fail(std::string path, const YAML::Mark& mark, std::string code,
                         std::string message) {
    diag(std::move(path), mark, std::move(code), std::move(message));
    throw yaml_abort{};
  }

  bool key_expected() const { return !frames_.empty() && frames_.back().is_map && !frames_.back().has_key; }

  void begin_key(std::string text, const YAML::Mark& mark, bool plain = false) {
    frame& top = frames_.back();
    top.has_key = true;
    top.key_mark = mark;
    top.key_explicit = false;
    top.key_is_merge = plain && text == "<<";
    if (top.key_is_merge) return;
    const std::string path = member_path(top.path, text);
    top.key_is_duplicate = !top.keys.insert(text).second;
    if (top.key_is_duplicate)
      diag(path, mark, "duplicate-key",
           "duplicate key " + quote_excerpt(text) + ": a key may appear only once in a mapping");
    else
      record(path, mark);
    top.key = std::move(text);
  }

  // The path of the value that starts now; records positions of list items and the root.
  std::string value_path(const YAML::Mark& mark) {
    if (frames_.empty()) {
      record("", mark);
      return {};
    }
    frame& top = frames_.back();
    if (top.is_map) return top.key_is_merge ? top.path : member_path(top.path, top.key);
    std::string path = index_path(top.path, top.value.size());
    record(path, mark);
    return path;
  }

  void count_nodes(std::size_t n, const std::string& path, const YAML::Mark& mark) {
    total_nodes_ += n;
    if (total_nodes_ > limits_.max_nodes)
      fail(path, mark, "yaml-too-large",
           fmt::format("document has more than {} values (after alias expansion)", limits_.max_nodes));
  }

  json scalar_value(const std::string& tag, const std::string& text, const std::string& path,
                    const YAML::Mark& mark) {
    if (tag == "?") return resolve_plain_scalar(text);
    if (tag == "!" || tag.empty()) return json(text);
    std::string_view name = tag;
    if (name.substr(0, yaml_tag_prefix.size()) == yaml_tag_prefix) {
      name.remove_prefix(yaml_tag_prefix.size());
      if (name == "str") return json(text);
      if (name == "null") {
        if (yaml11_null(text)) return json(nullptr);
      } else if (name == "bool") {
        if (auto b = yaml11_bool(text)) return json(*b);
      } else if (name == "int") {
        if (auto i = yaml11_int(text)) return *i;
      } else if (name == "float") {
        if (auto f = yaml11_float(text)) return *f;
        if (auto i = yaml11_int(text)) return json(i->get<double>());
      } else {
        diag(path, mark, "yaml-tag", "unsupported tag !!" + std::string(name));
        return json(text);
      }
      diag(path, mark, "yaml-tag",
           fmt::format("{} is not a valid !!{}", quote_excerpt(text), name));
      return json(text);
    }
    diag(path, mark, "yaml-tag", "unsupported tag " + quote_excerpt(tag));
    return json(text);
  }

  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, bool is_map,
            std::string_view kind, bool flow) {
    note_node(mark, anchor);
    if (key_expected())
      fail(frames_.back().path, mark, "complex-key", "mapping keys must be scalars");
    std::string path = value_path(mark);
    if (frames_.size() >= limits_.max_depth)
      fail(path, mark, "too-deep", fmt::format("nesting deeper than {} levels", limits_.max_depth));
    count_nodes(1, path, mark);
    if (!(tag == "?" || tag == "!" || tag.empty() ||
          tag == std::string(yaml_tag_prefix) + std::string(kind)))
      diag(path, mark, "yaml-tag", "unsupported tag " + quote_excerpt(tag));
    frame f;
    f.value = is_map ? json::object() : json::array();
    f.is_map = is_map;
    f.flow = flow;
    f.path = std::move(path);
    f.anchor = anchor;
    frames_.push_back(std::move(f));
  }

  void close() {
    frame f = std::move(frames_.back());
    frames_.pop_back();
    if (f.is_map && !f.merges.empty()) {
      // PyYAML semantics: explicit keys win over merged ones; among `<<` sources the
      // earlier wins; a key keeps the position of its first appearance.
      json merged = json::object();
      for (auto it = f.merges.rbegin(); it != f.merges.rend(); ++it)
        for (auto& [k, v] : it->items()) merged[k] = v;
      for (auto& [k, v] : f.value.items()) merged[k] = std::move(v);
      f.value = std::move(merged);
    }
    complete_frame(std::move(f));
  }

  void complete_frame(frame&& f) {
    if (f.anchor != 0) anchors_[f.anchor] = anchored{f.value, f.nodes};
    attach(std::move(f.value), f.nodes);
  }

  // A scalar value is complete.
  void complete(json value, YAML::anchor_t anchor, const std::string& path, const YAML::Mark& mark) {
    count_nodes(1, path, mark);
    if (anchor != 0) anchors_[anchor] = anchored{value, 1};
    attach(std::move(value), 1);
  }

  void attach(json value, std::size_t nodes) {
    if (frames_.empty()) {
      root = std::move(value);
      have_root = true;
      return;
    }
    frame& top = frames_.back();
    top.nodes += nodes;
    if (!top.is_map) {
      top.value.push_back(std::move(value));
      return;
    }
    top.has_key = false;
    if (top.key_is_merge) {
      top.key_is_merge = false;
      if (value.is_object()) {
        top.merges.push_back(std::move(value));
      } else if (value.is_array() && !value.empty()) {
        bool all_maps = true;
        for (const auto& v : value) all_maps = all_maps && v.is_object();
        if (all_maps) {
          for (auto& v : value) top.merges.push_back(std::move(v));
        } else {
          found.push_back(diagnostic{severity::error, top.path,
                                     "expected a mapping or list of mappings for merging (<<)",
                                     "yaml-merge"});
        }
      } else {
        found.push_back(diagnostic{severity::error, top.path,
                                   "expected a mapping or list of mappings for merging (<<)",
                                   "yaml-merge"});
      }
      return;
    }
    // Keys are unique here (top.keys): appended without a search (a mapping of n keys is
    // O(n)); merged keys come in at close().
    if (!top.key_is_duplicate) detail::append_new_key(top.value.get_ref<json::object_t&>(), top.key, std::move(value));
  }
};

inline error yaml_error(std::string message, std::string_view file_name, diagnostics found = {}) {
  if (found.empty()) found.push_back(diagnostic{severity::error, "", message, "parse-error"});
  return error{errc::parse_error, std::move(message), std::string(file_name), std::move(found)};
}

}  // namespace detail

/// Converts YAML text (one document) to JSON the way PyYAML's safe_load reads it: key order
/// kept; plain scalars resolved by YAML 1.1 rules (`true/false/yes/no/on/off` → bool, ints
/// incl. `0x`, `0o`-style `017`, `0b`, `_` separators and base 60, floats with a dot,
/// `~`/`null`/empty → null; timestamps stay strings); quoted and block scalars are strings;
/// anchors/aliases expanded; `<<` merge keys applied. Mapping keys are always their source
/// text (`yes:` is the key "yes"). Duplicate keys, non-scalar keys, tags other than the
/// standard `!!str/!!int/!!float/!!bool/!!null/!!map/!!seq`, several documents, and nesting
/// or size beyond `limits` are errc::parse_error with one diagnostic each (path, code,
/// "(line L, column C)" in the message). Syntax errors give `file:line:col: message`.
/// Never throws. An empty document is `null`. Positions go to `*map` when given.
inline expected<json, error> yaml_to_json(std::string_view text, std::string_view file_name = "<yaml>",
                                          yaml_source_map* map = nullptr,
                                          const yaml_limits& limits = {}) {
  if (map != nullptr) {
    map->clear();
    map->set_file_name(std::string(file_name));
  }
  const bool utf8 = detail::is_valid_utf8(text);
  if (utf8) {
    if (const auto bad = detail::find_unacceptable_char(text)) {
      const auto [line, column] = detail::line_and_column(text, bad->offset);
      std::string message = fmt::format(
          "{}:{}:{}: unacceptable character #x{:04x}: special characters are not allowed",
          file_name, line, column, static_cast<std::uint32_t>(bad->code));
      return unexpected(detail::yaml_error(std::move(message), file_name));
    }
  }
  // yaml-cpp's positions are byte offsets of the text unless it starts with a byte order mark.
  const bool bom = text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0;
  detail::yaml_json_builder builder(map, limits, utf8, utf8 && !bom ? text : std::string_view{});
  try {
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    if (parser.HandleNextDocument(builder)) {
      detail::yaml_json_builder extra(nullptr, limits);
      if (parser.HandleNextDocument(extra)) {
        std::string message = fmt::format("{}: expected a single document in the stream, found more",
                                          file_name);
        return unexpected(detail::yaml_error(std::move(message), file_name));
      }
    }
  } catch (const detail::yaml_abort&) {
    // diagnostics recorded by the builder
  } catch (const YAML::Exception& e) {
    std::string message = fmt::format("{}:{}:{}: {}", file_name, e.mark.line + 1, e.mark.column + 1,
                                      e.msg.empty() ? std::string("invalid YAML") : e.msg);
    return unexpected(detail::yaml_error(std::move(message), file_name));
  } catch (const std::exception& e) {
    return unexpected(detail::yaml_error(fmt::format("{}: {}", file_name, e.what()), file_name));
  }
  if (!builder.found.empty()) {
    const auto& first = builder.found.front();
    std::string message = fmt::format("{}: invalid YAML: {}{}{}", file_name, first.path,
                                      first.path.empty() ? "" : ": ", first.message);
    return unexpected(error{errc::parse_error, std::move(message), std::string(file_name),
                            std::move(builder.found)});
  }
  if (utf8 && !bom) {
    if (const auto tab = detail::find_stray_tab(text, builder.verbatim_ranges())) {
      const auto [line, column] = detail::line_and_column(text, *tab);
      std::string message = fmt::format(
          "{}:{}:{}: found a tab character that cannot start any token (YAML takes tabs only "
          "inside quoted or block scalars and comments: indent and separate with spaces)",
          file_name, line, column);
      return unexpected(detail::yaml_error(std::move(message), file_name));
    }
  }
  if (!builder.have_root) return json(nullptr);
  return std::move(builder.root);
}

/// How a document file is read: by extension `.yaml`/`.yml` → YAML, `.json` → JSON; any
/// other extension is JSON when its first non-blank character is `{`, else YAML.
enum class document_format { yaml, json };

/// Guesses the format of `path` (see document_format).
inline document_format detect_document_format(const std::filesystem::path& path, std::string_view text) {
  const std::string ext = path.extension().string();
  if (ext == ".yaml" || ext == ".yml" || ext == ".YAML" || ext == ".YML") return document_format::yaml;
  if (ext == ".json" || ext == ".JSON") return document_format::json;
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{' ? document_format::json
                                                               : document_format::yaml;
}

/// The largest document file read_text_file() reads: far above any loop (a 2,000-state loop
/// is about 100 KB), far below what would exhaust memory while parsing.
inline constexpr std::uintmax_t max_document_file_bytes = std::uintmax_t{64} << 20;

/// Reads a whole regular file. errc::io_error (path = the file) when it does not exist, is
/// not a regular file (a directory; a FIFO or device, whose reading may block or never
/// end), is larger than max_document_file_bytes, or cannot be read.
inline expected<std::string, error> read_text_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return unexpected(error{errc::io_error,
                            "cannot open file: " + (ec ? ec.message() : std::string("no such file")),
                            path.string()});
  }
  if (fs::is_directory(st)) return unexpected(error{errc::io_error, "is a directory", path.string()});
  if (!fs::is_regular_file(st))
    return unexpected(error{errc::io_error, "not a regular file", path.string()});
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_document_file_bytes)
    return unexpected(error{errc::io_error,
                            fmt::format("file is larger than {} MiB ({} bytes)",
                                        max_document_file_bytes >> 20, size),
                            path.string()});
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(error{errc::io_error, "cannot open file", path.string()});
  // The size stat() gave, then 4 KiB reads to the end (procfs reports 0; a file may grow
  // meanwhile), stopping as soon as the limit is passed.
  std::string text(ec ? std::size_t{0} : static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return unexpected(error{errc::io_error, "cannot read file", path.string()});
  text.resize(static_cast<std::size_t>(in.gcount()));
  char more[4096];
  while (in && text.size() <= max_document_file_bytes) {
    in.read(more, sizeof more);
    text.append(more, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return unexpected(error{errc::io_error, "cannot read file", path.string()});
  if (text.size() > max_document_file_bytes)
    return unexpected(error{errc::io_error,
                            fmt::format("file is larger than {} MiB", max_document_file_bytes >> 20),
                            path.string()});
  return text;
}

/// Parses document text in `format`. JSON goes through the strict JSON reader
/// (parse_json_text); positions for its paths are still recorded in `*map` (JSON is YAML).
inline expected<json, error> parse_document_text(std::string_view text, document_format format,
                                                 std::string_view file_name,
                                                 yaml_source_map* map = nullptr) {
  if (format == document_format::yaml) return yaml_to_json(text, file_name, map);
  auto doc = parse_json_text(text);
  if (map != nullptr) {
    // Positions only; a JSON text YAML cannot read simply has none.
    if (!yaml_to_json(text, file_name, map)) {
      map->clear();
      map->set_file_name(std::string(file_name));
    }
  }
  if (!doc) {
    error e = std::move(doc.error());
    e.message = fmt::format("{}: {}", file_name, e.message);
    if (e.path.empty()) e.path = std::string(file_name);
    return unexpected(std::move(e));
  }
  return doc;
}

/// Reads a YAML or JSON document file (see detect_document_format).
inline expected<json, error> load_document_file(const std::filesystem::path& path,
                                                yaml_source_map* map = nullptr) {
  auto text = read_text_file(path);
  if (!text) return unexpected(std::move(text.error()));
  return parse_document_text(*text, detect_document_format(path, *text), path.string(), map);
}

/// YAML text → loop: yaml_to_json, then compile_paradigm() (a `paradigm:` spec is
/// compiled; a plain loop is parsed strictly and validated). Errors carry the diagnostics
/// of the JSON path unchanged in error::details; error::message starts with
/// `file:line:col:` of the first error. Validation warnings go to `*warnings`.
inline expected<fsm_loop, error> load_loop_yaml(std::string_view text,
                                                std::string_view file_name = "<yaml>",
                                                diagnostics* warnings = nullptr,
                                                yaml_source_map* map = nullptr) {
  yaml_source_map local;
  yaml_source_map& positions = map != nullptr ? *map : local;
  auto doc = yaml_to_json(text, file_name, &positions);
  if (!doc) return unexpected(std::move(doc.error()));
  auto loop = compile_paradigm(*doc, warnings);
  if (!loop) return unexpected(annotate_error(std::move(loop.error()), positions));
  return loop;
}

/// Loads a loop or paradigm spec from a `.yaml`, `.yml` or `.json` file (see
/// load_loop_yaml; JSON files get positions too). `*map` receives the positions so callers
/// can print every diagnostic with format_diagnostic().
inline expected<fsm_loop, error> load_loop_file(const std::filesystem::path& path,
                                                diagnostics* warnings = nullptr,
                                                yaml_source_map* map = nullptr) {
  yaml_source_map local;
  yaml_source_map& positions = map != nullptr ? *map : local;
  auto doc = load_document_file(path, &positions);
  if (!doc) return unexpected(std::move(doc.error()));
  auto loop = compile_paradigm(*doc, warnings);
  if (!loop) return unexpected(annotate_error(std::move(loop.error()), positions));
  return loop;
}

LITTLE_LOOPS_NAMESPACE_END

// little_loops — the JSON document parser: syntax errors with positions, duplicate keys, depth
// SPDX-License-Identifier: MIT
#pragma once

// Part of schema.hpp (included there after max_document_depth): parse_json_text and
// parse_loop_text read text through scan_json_text.

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// The value types nlohmann's SAX interface names, for the two consumers below.
struct json_sax_types {
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;
};

/// SAX consumer that builds nothing: it records where a syntax error is and which object
/// keys repeat (JSON keeps only the last of duplicate keys, which would silently drop data).
/// Memory is linear in the nesting depth: paths are only built when a duplicate is found.
class document_scanner : public json_sax_types {
 public:
  diagnostics duplicates;
  std::optional<std::string> syntax_error;
  std::optional<std::string> too_deep_path;  ///< where max_document_depth was exceeded
  std::size_t error_byte = 0;

  bool null() { return element(); }
  bool boolean(bool) { return element(); }
  bool number_integer(number_integer_t) { return element(); }
  bool number_unsigned(number_unsigned_t) { return element(); }
  bool number_float(number_float_t, const string_t&) { return element(); }
  bool string(string_t&) { return element(); }
  bool binary(binary_t&) { return element(); }
  bool start_object(std::size_t) {
    element();
    if (frames_.size() >= max_document_depth) return refuse_depth();
    frames_.push_back(frame{true, 0, {}, {}});
    return true;
  }
  bool key(string_t& name) {
    frame& top = frames_.back();
    top.key = name;
    if (!top.keys.insert(name).second)
      report(duplicates, current_path(), "duplicate-key",
             "duplicate key " + quote_excerpt(name) +
                 ": JSON keeps only the last value; remove the other occurrence");
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    element();
    if (frames_.size() >= max_document_depth) return refuse_depth();
    frames_.push_back(frame{false, 0, {}, {}});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string&, const Exception& ex) {
    error_byte = position;
    syntax_error = sanitize_utf8(ex.what());  // "last read: '…'" quotes raw input bytes
    return false;
  }

 private:
  struct frame {
    bool is_object;
    std::size_t next_index;           // arrays: elements seen so far
    std::string key;                  // objects: the member being read
    std::unordered_set<std::string> keys;
  };
  std::vector<frame> frames_;

  bool refuse_depth() {
    too_deep_path = current_path();
    return false;  // stops the parse
  }
  // Called for every value: in an array, advances the element index.
  bool element() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().next_index;
    return true;
  }
  // The dotted path of the member or element being read.
  std::string current_path() const {
    std::string path;
    for (const auto& f : frames_) {
      if (f.is_object)
        path = member_path(path, f.key);
      else
        path = index_path(path, f.next_index - 1);
    }
    return path;
  }
};

/// Where the bracket opening nesting level `level` (1-based) is in `text`, as "line L,
/// column C (byte B)" (1-based, as nlohmann reports syntax errors). The text before it must
/// be valid JSON (the scanner stopped there).
inline std::string json_level_location(std::string_view text, std::size_t level) {
  std::size_t depth = 0, at = text.size();
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size() && at == text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth == level) at = i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  const std::string_view before = text.substr(0, at);
  const auto line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const auto line_start = before.rfind('\n');
  const std::size_t column = line_start == std::string_view::npos ? at + 1 : at - line_start;
  return fmt::format("line {}, column {} (byte {})", line, column, at + 1);
}

/// SAX consumer that builds the document of a text document_scanner has accepted. Keys are
/// appended without a search: nlohmann's own parser looks each key up in the ordered object
/// it builds, O(n²) for an object of n keys (a 40,000-key route table took 1.7 s). When the
/// text has repeated keys (`may_repeat`), a repeated key keeps its first place and its last
/// value, as json::parse does.
class document_builder : public json_sax_types {
 public:
  explicit document_builder(bool may_repeat) : may_repeat_(may_repeat) {}

  json root;

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(number_integer_t v) { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) { return put(json(v)); }
  bool string(string_t& v) { return put(json(std::move(v))); }
  bool binary(binary_t& v) { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) {
    open_.push_back(place(json::object()));
    return true;
  }
  bool key(string_t& name) {
    key_ = std::move(name);
    return true;
  }
  bool end_object() {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    open_.push_back(place(json::array()));
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) {
    return false;
  }

 private:
  bool put(json&& value) {
    place(std::move(value));
    return true;
  }
  // Stores `value` in the innermost open container (or as the root) and returns where it is:
  // values are only ever added to the innermost container, so the outer ones do not move.
  json* place(json&& value) {
    if (open_.empty()) {
      root = std::move(value);
      return &root;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      auto& items = parent.get_ref<json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    auto& members = parent.get_ref<json::object_t&>();
    if (may_repeat_) {
      if (const auto it = members.find(key_); it != members.end()) {
        it->second = std::move(value);
        return &it->second;
      }
    }
    append_new_key(members, std::move(key_), std::move(value));
    return &members.back().second;
  }

  bool may_repeat_;
  std::vector<json*> open_;
  string_t key_;
};

/// Parses `text`; syntax errors are returned as errc::parse_error, duplicate keys are
/// appended to `duplicates` (the document keeps the last value of each).
LITTLE_LOOPS_INLINE expected<json, error> scan_json_text(std::string_view text, diagnostics& duplicates) {
  document_scanner scanner;
  const bool ok = sax_parse_json(text, scanner);
  if (scanner.too_deep_path) {
    std::string message =
        fmt::format("JSON nested deeper than {} levels at {}", max_document_depth,
                    json_level_location(text, max_document_depth + 1));
    diagnostics found{diagnostic{severity::error, *scanner.too_deep_path, message, "too-deep"}};
    return unexpected(error{errc::parse_error, std::move(message), *scanner.too_deep_path,
                            std::move(found)});
  }
  if (!ok || scanner.syntax_error) {
    std::string message = "invalid JSON";
    if (scanner.syntax_error) {
      // nlohmann's message: "[json.exception.parse_error.101] parse error at line L,
      // column C: <what>"; keep "line L, column C" and "<what>", add the byte offset.
      const std::string& what = *scanner.syntax_error;
      const auto at = what.find("at line ");
      const auto colon = at == std::string::npos ? at : what.find(": ", at);
      if (at != std::string::npos && colon != std::string::npos) {
        message = fmt::format("invalid JSON at {} (byte {}): {}", what.substr(at + 3, colon - at - 3),
                              scanner.error_byte, what.substr(colon + 2));
      } else {
        message = fmt::format("invalid JSON at byte {}: {}", scanner.error_byte, what);
      }
    }
    diagnostics found{diagnostic{severity::error, "", message, "parse-error"}};
    return unexpected(error{errc::parse_error, std::move(message), {}, std::move(found)});
  }
  document_builder builder(!scanner.duplicates.empty());
  if (!sax_parse_json(text, builder))
    return unexpected(error{errc::parse_error, "invalid JSON", {},
                            diagnostics{diagnostic{severity::error, "", "invalid JSON",
                                                   "parse-error"}}});
  for (auto& d : scanner.duplicates) duplicates.push_back(std::move(d));
  // Explicit move: a copy of a deeply nested document would recurse once per level.
  return expected<json, error>(std::move(builder.root));
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

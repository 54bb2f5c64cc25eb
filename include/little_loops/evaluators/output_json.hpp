// little_loops — output_json evaluator: extract a jq-style path from JSON output and compare
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/json_path.hpp>
#include <little_loops/detail/json_scan.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/evaluators/output_numeric.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// A value selected from an output document: the library's insertion-ordered json, so objects
// keep the output's key order in details (as Python's dicts do). json_value_builder appends
// members, finding a repeated key by hash in big objects, so building stays linear.
using output_document = json;

// Python's idea of "a number": int, float and bool (bool is an int subclass).
template <class Json>
inline bool py_numeric(const Json& v) noexcept {
  return v.is_number() || v.is_boolean();
}

// A Python-numeric JSON value as the C++ type that holds it exactly.
struct py_number {
  enum class kind { signed_int, unsigned_int, floating } type = kind::signed_int;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
};

template <class Json>
inline py_number as_py_number(const Json& v) {
  py_number n;
  if (v.is_boolean()) {
    n.i = v.template get<bool>() ? 1 : 0;
  } else if (v.is_number_unsigned()) {
    n.type = py_number::kind::unsigned_int;
    n.u = v.template get<std::uint64_t>();
  } else if (v.is_number_integer()) {
    n.i = v.template get<std::int64_t>();
  } else {
    n.type = py_number::kind::floating;
    n.f = v.template get<double>();
  }
  return n;
}

// Three-way comparison of two numbers as Python compares int and float: exactly, without
// rounding integers to doubles. -1, 0, 1, or 2 when unordered (NaN).
inline int py_number_cmp(const py_number& a, const py_number& b) noexcept {
  using k = py_number::kind;
  const auto three_way = [](auto x, auto y) { return x < y ? -1 : x > y ? 1 : 0; };
  const auto flip = [](int c) { return c == 2 ? 2 : -c; };
  if (a.type == k::floating && b.type == k::floating) {
    if (a.f < b.f) return -1;
    if (a.f > b.f) return 1;
    return a.f == b.f ? 0 : 2;
  }
  if (a.type == k::floating)
    return flip(b.type == k::unsigned_int ? compare_int_double(b.u, a.f)
                                          : compare_int_double(b.i, a.f));
  if (b.type == k::floating)
    return a.type == k::unsigned_int ? compare_int_double(a.u, b.f)
                                     : compare_int_double(a.i, b.f);
  if (a.type == k::signed_int && b.type == k::signed_int) return three_way(a.i, b.i);
  if (a.type == k::unsigned_int && b.type == k::unsigned_int) return three_way(a.u, b.u);
  if (a.type == k::unsigned_int)
    return b.i < 0 ? 1 : three_way(a.u, static_cast<std::uint64_t>(b.i));
  return a.i < 0 ? -1 : three_way(static_cast<std::uint64_t>(a.i), b.u);
}

// Three-way comparison of two Python-numeric JSON values (see py_number_cmp).
template <class A, class B>
inline int py_numeric_cmp(const A& a, const B& b) {
  return py_number_cmp(as_py_number(a), as_py_number(b));
}

// Python `==` between two JSON values of possibly different JSON types (1 == 1.0 == True,
// dicts compare regardless of key order).
template <class A, class B>
inline bool py_equal(const A& a, const B& b) {
  if (py_numeric(a) && py_numeric(b)) return py_numeric_cmp(a, b) == 0;
  if (a.is_string() && b.is_string())
    return a.template get_ref<const std::string&>() == b.template get_ref<const std::string&>();
  if (a.is_null() && b.is_null()) return true;
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!py_equal(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto jt = b.find(it.key());
      if (jt == b.end() || !py_equal(it.value(), *jt)) return false;
    }
    return true;
  }
  return false;
}

LITTLE_LOOPS_INLINE std::string shown_string(const std::string& s);
LITTLE_LOOPS_INLINE json to_library_json(const output_document& v);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// A decoded output string as shown in details: a lone surrogate (see decode_json_string)
// becomes U+FFFD. Strings are otherwise valid UTF-8 (json_value_builder checks).
LITTLE_LOOPS_INLINE std::string shown_string(const std::string& s) {
  if (s.find('\xED') == std::string::npos || is_valid_utf8(s)) return s;
  return replace_lone_surrogates(s);
}

// Converts a parsed output value to the library json type (for details). Object members
// are appended directly (keys are already unique), keeping the conversion linear.
LITTLE_LOOPS_INLINE json to_library_json(const output_document& v) {
  switch (v.type()) {
    case json::value_t::object: {
      json out = json::object();
      auto& members = out.get_ref<json::object_t&>();
      members.reserve(v.size());
      for (auto it = v.begin(); it != v.end(); ++it)
        static_cast<json::object_t::Container&>(members).emplace_back(
            shown_string(it.key()), to_library_json(*it));
      return out;
    }
    case json::value_t::array: {
      json out = json::array();
      auto& items = out.get_ref<json::array_t&>();
      items.reserve(v.size());
      for (const auto& item : v) items.push_back(to_library_json(item));
      return out;
    }
    case json::value_t::string:
      return json(shown_string(v.get_ref<const std::string&>()));
    case json::value_t::boolean: return json(v.get<bool>());
    case json::value_t::number_integer: return json(v.get<std::int64_t>());
    case json::value_t::number_unsigned: return json(v.get<std::uint64_t>());
    case json::value_t::number_float: return json(v.get<double>());
    default: return json(nullptr);
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// Maximum nesting depth of an output document (Python's json module stops near 1000 too).
inline constexpr std::size_t max_output_depth = 1000;

// Builds the value of a span json_path_scanner has validated, so the grammar is trusted and
// not checked again, with Python json.loads semantics: integers stay exact when they fit 64
// bits (beyond that they become doubles; Python keeps them exact), other numbers parse like
// float() — `1e400` is inf, `-1e400` -inf, `1e-400` 0.0 — and `NaN`, `Infinity`, `-Infinity`
// are doubles; strings are decoded by decode_json_string; a repeated key keeps its last
// value. A selected NaN or infinity stays a double (it compares as Python's does; in
// serialised details it reads `null`, which is how nlohmann writes non-finite numbers).
class json_value_builder {
 public:
  explicit json_value_builder(std::string_view text) : s_(text) {}

  // False when a string holds ill-formed UTF-8.
  bool build(output_document& out) { return value(out); }

 private:
  void skip_ws() noexcept;

  bool value(output_document& out);

  void number(output_document& out);

  // Reads a string at the opening quote into `out`, decoded; false on ill-formed UTF-8.
  bool string(std::string& out);

  bool object(output_document& out);

  bool array(output_document& out);

  std::string_view s_;
  std::size_t i_ = 0;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE auto json_value_builder::skip_ws() noexcept -> void {
  while (i_ < s_.size() &&
         (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
    ++i_;
}

LITTLE_LOOPS_INLINE auto json_value_builder::value(output_document& out) -> bool {
  switch (s_[i_]) {
    case '{': return object(out);
    case '[': return array(out);
    case '"': {
      std::string text;
      if (!string(text)) return false;
      out = std::move(text);
      return true;
    }
    case 't': out = true; i_ += 4; break;
    case 'f': out = false; i_ += 5; break;
    case 'n': out = nullptr; i_ += 4; break;
    case 'N': out = std::numeric_limits<double>::quiet_NaN(); i_ += 3; break;
    case 'I': out = std::numeric_limits<double>::infinity(); i_ += 8; break;
    default: number(out); break;
  }
  return true;
}

LITTLE_LOOPS_INLINE auto json_value_builder::number(output_document& out) -> void {
  if (s_.compare(i_, 9, "-Infinity") == 0) {
    i_ += 9;
    out = -std::numeric_limits<double>::infinity();
    return;
  }
  const std::size_t start = i_;
  bool integral = true;
  while (i_ < s_.size()) {
    const char c = s_[i_];
    if (c == '.' || c == 'e' || c == 'E' || c == '+') {
      integral = false;
    } else if (c != '-' && (c < '0' || c > '9')) {
      break;
    }
    ++i_;
  }
  const std::string_view text = s_.substr(start, i_ - start);
  if (integral) {
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (text.front() == '-') {
      std::int64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc{}) {
        out = v;
        return;
      }
    } else {
      std::uint64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc{}) {
        out = v;
        return;
      }
    }
  }
  out = parse_number(text).value_or(0.0);  // valid JSON numbers always parse
}

LITTLE_LOOPS_INLINE auto json_value_builder::string(std::string& out) -> bool {
  const std::size_t body = ++i_;
  bool escaped = false;
  while (true) {
    i_ = s_.find_first_of("\"\\", i_);
    if (s_[i_] == '"') break;
    escaped = true;
    i_ += 2;
  }
  const std::string_view raw = s_.substr(body, i_ - body);
  ++i_;
  if (!is_valid_utf8(raw)) return false;  // escapes are ASCII: this checks the text
  if (escaped)
    decode_json_string(raw, out);
  else
    out.assign(raw);
  return true;
}

LITTLE_LOOPS_INLINE auto json_value_builder::object(output_document& out) -> bool {
  out = output_document::object();
  auto& members = static_cast<json::object_t::Container&>(out.get_ref<json::object_t&>());
  // A repeated key keeps its first place and takes the last value (Python's dict); up to
  // `small` members it is found by a scan, beyond by hash.
  constexpr std::size_t small = 16;
  std::unordered_map<std::string, std::size_t> index;
  ++i_;
  skip_ws();
  if (s_[i_] == '}') {
    ++i_;
    return true;
  }
  while (true) {
    std::string key;
    if (!string(key)) return false;
    skip_ws();
    ++i_;  // ':'
    skip_ws();
    std::size_t at = members.size();
    if (members.size() <= small) {
      for (std::size_t k = 0; k < members.size(); ++k)
        if (members[k].first == key) at = k;
    } else {
      if (index.empty())
        for (std::size_t k = 0; k < members.size(); ++k) index.emplace(members[k].first, k);
      if (const auto it = index.find(key); it != index.end()) at = it->second;
    }
    if (at == members.size()) {
      if (!index.empty()) index.emplace(key, at);
      members.emplace_back(std::move(key), json());
    }
    if (!value(members[at].second)) return false;
    skip_ws();
    if (s_[i_++] == '}') return true;  // else ','
    skip_ws();
  }
}

LITTLE_LOOPS_INLINE auto json_value_builder::array(output_document& out) -> bool {
  out = output_document::array();
  auto& items = out.get_ref<output_document::array_t&>();
  ++i_;
  skip_ws();
  if (s_[i_] == ']') {
    ++i_;
    return true;
  }
  while (true) {
    items.emplace_back();
    if (!value(items.back())) return false;
    skip_ws();
    if (s_[i_++] == ']') return true;  // else ','
    skip_ws();
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

enum class json_extract { found, invalid, not_found };

LITTLE_LOOPS_INLINE json_extract extract_json_path(std::string_view output, const path_segments& segs,
                                      output_document& value, std::string& message);
LITTLE_LOOPS_INLINE json_extract extract_json_path_of(std::string_view output, const path_segments& segs,
                                         std::string_view path, output_document& value,
                                         std::string& message);
LITTLE_LOOPS_INLINE evaluation_result compare_json_value(const output_document& value, std::string_view path,
                                            comparison_op op, const json& target);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Validates `output` as JSON and extracts the value at `segs` without building a DOM of the
// whole document (only the selected value is materialised). On `invalid`, `message` says
// where, in the words of Python's json module.
LITTLE_LOOPS_INLINE json_extract extract_json_path(std::string_view output, const path_segments& segs,
                                      output_document& value, std::string& message) {
  json_path_scanner scanner(output, segs, max_output_depth);
  if (!scanner.scan()) {
    message = scanner.error();
    return json_extract::invalid;
  }
  if (!scanner.found()) return json_extract::not_found;
  if (!json_value_builder(scanner.match()).build(value)) {
    message = "invalid UTF-8 in a string";
    return json_extract::invalid;
  }
  return json_extract::found;
}

// extract_json_path of `segs`, the segments of `path`; when `[N]` segments find nothing,
// the path read as the original reads it (split at dots only: `.a[0]` names the key
// "a[0]") is tried too, so that keys holding brackets stay reachable.
LITTLE_LOOPS_INLINE json_extract extract_json_path_of(std::string_view output, const path_segments& segs,
                                         std::string_view path, output_document& value,
                                         std::string& message) {
  const json_extract first = extract_json_path(output, segs, value, message);
  if (first != json_extract::not_found || !has_bracket_segment(segs)) return first;
  return extract_json_path(output, parse_json_path(path, false), value, message);
}

// The comparison step of output_json, given the extracted value.
LITTLE_LOOPS_INLINE evaluation_result compare_json_value(const output_document& value, std::string_view path,
                                            comparison_op op, const json& target) {
  evaluation_result r;
  r.details = json::object();
  if (py_numeric(value) && py_numeric(target)) {
    r.verdict = cmp_matches(py_numeric_cmp(value, target), op) ? "success" : "failure";
    r.details["value"] = to_library_json(value);
    r.details["path"] = path;
    r.details["target"] = target;
    r.details["operator"] = comparison_name(op);
    return r;
  }
  if (op == comparison_op::eq || op == comparison_op::ne) {
    const bool equal = py_equal(value, target);
    r.verdict = (op == comparison_op::eq) == equal ? "success" : "failure";
    r.details["value"] = to_library_json(value);
    r.details["path"] = path;
    r.details["target"] = target;
    return r;
  }
  return error_result(fmt::format("Operator {} not supported for non-numeric values",
                                  comparison_name(op)));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE evaluation_result evaluate_output_json(std::string_view output, std::string_view path,
                                              comparison_op op, const json& target);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Parses `output` as JSON, extracts `path` (`.a.b`, `.a.0.b`, `.a[0].b`; `.` or `""`
/// for the whole document) and compares it with `target` (seed 000).
///
/// A path with `[N]` that names nothing is also read as the original reads it, split at dots
/// only, so `.a[0]` finds the key "a[0]" of `{"a[0]": 7}`.
/// Numbers (and booleans, as in Python) compare numerically with every operator; other
/// values support only `eq`/`ne` (deep equality). Details `{"value", "path", "target",
/// "operator"}` for numeric comparisons, `{"value", "path", "target"}` otherwise; `error` with
/// `{"error": "Invalid JSON: ..."}`, `{"error": "Path not found: <path>"}` or
/// `{"error": "Operator lt not supported for non-numeric values"}`.
LITTLE_LOOPS_INLINE evaluation_result evaluate_output_json(std::string_view output, std::string_view path,
                                              comparison_op op, const json& target) {
  auto segs = detail::parse_json_path(path);
  detail::output_document value;
  std::string message;
  switch (detail::extract_json_path_of(output, segs, path, value, message)) {
    case detail::json_extract::invalid: return detail::error_result("Invalid JSON: " + message);
    case detail::json_extract::not_found:
      return detail::error_result(fmt::format("Path not found: {}", path));
    case detail::json_extract::found: break;
  }
  return detail::compare_json_value(value, path, op, target);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

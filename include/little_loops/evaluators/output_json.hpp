// little_loops — output_json evaluator: extract a jq-style path from JSON output and compare
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/json_path.hpp>
#include <little_loops/detail/json_scan.hpp>
#include <little_loops/evaluators/output_numeric.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// Parsed output documents use nlohmann::json (sorted-map objects: O(log n) inserts), not the
// insertion-ordered json whose object inserts are linear (quadratic on big objects).
using output_document = nlohmann::json;

// Python's idea of "a number": int, float and bool (bool is an int subclass).
template <class Json>
inline bool py_numeric(const Json& v) noexcept {
  return v.is_number() || v.is_boolean();
}

template <class Json>
inline bool py_integral(const Json& v) noexcept {
  return v.is_number_integer() || v.is_boolean();
}

template <class Json>
inline double py_as_double(const Json& v) {
  if (v.is_boolean()) return v.template get<bool>() ? 1.0 : 0.0;
  return v.template get<double>();
}

// Three-way comparison of two Python-numeric JSON values; exact for integers.
template <class A, class B>
inline int py_numeric_cmp(const A& a, const B& b) {
  if (py_integral(a) && py_integral(b)) {
    auto as_signed = [](const auto& v) -> std::int64_t {
      if (v.is_boolean()) return v.template get<bool>() ? 1 : 0;
      return v.template get<std::int64_t>();
    };
    const bool au = a.is_number_unsigned();
    const bool bu = b.is_number_unsigned();
    if (!au && !bu) {
      auto x = as_signed(a), y = as_signed(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    if (au && bu) {
      auto x = a.template get<std::uint64_t>(), y = b.template get<std::uint64_t>();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    if (au) {
      auto y = as_signed(b);
      if (y < 0) return 1;
      auto x = a.template get<std::uint64_t>();
      auto yy = static_cast<std::uint64_t>(y);
      return x < yy ? -1 : x > yy ? 1 : 0;
    }
    auto x = as_signed(a);
    if (x < 0) return -1;
    auto xx = static_cast<std::uint64_t>(x);
    auto y = b.template get<std::uint64_t>();
    return xx < y ? -1 : xx > y ? 1 : 0;
  }
  const double x = py_as_double(a), y = py_as_double(b);
  if (x < y) return -1;
  if (x > y) return 1;
  if (x == y) return 0;
  return 2;  // unordered (NaN)
}

inline bool cmp_matches(int c, comparison_op op) noexcept {
  if (c == 2) return op == comparison_op::ne;  // NaN: only != holds
  switch (op) {
    case comparison_op::eq: return c == 0;
    case comparison_op::ne: return c != 0;
    case comparison_op::lt: return c < 0;
    case comparison_op::le: return c <= 0;
    case comparison_op::gt: return c > 0;
    case comparison_op::ge: return c >= 0;
  }
  return false;
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

// Converts a parsed output value to the library json type (for details). Object members
// are appended directly (keys are already unique), keeping the conversion linear.
inline json to_library_json(const output_document& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      json out = json::object();
      auto& members = out.get_ref<json::object_t&>();
      members.reserve(v.size());
      for (auto it = v.begin(); it != v.end(); ++it)
        static_cast<json::object_t::Container&>(members).emplace_back(it.key(),
                                                                       to_library_json(*it));
      return out;
    }
    case nlohmann::json::value_t::array: {
      json out = json::array();
      auto& items = out.get_ref<json::array_t&>();
      items.reserve(v.size());
      for (const auto& item : v) items.push_back(to_library_json(item));
      return out;
    }
    case nlohmann::json::value_t::string: return json(v.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean: return json(v.get<bool>());
    case nlohmann::json::value_t::number_integer: return json(v.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return json(v.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return json(v.get<double>());
    default: return json(nullptr);
  }
}

// Maximum nesting depth of an output document (Python's json module stops near 1000 too).
inline constexpr std::size_t max_output_depth = 1000;

enum class json_extract { found, invalid, not_found };

// Validates `output` as JSON and extracts the value at `segs` without building a DOM of the
// whole document (only the selected value is materialised). On `invalid`, `message` says
// where, in the words of Python's json module.
inline json_extract extract_json_path(std::string_view output, const path_segments& segs,
                                      output_document& value, std::string& message) {
  json_path_scanner scanner(output, segs, max_output_depth);
  if (!scanner.scan()) {
    message = scanner.error();
    return json_extract::invalid;
  }
  if (!scanner.found()) return json_extract::not_found;
  std::string_view span = scanner.match();
  value = output_document::parse(span.begin(), span.end(), nullptr, false);
  if (value.is_discarded()) {
    message = "invalid UTF-8 in a string";
    return json_extract::invalid;
  }
  return json_extract::found;
}

// The comparison step of output_json, given the extracted value.
inline evaluation_result compare_json_value(const output_document& value, std::string_view path,
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

}  // namespace detail

/// @brief Parses `output` as JSON, extracts `path` (`.a.b`, `.a.0.b`, `.a[0].b`; `.` or `""`
/// for the whole document) and compares it with `target` (seed 000).
///
/// Numbers (and booleans, as in Python) compare numerically with every operator; other
/// values support only `eq`/`ne` (deep equality). Details `{"value", "path", "target",
/// "operator"}` for numeric comparisons, `{"value", "path", "target"}` otherwise; `error` with
/// `{"error": "Invalid JSON: ..."}`, `{"error": "Path not found: <path>"}` or
/// `{"error": "Operator lt not supported for non-numeric values"}`.
inline evaluation_result evaluate_output_json(std::string_view output, std::string_view path,
                                              comparison_op op, const json& target) {
  auto segs = detail::parse_json_path(path);
  detail::output_document value;
  std::string message;
  switch (detail::extract_json_path(output, segs, value, message)) {
    case detail::json_extract::invalid: return detail::error_result("Invalid JSON: " + message);
    case detail::json_extract::not_found:
      return detail::error_result(fmt::format("Path not found: {}", path));
    case detail::json_extract::found: break;
  }
  return detail::compare_json_value(value, path, op, target);
}

LITTLE_LOOPS_NAMESPACE_END

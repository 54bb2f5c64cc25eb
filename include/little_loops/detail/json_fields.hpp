// little_loops — the strict JSON field reader: a value must have the type asked for
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/strings.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// ---------------------------------------------------------------------------------------
// Field values: the one set of type and range rules. Each caller words a fault its own way:
// as a diagnostic (the loop and paradigm readers, below) or as an error (snapshots).
// ---------------------------------------------------------------------------------------

/// Why a JSON value is not the field asked for.
enum class field_fault {
  wrong_type,    ///< another JSON type (or a fractional number for an integer)
  invalid_utf8,  ///< a string that is not well-formed UTF-8
  not_finite,    ///< an infinite or NaN number
  too_small,     ///< an integer below the range of the type asked for
  too_large,     ///< an integer above it
};

/// The string in `value`, checked to be well-formed UTF-8 when `check_utf8`.
LITTLE_LOOPS_INLINE expected<std::string_view, field_fault> string_field(const json& value,
                                                                         bool check_utf8 = true);

/// The boolean in `value`.
LITTLE_LOOPS_INLINE expected<bool, field_fault> bool_field(const json& value);

/// The finite number (integer or floating point) in `value`.
LITTLE_LOOPS_INLINE expected<double, field_fault> number_field(const json& value);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE expected<std::string_view, field_fault> string_field(const json& value,
                                                                         bool check_utf8) {
  if (!value.is_string()) return unexpected(field_fault::wrong_type);
  const auto& text = value.get_ref<const std::string&>();
  if (check_utf8 && !is_valid_utf8(text)) return unexpected(field_fault::invalid_utf8);
  return std::string_view(text);
}

LITTLE_LOOPS_INLINE expected<bool, field_fault> bool_field(const json& value) {
  if (!value.is_boolean()) return unexpected(field_fault::wrong_type);
  return value.get<bool>();
}

LITTLE_LOOPS_INLINE expected<double, field_fault> number_field(const json& value) {
  if (!value.is_number()) return unexpected(field_fault::wrong_type);
  const double number = value.get<double>();
  if (!std::isfinite(number)) return unexpected(field_fault::not_finite);
  return number;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// The integer in `value` that fits an `Int`. With `whole_floats`, a floating-point value
/// that is a whole number (`10.0`, as JSON Schema's `integer` and Python take it) is that
/// integer; `10.5` is a wrong type either way.
template <class Int>
expected<Int, field_fault> integer_field(const json& value, bool whole_floats = true) {
  using limits = std::numeric_limits<Int>;
  static_assert(std::is_signed_v<Int> && sizeof(Int) <= sizeof(std::int64_t));
  if (value.is_number_unsigned()) {
    const auto n = value.get<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(limits::max())) return unexpected(field_fault::too_large);
    return static_cast<Int>(n);
  }
  if (value.is_number_integer()) {
    const auto n = value.get<std::int64_t>();
    if (n > limits::max()) return unexpected(field_fault::too_large);
    if (n < limits::min()) return unexpected(field_fault::too_small);
    return static_cast<Int>(n);
  }
  if (whole_floats && value.is_number_float()) {
    const double d = value.get<double>();
    if (!std::isfinite(d)) return unexpected(field_fault::not_finite);
    if (std::floor(d) == d) {
      if (d > static_cast<double>(limits::max())) return unexpected(field_fault::too_large);
      if (d < static_cast<double>(limits::min())) return unexpected(field_fault::too_small);
      return static_cast<Int>(d);
    }
  }
  return unexpected(field_fault::wrong_type);
}

LITTLE_LOOPS_INLINE const std::string* first_unknown_key(const json& obj,
                                                         std::initializer_list<std::string_view> known);
LITTLE_LOOPS_INLINE std::string_view json_kind(const json& value) noexcept;
LITTLE_LOOPS_INLINE std::string describe_value(const json& value);
LITTLE_LOOPS_INLINE void report(diagnostics& out, std::string path, std::string_view code,
                                std::string message, severity level = severity::error);
LITTLE_LOOPS_INLINE std::size_t count_errors(const diagnostics& list) noexcept;
LITTLE_LOOPS_INLINE void report_type(diagnostics& out, const std::string& path, std::string_view expected,
                                     const json& found);
LITTLE_LOOPS_INLINE std::string member_path(std::string_view base, std::string_view key);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The first key of object `obj` that is not in `known`, or nullptr.
LITTLE_LOOPS_INLINE const std::string* first_unknown_key(const json& obj,
                                                         std::initializer_list<std::string_view> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (auto k : known) ok = ok || it.key() == k;
    if (!ok) return &it.key();
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Diagnostics: the readers of loop documents and paradigm specs report every finding with
// its path and go on.
// ---------------------------------------------------------------------------------------

/// `object`, `array`, `string`, `integer`, `number`, `boolean`, `null`, `binary`.
LITTLE_LOOPS_INLINE std::string_view json_kind(const json& value) noexcept {
  switch (value.type()) {
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::boolean: return "boolean";
    case json::value_t::null: return "null";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "discarded";
  }
  return "unknown";
}

/// `an array`, `string "abc"`, `integer 5` — how a found value is described in messages.
LITTLE_LOOPS_INLINE std::string describe_value(const json& value) {
  switch (value.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::null: return "null";
    case json::value_t::string:
      return "string " + quote_excerpt(value.get_ref<const std::string&>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
    case json::value_t::boolean:
      return std::string(json_kind(value)) + " " + value.dump();
    default: return std::string(json_kind(value));
  }
}

LITTLE_LOOPS_INLINE void report(diagnostics& out, std::string path, std::string_view code,
                                std::string message, severity level) {
  out.push_back(diagnostic{level, std::move(path), std::move(message), std::string(code)});
}

LITTLE_LOOPS_INLINE std::size_t count_errors(const diagnostics& list) noexcept {
  std::size_t n = 0;
  for (const auto& d : list)
    if (d.level == severity::error) ++n;
  return n;
}

/// Reports a value of the wrong JSON type: `null-value` for null, else `wrong-type`.
LITTLE_LOOPS_INLINE void report_type(diagnostics& out, const std::string& path, std::string_view expected,
                                     const json& found) {
  if (found.is_null())
    report(out, path, "null-value", fmt::format("expected {}, got null", expected));
  else
    report(out, path, "wrong-type", fmt::format("expected {}, got {}", expected,
                                                 describe_value(found)));
}

/// The path of member `key` under `base`, with ill-formed UTF-8 in the key replaced.
LITTLE_LOOPS_INLINE std::string member_path(std::string_view base, std::string_view key) {
  if (is_valid_utf8(key)) return join_path(base, key);  // (the common case: no copy)
  return join_path(base, sanitize_utf8(key));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Reports `key` under `base` as unknown, with a "did you mean" among `candidates` and an
/// optional extra hint.
template <class Range>
void report_unknown_key(diagnostics& out, std::string_view base, std::string_view key,
                        const Range& candidates, std::string_view extra = {}) {
  std::string message = "unknown key " + quote_excerpt(key);
  message += did_you_mean(key, candidates);
  if (!extra.empty()) {
    message += "; ";
    message += extra;
  }
  report(out, member_path(base, key), "unknown-key", std::move(message));
}

LITTLE_LOOPS_INLINE void report_fault(diagnostics& out, const std::string& path, field_fault fault,
                                      std::string_view expected, const json& value);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Reports `fault` for `value` at `path`; `expected` says what was wanted ("a string"). The
/// range named for an integer is `int`'s, the one integer type these readers read.
LITTLE_LOOPS_INLINE void report_fault(diagnostics& out, const std::string& path, field_fault fault,
                                      std::string_view expected, const json& value) {
  switch (fault) {
    case field_fault::wrong_type: report_type(out, path, expected, value); return;
    case field_fault::invalid_utf8:
      report(out, path, "invalid-utf8", "string is not valid UTF-8");
      return;
    case field_fault::not_finite: report(out, path, "out-of-range", "number is not finite"); return;
    case field_fault::too_small:
      report(out, path, "out-of-range", fmt::format("integer {} is too small (min {})",
                                                    value.dump(), std::numeric_limits<int>::min()));
      return;
    case field_fault::too_large:
      report(out, path, "out-of-range", fmt::format("integer {} is too large (max {})",
                                                    value.dump(), std::numeric_limits<int>::max()));
      return;
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// The field read from `value`, or std::nullopt after reporting why not at `path`.
template <class T>
std::optional<T> reported(expected<T, field_fault> field, const json& value,
                          const std::string& path, std::string_view expected, diagnostics& out) {
  if (field) return std::move(*field);
  report_fault(out, path, field.error(), expected, value);
  return std::nullopt;
}

LITTLE_LOOPS_INLINE std::optional<std::string> read_string(const json& value, const std::string& path,
                                                           diagnostics& out);
LITTLE_LOOPS_INLINE std::optional<bool> read_bool(const json& value, const std::string& path,
                                                  diagnostics& out);
LITTLE_LOOPS_INLINE std::optional<double> read_number(const json& value, const std::string& path,
                                                      diagnostics& out);
LITTLE_LOOPS_INLINE std::optional<int> read_int(const json& value, const std::string& path,
                                                diagnostics& out);
LITTLE_LOOPS_INLINE bool expect_object(const json& value, const std::string& path, diagnostics& out);
LITTLE_LOOPS_INLINE json number_json(double value);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// A well-formed UTF-8 string.
LITTLE_LOOPS_INLINE std::optional<std::string> read_string(const json& value, const std::string& path,
                                                           diagnostics& out) {
  auto text = reported(string_field(value), value, path, "a string", out);
  if (!text) return std::nullopt;
  return std::string(*text);
}

LITTLE_LOOPS_INLINE std::optional<bool> read_bool(const json& value, const std::string& path,
                                                  diagnostics& out) {
  return reported(bool_field(value), value, path, "a boolean (true or false)", out);
}

/// A finite number (integer or floating point).
LITTLE_LOOPS_INLINE std::optional<double> read_number(const json& value, const std::string& path,
                                                      diagnostics& out) {
  return reported(number_field(value), value, path, "a number", out);
}

/// An integer that fits an `int`; a whole floating-point number (`10.0`) is that integer.
LITTLE_LOOPS_INLINE std::optional<int> read_int(const json& value, const std::string& path,
                                                diagnostics& out) {
  return reported(integer_field<int>(value), value, path, "an integer", out);
}

/// `true` when `value` is a JSON object, else reports it.
LITTLE_LOOPS_INLINE bool expect_object(const json& value, const std::string& path, diagnostics& out) {
  if (value.is_object()) return true;
  report_type(out, path, "an object", value);
  return false;
}

/// JSON for a double: an integer when the value is integral (so `30` stays `30`).
LITTLE_LOOPS_INLINE json number_json(double value) {
  if (std::isfinite(value) && std::floor(value) == value && std::fabs(value) < 9007199254740992.0)
    return json(static_cast<std::int64_t>(value));
  return json(value);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

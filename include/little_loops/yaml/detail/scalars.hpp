// little_loops — YAML 1.1 scalar resolution as PyYAML's safe_load does it (bool, int, float, null)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

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

/// The value of base-60 digits without underscores (`1:30` → 90).
inline double sexagesimal_value(const std::string& clean) {
  double value = 0;
  std::size_t start = 0;
  while (start <= clean.size()) {
    const auto end = clean.find(':', start);
    value = value * 60 + std::stod(clean.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return value;
}

/// A decimal float `clean` (`digits.digits[e±digits]`, `exponent` its `±digits` part) that
/// from_chars finds out of range: too large (infinity, as Python's float() gives) or too
/// small (0.0), as the decimal exponent of its first significant digit says.
inline double out_of_range_float(const std::string& clean, std::string_view exponent) {
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
  return magnitude > 0 ? std::numeric_limits<double>::infinity() : 0.0;
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
      const double value = sexagesimal_value(strip_underscores(body));
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
    double value = sexagesimal_value(strip_underscores(int_part));
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
    value = out_of_range_float(clean, exponent);
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
inline json resolve_plain_scalar(std::string&& text) {
  if (yaml11_null(text)) return json(nullptr);
  if (auto b = yaml11_bool(text)) return json(*b);
  if (auto f = yaml11_float(text)) return *f;
  if (auto i = yaml11_int(text)) return *i;
  return json(std::move(text));
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

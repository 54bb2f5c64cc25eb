// little_loops — number parsing (Python float() grammar) and deterministic number formatting
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// ASCII whitespace as Python's str.strip() sees it (plus the information separators).
inline constexpr bool is_py_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
         (c >= '\x1c' && c <= '\x1f');
}

inline std::string_view trim_py(std::string_view s) noexcept {
  while (!s.empty() && is_py_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_py_space(s.back())) s.remove_suffix(1);
  return s;
}

inline constexpr char lower_ascii_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower_ascii_char(a[i]) != lower_ascii_char(b[i])) return false;
  return true;
}

// Parses `text` like Python's float(): surrounding whitespace, an optional sign, decimal
// digits with an optional fraction and exponent, or inf/infinity/nan (any case). Unlike
// Python, digit-group underscores (`1_000`) are rejected (design §3.9), and so are hex and
// anything else. Returns std::nullopt when the text is not a number.
inline std::optional<double> parse_number(std::string_view text) noexcept {
  std::string_view s = trim_py(text);
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  if (iequals(s, "inf") || iequals(s, "infinity")) {
    return negative ? -HUGE_VAL : HUGE_VAL;
  }
  if (iequals(s, "nan")) return negative ? -std::nan("") : std::nan("");
  // Validate the grammar strictly before handing the text to from_chars.
  std::size_t i = 0;
  std::size_t int_digits = 0;
  std::size_t frac_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ptr != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Python: overflow gives inf, underflow gives 0 (with the sign).
    bool big = false;
    // Decide by the decimal exponent magnitude: a leading non-zero digit with a large
    // exponent overflows, otherwise it underflowed.
    std::size_t e = s.find_first_of("eE");
    long long exp10 = 0;
    if (e != std::string_view::npos) {
      auto [p2, ec2] = std::from_chars(s.data() + e + 1 + (s[e + 1] == '+' ? 1 : 0),
                                       s.data() + s.size(), exp10);
      (void)p2;
      if (ec2 == std::errc::result_out_of_range) exp10 = s[e + 1] == '-' ? -400000 : 400000;
    }
    big = exp10 + static_cast<long long>(int_digits) > 0;
    value = big ? HUGE_VAL : 0.0;
  } else if (ec != std::errc{}) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

// Appends `v` the way Python's repr(float) prints it: shortest round-trip digits, fixed
// notation for decimal exponents in [-4, 16) with at least one fractional digit ("3.0"),
// scientific notation otherwise ("1e+16", "1.5e-07"); "inf", "-inf", "nan".
inline void append_py_float(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  // sci looks like "-1.2345e+02" or "5e-07".
  bool negative = false;
  if (!sci.empty() && sci.front() == '-') {
    negative = true;
    sci.remove_prefix(1);
  }
  std::size_t epos = sci.find('e');
  std::string_view mant = sci.substr(0, epos);
  int exp10 = 0;
  {
    std::string_view es = sci.substr(epos + 1);
    if (!es.empty() && es.front() == '+') es.remove_prefix(1);
    std::from_chars(es.data(), es.data() + es.size(), exp10);
  }
  char digits[32];
  std::size_t nd = 0;
  for (char c : mant)
    if (c != '.' && nd < sizeof digits) digits[nd++] = c;
  if (negative) out += '-';
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 >= 0) {
      auto int_len = static_cast<std::size_t>(exp10) + 1;
      for (std::size_t k = 0; k < int_len; ++k) out += k < nd ? digits[k] : '0';
      out += '.';
      if (nd > int_len)
        out.append(digits + int_len, nd - int_len);
      else
        out += '0';
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exp10 - 1), '0');
      out.append(digits, nd);
    }
    return;
  }
  out += digits[0];
  if (nd > 1) {
    out += '.';
    out.append(digits + 1, nd - 1);
  }
  out += 'e';
  out += exp10 < 0 ? '-' : '+';
  int a = exp10 < 0 ? -exp10 : exp10;
  if (a < 10) out += '0';
  char eb[8];
  auto r2 = std::to_chars(eb, eb + sizeof eb, a);
  out.append(eb, static_cast<std::size_t>(r2.ptr - eb));
}

inline std::string py_float_string(double v) {
  std::string s;
  append_py_float(s, v);
  return s;
}

template <class Int>
inline void append_integer(std::string& out, Int v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

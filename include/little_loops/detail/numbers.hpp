// little_loops — number parsing (Python float() grammar) and deterministic number formatting
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>
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

// Length in bytes of the UTF-8 encoded non-ASCII character that Python's str.isspace()
// accepts, starting at `s[0]`, or 0: U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000 (the whole list, checked against Python 3.11).
inline constexpr std::size_t py_unicode_space_len(std::string_view s) noexcept {
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (s.size() >= 2 && at(0) == 0xC2 && (at(1) == 0x85 || at(1) == 0xA0)) return 2;
  if (s.size() < 3) return 0;
  const unsigned a = at(0), b = at(1), c = at(2);
  if (a == 0xE1 && b == 0x9A && c == 0x80) return 3;  // U+1680
  if (a == 0xE2 && b == 0x80 && ((c >= 0x80 && c <= 0x8A) || c == 0xA8 || c == 0xA9 || c == 0xAF))
    return 3;                                         // U+2000–U+200A, U+2028, U+2029, U+202F
  if (a == 0xE2 && b == 0x81 && c == 0x9F) return 3;  // U+205F
  if (a == 0xE3 && b == 0x80 && c == 0x80) return 3;  // U+3000
  return 0;
}

// `s` without the leading and trailing characters Python's str.strip() removes: the ASCII
// ones of is_py_space and the Unicode spaces of py_unicode_space_len (UTF-8 encoded).
inline std::string_view trim_py(std::string_view s) noexcept {
  while (!s.empty()) {
    if (is_py_space(s.front())) {
      s.remove_prefix(1);
    } else if (const std::size_t n = py_unicode_space_len(s)) {
      s.remove_prefix(n);
    } else {
      break;
    }
  }
  while (!s.empty()) {
    if (is_py_space(s.back())) {
      s.remove_suffix(1);
      continue;
    }
    // The spaces are 2 or 3 bytes long and start with a lead byte, so a match on the last
    // 2 or 3 bytes is a whole character.
    if (s.size() >= 2 && py_unicode_space_len(s.substr(s.size() - 2)) == 2) {
      s.remove_suffix(2);
    } else if (s.size() >= 3 && py_unicode_space_len(s.substr(s.size() - 3)) == 3) {
      s.remove_suffix(3);
    } else {
      break;
    }
  }
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

// The zero of every run of ten Unicode decimal digits (category Nd) outside ASCII, in
// order (Unicode 14.0, as Python 3.11's unicodedata): U+0660 ARABIC-INDIC DIGIT ZERO, ...
inline constexpr char32_t unicode_decimal_zeros[] = {
    0x660,   0x6F0,   0x7C0,   0x966,   0x9E6,   0xA66,   0xAE6,   0xB66,   0xBE6,   0xC66,
    0xCE6,   0xD66,   0xDE6,   0xE50,   0xED0,   0xF20,   0x1040,  0x1090,  0x17E0,  0x1810,
    0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,  0xA8D0,
    0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,  0x104A0, 0x10D30, 0x11066, 0x110F0,
    0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950,
    0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC,
    0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0};

// The value of the non-ASCII decimal digit `c`, or -1.
inline int unicode_decimal_value(char32_t c) noexcept {
  std::size_t lo = 0, hi = std::size(unicode_decimal_zeros);
  while (lo < hi) {  // the last zero <= c
    const std::size_t mid = (lo + hi) / 2;
    if (unicode_decimal_zeros[mid] <= c) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return -1;
  const char32_t offset = c - unicode_decimal_zeros[lo - 1];
  return offset < 10 ? static_cast<int>(offset) : -1;
}

LITTLE_LOOPS_INLINE std::optional<std::string> ascii_decimal_digits(std::string_view s);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// `s` with every non-ASCII decimal digit (UTF-8) replaced by its ASCII digit, as Python's
// float() reads them (`float("٣")` is 3.0); std::nullopt when `s` holds any other non-ASCII
// character or is not UTF-8.
LITTLE_LOOPS_INLINE std::optional<std::string> ascii_decimal_digits(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    if (bytes[i] < 0x80) {
      out += s[i++];
      continue;
    }
    const std::size_t len = utf8_sequence_length(bytes + i, bytes + s.size());
    if (len == 0) return std::nullopt;
    const int digit = unicode_decimal_value(utf8_code_point(bytes + i, len));
    if (digit < 0) return std::nullopt;
    out += static_cast<char>('0' + digit);
    i += len;
  }
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE std::optional<double> parse_number(std::string_view text) noexcept;
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Parses `text` like Python's float(): surrounding whitespace, an optional sign, decimal
// digits (any Unicode decimal digit, as Python) with an optional fraction and exponent, or
// inf/infinity/nan (any case). Unlike Python, digit-group underscores (`1_000`) are rejected
// (design §3.9), and so are hex and anything else. Returns std::nullopt when the text is not
// a number.
LITTLE_LOOPS_INLINE std::optional<double> parse_number(std::string_view text) noexcept {
  std::string_view s = trim_py(text);
  if (s.empty()) return std::nullopt;
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x80) continue;
    try {  // rare: non-ASCII digits become ASCII ones, then the ASCII grammar below
      const std::optional<std::string> ascii = ascii_decimal_digits(s);
      return ascii ? parse_number(*ascii) : std::nullopt;
    } catch (...) {  // out of memory
      return std::nullopt;
    }
  }
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
    // Python: overflow gives inf, underflow gives 0 (with the sign). Which one it was is
    // decided by the decimal magnitude of the first significant digit: its place in the
    // digits (zeros after the point count: 0.000…1) plus the exponent.
    const std::string_view digits_part = s.substr(0, std::min(s.find_first_of("eE"), s.size()));
    long long place = static_cast<long long>(int_digits);  // 10^(place - 1) for the first digit
    for (const char c : digits_part) {
      if (c == '.') continue;
      if (c != '0') break;
      --place;
    }
    std::size_t e = s.find_first_of("eE");
    long long exp10 = 0;
    if (e != std::string_view::npos) {
      auto [p2, ec2] = std::from_chars(s.data() + e + 1 + (s[e + 1] == '+' ? 1 : 0),
                                       s.data() + s.size(), exp10);
      (void)p2;
      if (ec2 == std::errc::result_out_of_range) exp10 = s[e + 1] == '-' ? -400000 : 400000;
    }
    value = exp10 + place > 0 ? HUGE_VAL : 0.0;
  } else if (ec != std::errc{}) {
    return std::nullopt;
  }
  return negative ? -value : value;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// Three-way comparison of an integer with a double, exact as Python compares int and float
// (the integer is never rounded to a double: 2**53 + 1 > 2.0**53). Returns -1, 0 or 1, or 2
// when `d` is NaN (unordered: only `!=` holds). -0.0 equals 0.
inline int compare_int_double(std::int64_t i, double d) noexcept {
  if (std::isnan(d)) return 2;
  constexpr double two63 = 9223372036854775808.0;
  if (d >= two63) return -1;  // also +inf
  if (d < -two63) return 1;   // also -inf
  const double t = std::trunc(d);  // in [-2**63, 2**63): exact as an int64
  const auto ti = static_cast<std::int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  return d > t ? -1 : d < t ? 1 : 0;  // i == trunc(d): the fraction decides
}

inline int compare_int_double(std::uint64_t u, double d) noexcept {
  if (std::isnan(d)) return 2;
  constexpr double two64 = 18446744073709551616.0;
  if (d >= two64) return -1;  // also +inf
  if (d < 0) return 1;        // also -inf; -0.0 is not < 0
  const double t = std::trunc(d);  // in [0, 2**64): exact as a uint64
  const auto tu = static_cast<std::uint64_t>(t);
  if (u != tu) return u < tu ? -1 : 1;
  return d > t ? -1 : 0;  // d >= 0, so only a positive fraction is possible
}

LITTLE_LOOPS_INLINE bool append_short_decimal(std::string& out, double v);
LITTLE_LOOPS_INLINE void append_py_float(std::string& out, double v);
LITTLE_LOOPS_INLINE std::string py_float_string(double v);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Appends `v` in fixed notation when it is a decimal with at most 4 fractional digits and
// |v| < 1e11 (ratios, durations, scores: most values a template prints) and returns true;
// false when it is not. m / 10^k (both exact, one correctly rounded division) equal to `v`
// means the k-decimal text reads back as `v`; the smallest such k gives the fewest digits;
// below 1e11 the spacing of doubles is under 1e-4, so no other k-decimal text reads back
// as `v`: the text is Python's shortest repr.
LITTLE_LOOPS_INLINE bool append_short_decimal(std::string& out, double v) {
  constexpr double limit = 1e11;
  if (!(v > -limit && v < limit)) return false;
  constexpr std::array<double, 5> scale{1.0, 10.0, 100.0, 1000.0, 10000.0};
  for (std::size_t k = 0; k < scale.size(); ++k) {
    // Rounded to the nearest integer by hand (std::nearbyint is a library call on x86-64).
    const double product = v * scale[k];
    auto m = static_cast<std::int64_t>(product + (product < 0 ? -0.5 : 0.5));
    if (static_cast<double>(m) / scale[k] != v) continue;
    if (std::signbit(v)) out += '-';
    if (m < 0) m = -m;
    char buf[24];
    char* end = std::to_chars(buf, buf + sizeof buf, m).ptr;
    const auto digits = static_cast<std::size_t>(end - buf);
    if (k == 0) {
      out.append(buf, digits);
      out += ".0";
    } else if (digits > k) {
      out.append(buf, digits - k);
      out += '.';
      out.append(buf + digits - k, k);
    } else {
      out += "0.";
      out.append(k - digits, '0');
      out.append(buf, digits);
    }
    return true;
  }
  return false;
}

// Appends `v` the way Python's repr(float) prints it: shortest round-trip digits, fixed
// notation for decimal exponents in [-4, 16) with at least one fractional digit ("3.0"),
// scientific notation otherwise ("1e+16", "1.5e-07"); "inf", "-inf", "nan". Beyond the short
// decimals, fmt's default format of a double has the same digits and the same exponent
// bounds and writes at least two exponent digits; it leaves out the ".0" of an integral
// value, added here.
LITTLE_LOOPS_INLINE void append_py_float(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  if (append_short_decimal(out, v)) return;
  // fmt::format, not format_to: fmt's compiled library holds vformat, while format_to would
  // instantiate fmt's whole formatting engine in each includer.
  const std::size_t start = out.size();
  out += fmt::format("{}", v);
  if (out.find_first_of(".e", start) == std::string::npos) out += ".0";
}

LITTLE_LOOPS_INLINE std::string py_float_string(double v) {
  std::string s;
  append_py_float(s, v);
  return s;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

template <class Int>
inline void append_integer(std::string& out, Int v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

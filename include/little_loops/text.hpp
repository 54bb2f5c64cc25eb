// little_loops — text helpers for hosts: UTF-8 checks, decoding and cutting, Python-style
// float text (what the library itself uses to show outputs and values)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/utf8.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief True when `text` is well-formed UTF-8 (Unicode's table 3-7: no overlong forms,
/// surrogates or code points past U+10FFFF).
inline bool is_utf8(std::string_view text) noexcept { return detail::is_valid_utf8(text); }

/// @brief `text` with each byte that starts no well-formed UTF-8 sequence replaced by U+FFFD
/// (`text` itself when it is valid): safe to put into JSON and messages.
inline std::string to_valid_utf8(std::string_view text) { return detail::sanitize_utf8(text); }

/// @brief The code points of `text`; each byte that starts no well-formed UTF-8 sequence
/// becomes U+FFFD.
inline std::vector<char32_t> decode_utf8(std::string_view text) { return detail::utf8_decode(text); }

/// @brief Appends the UTF-8 encoding of the code point `cp` to `out`.
inline void append_utf8(std::string& out, char32_t cp) { detail::utf8_append(out, cp); }

/// @brief The length (1 to 4 bytes) of the well-formed UTF-8 character that starts at
/// `text[at]` (`at < text.size()`), or 0 when none starts there (a stray continuation byte,
/// an overlong form, a surrogate, a code point past U+10FFFF, a sequence cut short).
inline std::size_t utf8_char_length(std::string_view text, std::size_t at) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  return detail::utf8_sequence_length(p + at, p + text.size());
}

/// @brief The code point of the well-formed UTF-8 character of `length` bytes (as given by
/// utf8_char_length) at `text[at]`.
inline char32_t utf8_char_at(std::string_view text, std::size_t at, std::size_t length) noexcept {
  return detail::utf8_code_point(reinterpret_cast<const unsigned char*>(text.data()) + at, length);
}

/// @brief The largest length, at most `max_bytes`, of a prefix of `text` that does not cut
/// a UTF-8 sequence in half (`text.size()` when `max_bytes` covers it).
inline std::size_t utf8_boundary(std::string_view text, std::size_t max_bytes) noexcept {
  return detail::utf8_cut(text, max_bytes);
}

/// @brief `v` as Python's `repr(float)` writes it: the shortest digits that read back as
/// `v`, fixed notation for decimal exponents in [-4, 16) with at least one fractional digit
/// ("3.0", "0.0001"), scientific notation otherwise ("1e+16", "1.5e-07"); "inf", "-inf",
/// "nan".
inline std::string python_float_repr(double v) { return detail::py_float_string(v); }

LITTLE_LOOPS_NAMESPACE_END

// little_loops — UTF-8: the sequence rule (Unicode's table 3-7), decoding, encoding,
// validation, replacement of ill-formed bytes and cutting on character boundaries
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::string_view utf8_replacement = "\xEF\xBF\xBD";  // U+FFFD

// True for a continuation byte (10xxxxxx): it never starts a character.
inline constexpr bool is_utf8_continuation(char c) noexcept {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

/// The UTF-8 sequence that starts at `p[i]` (a byte of 0x80 or more, `i < n`): its length,
/// and whether it is well-formed (Unicode's table 3-7: no overlong forms, surrogates or code
/// points past U+10FFFF). An ill-formed one is its maximal subpart (what one U+FFFD replaces
/// in nlohmann's replace handler and in Python's decode(errors="replace")): a byte that
/// cannot start a sequence; or a start and the continuation bytes before the byte that cannot
/// continue it (not included: it is read again) or before the end.
struct utf8_sequence {
  std::size_t length;
  bool well_formed;
};
inline utf8_sequence utf8_sequence_at(const unsigned char* p, std::size_t i, std::size_t n) noexcept {
  const unsigned char c = p[i];
  std::size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {  // 80..C1, F5..FF start nothing
    return {1, false};
  }
  std::size_t k = 1;
  for (; k <= need && i + k < n; ++k) {
    const unsigned char b = p[i + k];
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) break;
  }
  if (k > need) return {need + 1, true};
  return {k, false};
}

// The length of the well-formed UTF-8 sequence at `p` (1 to 4), or 0 when none starts there
// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, truncated).
inline std::size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end) noexcept {
  if (*p < 0x80) return 1;
  const utf8_sequence seq = utf8_sequence_at(p, 0, static_cast<std::size_t>(end - p));
  return seq.well_formed ? seq.length : 0;
}

// The code point of the well-formed UTF-8 sequence of `len` bytes at `p` (the length
// utf8_sequence_length gave).
inline char32_t utf8_code_point(const unsigned char* p, std::size_t len) noexcept {
  char32_t c = p[0] & (len == 1 ? 0x7F : len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < len; ++k) c = (c << 6) | (p[k] & 0x3F);
  return c;
}

/// True when `text` is well-formed UTF-8 (no overlongs, surrogates or code points
/// above U+10FFFF).
inline bool is_valid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const std::size_t n = utf8_sequence_length(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

LITTLE_LOOPS_INLINE std::vector<char32_t> utf8_decode(std::string_view text);
LITTLE_LOOPS_INLINE void utf8_append(std::string& out, char32_t cp);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Decodes UTF-8 into code points; each byte that starts no well-formed sequence becomes
/// U+FFFD.
LITTLE_LOOPS_INLINE std::vector<char32_t> utf8_decode(std::string_view text) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const std::size_t len = utf8_sequence_length(p, end);
    out.push_back(len == 0 ? char32_t{0xFFFD} : utf8_code_point(p, len));
    p += len == 0 ? 1 : len;
  }
  return out;
}

/// Appends the UTF-8 encoding of `cp` to `out`. A surrogate (U+D800–U+DFFF) gets the
/// generalised 3-byte form ("WTF-8"), which is not valid UTF-8.
LITTLE_LOOPS_INLINE void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0U | (cp >> 6U)));
    out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0U | (cp >> 12U)));
    out.push_back(static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU)));
    out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
  } else {
    out.push_back(static_cast<char>(0xF0U | (cp >> 18U)));
    out.push_back(static_cast<char>(0x80U | ((cp >> 12U) & 0x3FU)));
    out.push_back(static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU)));
    out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// The first `n` code points of a UTF-8 string (Python's `s[:n]`).
inline std::string_view utf8_prefix(std::string_view s, std::size_t n) noexcept {
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!is_utf8_continuation(s[i])) {
      if (count == n) return s.substr(0, i);
      ++count;
    }
  }
  return s;
}

// The last `n` code points of a UTF-8 string (Python's `s[-n:]`).
inline std::string_view utf8_suffix(std::string_view s, std::size_t n) noexcept {
  if (n == 0) return s.substr(s.size());
  std::size_t count = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    if (!is_utf8_continuation(s[i])) {
      if (++count == n) return s.substr(i);
    }
  }
  return s;
}

// The largest cut ≤ `max_bytes` (and ≤ the size) that does not split a UTF-8 sequence:
// `s.substr(0, cut)` ends on a character boundary.
inline std::size_t utf8_cut(std::string_view s, std::size_t max_bytes) noexcept {
  if (max_bytes >= s.size()) return s.size();
  std::size_t cut = max_bytes;
  while (cut > 0 && is_utf8_continuation(s[cut])) --cut;
  return cut;
}

LITTLE_LOOPS_INLINE std::string sanitize_utf8(std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `text` with every byte that starts no well-formed UTF-8 sequence replaced by U+FFFD, so
/// user data can be put into messages and paths that are later serialised as JSON.
LITTLE_LOOPS_INLINE std::string sanitize_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_sequence_length(p + i, end);
    if (len == 0) {
      out += utf8_replacement;
      ++i;
    } else {
      out += text.substr(i, len);
      i += len;
    }
  }
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — slugify(): loop names derived from free text (goal paradigm)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// Decodes UTF-8 into code points; each invalid byte becomes U+FFFD.
inline std::vector<char32_t> utf8_decode(std::string_view text) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < text.size()) {
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    std::size_t len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((b0 & 0xE0U) == 0xC0U) {
      len = 2, cp = b0 & 0x1FU, min = 0x80;
    } else if ((b0 & 0xF0U) == 0xE0U) {
      len = 3, cp = b0 & 0x0FU, min = 0x800;
    } else if ((b0 & 0xF8U) == 0xF0U) {
      len = 4, cp = b0 & 0x07U, min = 0x10000;
    }
    bool ok = len != 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((byte(i + k) & 0xC0U) != 0x80U) ok = false;
      else cp = (cp << 6U) | (byte(i + k) & 0x3FU);
    }
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

/// Appends the UTF-8 encoding of `cp` to `out`.
inline void utf8_append(std::string& out, char32_t cp) {
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

/// Whitespace as Python's `str.isspace()` sees it (the `\s` of a str regex).
inline bool slug_is_space(char32_t c) noexcept {
  return c == U' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F) || c == 0x85 ||
         c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/// A "word" character (`\w` of a Python str regex: letters, digits, numerics and `_`).
/// ASCII and Latin-1 are exact; beyond them punctuation, symbol, mark, emoji and format
/// blocks are non-word and other code points (letters of the world's scripts) are word.
inline bool slug_is_word(char32_t c) noexcept {
  if (c < 0x80)
    return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9') ||
           c == U'_';
  if (c < 0x100)
    return c == 0xAA || c == 0xB2 || c == 0xB3 || c == 0xB5 || c == 0xB9 || c == 0xBA ||
           (c >= 0xBC && c <= 0xBE) || (c >= 0xC0 && c != 0xD7 && c != 0xF7);
  if (slug_is_space(c)) return false;
  struct range {
    char32_t lo, hi;
  };
  // Blocks (or parts) that hold no letters or digits.
  static constexpr range non_word[] = {
      {0x2C2, 0x2C5},     {0x2D2, 0x2DF},     {0x2E5, 0x2EB},   {0x2ED, 0x2ED},
      {0x2EF, 0x36F},     {0x375, 0x375},     {0x37E, 0x37E},   {0x384, 0x385},
      {0x387, 0x387},     {0x3F6, 0x3F6},     {0x482, 0x489},   {0x55A, 0x55F},
      {0x589, 0x58A},     {0x591, 0x5C7},     {0x5F3, 0x5F4},   {0x600, 0x61F},
      {0x64B, 0x65F},     {0x66A, 0x66D},     {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
      {0x200B, 0x206F},   {0x20A0, 0x20FF},   {0x2190, 0x245F}, {0x2500, 0x2775},
      {0x2794, 0x2BFF},   {0x2E00, 0x2E7F},   {0x3001, 0x3004}, {0x3008, 0x3020},
      {0x302A, 0x3030},   {0xD800, 0xF8FF},   {0xFE00, 0xFE6F}, {0xFEFF, 0xFEFF},
      {0xFF01, 0xFF0F},   {0xFF1A, 0xFF20},   {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65},
      {0xFFF0, 0xFFFF},   {0x1F000, 0x1FAFF}, {0xE0000, 0x10FFFF},
  };
  for (const auto& r : non_word)
    if (c >= r.lo && c <= r.hi) return false;
  return true;
}

/// Lower-cases one code point (ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic,
/// full-width Latin); other scripts are returned unchanged.
inline char32_t slug_to_lower(char32_t c) noexcept {
  if (c >= U'A' && c <= U'Z') return c + 0x20;
  if (c < 0xC0) return c;
  if (c <= 0xDE) return c == 0xD7 ? c : c + 0x20;
  if (c >= 0x100 && c <= 0x12F) return (c % 2 == 0) ? c + 1 : c;
  if (c >= 0x132 && c <= 0x137) return (c % 2 == 0) ? c + 1 : c;
  if (c >= 0x139 && c <= 0x148) return (c % 2 == 1) ? c + 1 : c;
  if (c >= 0x14A && c <= 0x177) return (c % 2 == 0) ? c + 1 : c;
  if (c == 0x178) return 0xFF;
  if (c >= 0x179 && c <= 0x17E) return (c % 2 == 1) ? c + 1 : c;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F))
    return (c % 2 == 0) ? c + 1 : c;
  if (c == 0x4C0) return 0x4CF;
  if (c >= 0x4C1 && c <= 0x4CE) return (c % 2 == 1) ? c + 1 : c;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 0x20;
  return c;
}

/// The slug of `text`, as the original's `_slugify`: drop every character that is not a
/// word character, whitespace or `-`; turn each run of whitespace and `-` into one `-`;
/// trim `-` at both ends; lower-case; keep the first `max_length` characters (code points,
/// so a cut never splits a UTF-8 sequence; it may leave a trailing `-`, as the original).
/// `"No Type Errors in src/"` → `"no-type-errors-in-src"`.
inline std::string slugify(std::string_view text, std::size_t max_length = 50) {
  const std::vector<char32_t> in = utf8_decode(text);
  std::vector<char32_t> kept;
  kept.reserve(in.size());
  bool in_run = false;
  for (const char32_t c : in) {
    const bool sep = c == U'-' || slug_is_space(c);
    if (sep) {
      if (!in_run) kept.push_back(U'-');
      in_run = true;
    } else if (slug_is_word(c)) {
      kept.push_back(c);
      in_run = false;
    }
    // Other characters are removed before runs are collapsed, so "a / b" → "a-b".
  }
  std::size_t begin = 0;
  std::size_t end = kept.size();
  while (begin < end && kept[begin] == U'-') ++begin;
  while (end > begin && kept[end - 1] == U'-') --end;
  std::vector<char32_t> lowered;
  lowered.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    if (kept[i] == 0x130) {  // İ lower-cases to "i" + combining dot above, as in Python
      lowered.push_back(U'i');
      lowered.push_back(0x307);
    } else {
      lowered.push_back(slug_to_lower(kept[i]));
    }
  }
  std::string out;
  for (std::size_t i = 0; i < lowered.size() && i < max_length; ++i) utf8_append(out, lowered[i]);
  return out;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

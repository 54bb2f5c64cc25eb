// little_loops — slugify(): loop names derived from free text (goal paradigm)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/utf8.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions read the tables
#  include <little_loops/detail/unicode_tables.hpp>

#  include <algorithm>
#  include <iterator>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// Whitespace as Python's `str.isspace()` sees it (the `\s` of a str regex).
LITTLE_LOOPS_INLINE bool slug_is_space(char32_t c) noexcept;

/// A "word" character: what `\w` matches in a Python str pattern (letters, digits and
/// numerics of every script, and `_`), from the Unicode 14 tables Python 3.11 uses.
LITTLE_LOOPS_INLINE bool slug_is_word(char32_t c) noexcept;

/// Python's `str.lower()` of one code point that maps to one code point (every one but
/// U+0130, which slugify() handles, and U+03A3 at the end of a word: see slug_final_sigma).
LITTLE_LOOPS_INLINE char32_t slug_to_lower(char32_t c) noexcept;

/// True when the capital sigma at `text[i]` lower-cases to the final form ς, as in Python's
/// `str.lower()`: a cased letter before it and none after it, case-ignorable characters
/// (marks, modifier letters, apostrophes…) skipped on both sides.
LITTLE_LOOPS_INLINE bool slug_final_sigma(const std::vector<char32_t>& text, std::size_t begin,
                                          std::size_t end, std::size_t i) noexcept;

/// The slug of `text`, as the original's `_slugify`: drop every character that is not a
/// word character, whitespace or `-`; turn each run of whitespace and `-` into one `-`;
/// trim `-` at both ends; lower-case; keep the first `max_length` characters (code points,
/// so a cut never splits a UTF-8 sequence; it may leave a trailing `-`, as the original).
/// `"No Type Errors in src/"` → `"no-type-errors-in-src"`.
LITTLE_LOOPS_INLINE std::string slugify(std::string_view text, std::size_t max_length = 50);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// True when `c` is in `table` (sorted, disjoint ranges).
template <std::size_t N>
bool in_code_point_ranges(const unicode_tables::code_point_range (&table)[N], char32_t c) noexcept {
  const auto* it = std::lower_bound(std::begin(table), std::end(table), c,
                                    [](const unicode_tables::code_point_range& r, char32_t v) {
                                      return r.hi < v;
                                    });
  return it != std::end(table) && it->lo <= c;
}

LITTLE_LOOPS_INLINE bool slug_is_space(char32_t c) noexcept {
  return c == U' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F) || c == 0x85 ||
         c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

LITTLE_LOOPS_INLINE bool slug_is_word(char32_t c) noexcept {
  if (c < 0x80)
    return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9') ||
           c == U'_';
  return in_code_point_ranges(unicode_tables::word, c);
}

LITTLE_LOOPS_INLINE char32_t slug_to_lower(char32_t c) noexcept {
  const auto* it = std::lower_bound(std::begin(unicode_tables::lower), std::end(unicode_tables::lower), c,
                                    [](const unicode_tables::lower_run& r, char32_t v) {
                                      return r.hi < v;
                                    });
  if (it == std::end(unicode_tables::lower) || c < it->lo || (c - it->lo) % it->stride != 0) return c;
  return static_cast<char32_t>(static_cast<std::int64_t>(c) + it->delta);
}

LITTLE_LOOPS_INLINE bool slug_final_sigma(const std::vector<char32_t>& text, std::size_t begin,
                                          std::size_t end, std::size_t i) noexcept {
  std::size_t j = i;
  while (j > begin && in_code_point_ranges(unicode_tables::case_ignorable, text[j - 1])) --j;
  if (j == begin || !in_code_point_ranges(unicode_tables::cased, text[j - 1])) return false;
  j = i + 1;
  while (j < end && in_code_point_ranges(unicode_tables::case_ignorable, text[j])) ++j;
  return j == end || !in_code_point_ranges(unicode_tables::cased, text[j]);
}

LITTLE_LOOPS_INLINE std::string slugify(std::string_view text, std::size_t max_length) {
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
    } else if (kept[i] == 0x3A3) {  // Σ: ς at the end of a word, σ elsewhere
      lowered.push_back(slug_final_sigma(kept, begin, end, i) ? 0x3C2 : 0x3C3);
    } else {
      lowered.push_back(slug_to_lower(kept[i]));
    }
  }
  std::string out;
  for (std::size_t i = 0; i < lowered.size() && i < max_length; ++i) utf8_append(out, lowered[i]);
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — string helpers: edit distance, "did you mean" hints, paths, excerpts
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/utf8.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// True when `text` holds an ASCII upper-case letter.
LITTLE_LOOPS_INLINE bool has_ascii_upper(std::string_view text) noexcept;

/// ASCII lower-case copy (keys and enum values are ASCII; other bytes pass through).
LITTLE_LOOPS_INLINE std::string ascii_lower(std::string_view text);

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions) between
/// `a` and `b`: exact when it is at most `limit`, some value above `limit` otherwise (found
/// as soon as it is known to exceed it), so comparing a long junk key against candidates
/// stays cheap: O(|a| * limit). A common prefix and suffix are skipped first (an optimal
/// alignment matches them), so names that share a long stem cost only their differing middle.
LITTLE_LOOPS_INLINE std::size_t edit_distance(std::string_view a, std::string_view b,
                                              std::size_t limit = static_cast<std::size_t>(-1) - 1);

/// The candidate closest to `value` when it is close enough to be a plausible typo:
/// case-insensitively equal, or within an edit distance of 1 for short names (≤ 4 chars),
/// 2 for names up to 8 chars and 3 beyond, and never a complete replacement. Ties go to the
/// first candidate.
/// Values longer than this get no suggestion: a typo hint for a name that long helps
/// nobody, and each look costs a pass over every candidate.
inline constexpr std::size_t closest_match_max_length = 256;

template <class Range>
std::optional<std::string_view> closest_match(std::string_view value, const Range& candidates) {
  if (value.size() > closest_match_max_length) return std::nullopt;
  const std::string lowered = ascii_lower(value);
  std::string lowered_candidate;  // only for candidates with upper-case letters
  std::optional<std::string_view> best;
  std::size_t best_distance = static_cast<std::size_t>(-1);
  for (const auto& candidate_ref : candidates) {
    const std::string_view candidate{candidate_ref};
    if (candidate == value) continue;
    const std::size_t size = candidate.size();
    const std::size_t threshold = size <= 4 ? 1 : (size <= 8 ? 2 : 3);
    if ((size > value.size() ? size - value.size() : value.size() - size) > threshold) continue;
    std::string_view folded = candidate;
    if (has_ascii_upper(candidate)) {
      lowered_candidate = ascii_lower(candidate);
      folded = lowered_candidate;
    }
    // Only a distance below the best so far can change the answer (ties go to the first).
    const std::size_t limit = best ? std::min(threshold, best_distance - 1) : threshold;
    const std::size_t distance = edit_distance(lowered, folded, limit);
    // A complete replacement ("c" for "a") is not a typo.
    const std::size_t longest = std::max(size, value.size());
    if (distance <= limit && distance < longest) {
      best = candidate;
      best_distance = distance;
      if (distance == 0) break;  // a case-insensitive equal: nothing closer follows
    }
  }
  return best;
}

/// ` (did you mean "x"?)` when a close candidate exists, else an empty string.
template <class Range>
std::string did_you_mean(std::string_view value, const Range& candidates) {
  const auto match = closest_match(value, candidates);
  if (!match) return {};
  std::string hint = " (did you mean \"";
  hint += *match;
  hint += "\"?)";
  return hint;
}

/// `a, b, c` — the candidates joined for "expected one of" messages.
template <class Range>
std::string join_names(const Range& names, std::string_view separator = ", ") {
  std::string out;
  bool first = true;
  for (const auto& name : names) {
    if (!first) out += separator;
    out += std::string_view{name};
    first = false;
  }
  return out;
}

/// Dotted document path: `join_path("states.fix", "evaluate")` → `states.fix.evaluate`;
/// an empty base yields the key alone.
LITTLE_LOOPS_INLINE std::string join_path(std::string_view base, std::string_view key);

/// Array element path: `index_path("scope", 2)` → `scope[2]`.
LITTLE_LOOPS_INLINE std::string index_path(std::string_view base, std::size_t index);

/// `text` shortened to at most `max_bytes` bytes (on a UTF-8 boundary) with `…` appended
/// when cut; used to quote user values in messages without flooding them.
LITTLE_LOOPS_INLINE std::string quote_excerpt(std::string_view text, std::size_t max_bytes = 60);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE bool has_ascii_upper(std::string_view text) noexcept {
  return std::any_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

LITTLE_LOOPS_INLINE std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

LITTLE_LOOPS_INLINE std::size_t edit_distance(std::string_view a, std::string_view b,
                                              std::size_t limit) {
  const std::size_t length_gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (length_gap > limit) return limit + 1;
  const auto prefix = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  a.remove_prefix(static_cast<std::size_t>(prefix.first - a.begin()));
  b.remove_prefix(static_cast<std::size_t>(prefix.second - b.begin()));
  const auto suffix = std::mismatch(a.rbegin(), a.rend(), b.rbegin(), b.rend());
  a.remove_suffix(static_cast<std::size_t>(suffix.first - a.rbegin()));
  b.remove_suffix(static_cast<std::size_t>(suffix.second - b.rbegin()));
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  if (n == 0) return m;
  if (m == 0) return n;
  // Three rolling rows: two rows back (for transpositions), previous, current; on the stack
  // for short names. Only the band |i - j| <= limit can hold a distance within the limit, so
  // only it is computed (the cells just outside it are set above the limit): O(n * limit)
  // rather than O(n * m).
  const std::size_t over = limit + 1;
  constexpr std::size_t small_row = 48;
  std::size_t small[3 * small_row];
  std::vector<std::size_t> large;
  std::size_t* rows = small;
  if (m + 1 > small_row) {
    large.resize(3 * (m + 1));
    rows = large.data();
  }
  std::fill(rows, rows + 3 * (m + 1), over);
  std::size_t* before = rows;
  std::size_t* previous = rows + (m + 1);
  std::size_t* current = rows + 2 * (m + 1);
  for (std::size_t j = 0; j <= m && j <= over; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t j_lo = i > limit ? i - limit : 1;
    const std::size_t j_hi = limit >= m ? m : std::min(m, i + limit);
    current[j_lo - 1] = j_lo == 1 ? i : over;
    if (j_hi < m) current[j_hi + 1] = over;
    std::size_t row_min = current[j_lo - 1];
    for (std::size_t j = j_lo; j <= j_hi; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t best = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        best = std::min(best, before[j - 2] + 1);
      current[j] = best;
      row_min = std::min(row_min, best);
    }
    if (row_min > limit) return limit + 1;
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

LITTLE_LOOPS_INLINE std::string join_path(std::string_view base, std::string_view key) {
  std::string out;
  out.reserve(base.size() + key.size() + 1);
  out += base;
  if (!base.empty()) out += '.';
  out += key;
  return out;
}

LITTLE_LOOPS_INLINE std::string index_path(std::string_view base, std::size_t index) {
  std::string out(base);
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

LITTLE_LOOPS_INLINE std::string quote_excerpt(std::string_view text, std::size_t max_bytes) {
  const std::string clean = sanitize_utf8(text);
  const std::string_view view{clean};
  std::string out = "\"";
  if (view.size() <= max_bytes) {
    out += view;
  } else {
    out += view.substr(0, utf8_cut(view, max_bytes));
    out += "\xE2\x80\xA6";  // …
  }
  out += '"';
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

inline constexpr std::uint64_t fnv1a_offset = 14695981039346656037ULL;
inline constexpr std::uint64_t fnv1a_prime = 1099511628211ULL;

/// One byte of FNV-1a 64: `h` is the hash of the bytes before `c`.
constexpr std::uint64_t fnv1a_step(std::uint64_t h, char c) noexcept {
  return (h ^ static_cast<unsigned char>(c)) * fnv1a_prime;
}

inline std::uint64_t fnv1a_64(std::string_view data) noexcept {
  std::uint64_t h = fnv1a_offset;
  for (const char c : data) h = fnv1a_step(h, c);
  return h;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

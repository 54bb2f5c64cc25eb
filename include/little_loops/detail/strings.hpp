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

/// ASCII lower-case copy (keys and enum values are ASCII; other bytes pass through).
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions) between
/// `a` and `b`: exact when it is at most `limit`, some value above `limit` otherwise (found
/// as soon as it is known to exceed it), so comparing a long junk key against candidates
/// stays cheap: O(|a| * limit).
inline std::size_t edit_distance(std::string_view a, std::string_view b,
                                 std::size_t limit = static_cast<std::size_t>(-1) - 1) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  const std::size_t length_gap = n > m ? n - m : m - n;
  if (length_gap > limit) return limit + 1;
  if (n == 0) return m;
  if (m == 0) return n;
  // Three rolling rows: two rows back (for transpositions), previous, current. Only the band
  // |i - j| <= limit can hold a distance within the limit, so only it is computed (the cells
  // just outside it are set above the limit): O(n * limit) rather than O(n * m).
  const std::size_t over = limit + 1;
  std::vector<std::size_t> before(m + 1, over), previous(m + 1, over), current(m + 1, over);
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
  std::optional<std::string_view> best;
  std::size_t best_distance = static_cast<std::size_t>(-1);
  for (const auto& candidate_ref : candidates) {
    const std::string_view candidate{candidate_ref};
    if (candidate == value) continue;
    const std::size_t size = candidate.size();
    const std::size_t threshold = size <= 4 ? 1 : (size <= 8 ? 2 : 3);
    if ((size > value.size() ? size - value.size() : value.size() - size) > threshold) continue;
    const std::size_t distance = edit_distance(lowered, ascii_lower(candidate), threshold);
    // A complete replacement ("c" for "a") is not a typo.
    const std::size_t longest = std::max(size, value.size());
    if (distance <= threshold && distance < longest && distance < best_distance) {
      best = candidate;
      best_distance = distance;
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
inline std::string join_path(std::string_view base, std::string_view key) {
  std::string out;
  out.reserve(base.size() + key.size() + 1);
  out += base;
  if (!base.empty()) out += '.';
  out += key;
  return out;
}

/// Array element path: `index_path("scope", 2)` → `scope[2]`.
inline std::string index_path(std::string_view base, std::size_t index) {
  std::string out(base);
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

/// `text` shortened to at most `max_bytes` bytes (on a UTF-8 boundary) with `…` appended
/// when cut; used to quote user values in messages without flooding them.
inline std::string quote_excerpt(std::string_view text, std::size_t max_bytes = 60) {
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

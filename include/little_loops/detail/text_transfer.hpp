// little_loops — moving action output into records without allocating in steady state
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// Moves the text of `from` into `to` (whose old text is dropped) without allocating in steady
// state: short texts are copied into `to`'s buffer, long ones are swapped (O(1)); `from` is
// left with unspecified contents.
// GCC 12 at -O3 reports the copies in std::string::swap's short-string branches as out of
// bounds; they cannot run here (`from` is longer than the inline buffer) — false positives
// of -Warray-bounds / -Wstringop-overflow / -Wstringop-overread, silenced for this function.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Warray-bounds"
#  pragma GCC diagnostic ignored "-Wstringop-overflow"
#  pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
inline void take_text(std::string& to, std::string& from) {
  if (from.empty())
    to.clear();
  else if (from.size() <= 64)
    to.assign(from);
  else
    to.swap(from);
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#  pragma GCC diagnostic pop
#endif

inline std::string_view strip_trailing_newlines(std::string_view s) noexcept {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

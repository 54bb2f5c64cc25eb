// little_loops — output_contains evaluator: RE2 regex or substring search, optionally negated
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/python_regex.hpp>
#include <little_loops/detail/regex_prefilter.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions run RE2
#  include <re2/re2.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace re2 {
class RE2;  // <re2/re2.h>, which only the definitions include
}  // namespace re2

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief An output_contains pattern compiled once: a literal (substring search), an RE2
/// regex, or — when the pattern is not a valid regex — a substring search for the pattern
/// text (seed 000's fallback).
///
/// Patterns use Python `re` syntax as far as RE2 can follow it (see
/// detail::translate_python_regex: `\Z`, `{,n}`, `$`, `\uXXXX`, comments, …). `\d`, `\w` and
/// `\s` are Unicode, as in a Python str pattern (written as RE2's `\p{Nd}`, `[\p{L}\p{N}_]`
/// and the str.isspace() set), except `\W` and `\S` inside a class with other members, which
/// stay ASCII; `\b` and `\B` are ASCII word boundaries (RE2 has no other). Patterns Python
/// rejects fall back to a substring search for the pattern text, as the seed does on
/// `re.error`; so do patterns RE2 cannot compile (backreferences such as `(a)\1`, lookaround
/// such as `(?!x)`, `\N{NAME}`, the verbose flag `(?x)`).
class pattern_matcher {
 public:
  /// How the pattern is matched.
  enum class mode { literal, regex, substring_fallback };

  explicit pattern_matcher(std::string pattern);

  /// True when the pattern occurs in `text` (Python `re.search` semantics as far as RE2
  /// allows; `$` also matches before a final newline, as in Python: see
  /// detail::translate_python_regex).
  [[nodiscard]] bool search(std::string_view text) const;

  /// Where the pattern first occurs in `text`: {offset, length} of the match (as search()
  /// finds it); nullopt when it does not occur. For showing what matched, not for speed.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> find(std::string_view text) const;

  /// The pattern as written.
  [[nodiscard]] const std::string& pattern() const noexcept { return pattern_; }
  /// How it is matched.
  [[nodiscard]] mode match_mode() const noexcept { return mode_; }
  /// The literal every match must contain (checked with memmem before running RE2).
  [[nodiscard]] const std::string& required_literal() const noexcept { return required_; }
  /// Why the pattern is not used as a regex (mode substring_fallback): Python's `re` would
  /// reject it (a message like Python's), or RE2's message when RE2 cannot compile it.
  [[nodiscard]] const std::string& regex_error() const noexcept { return regex_error_; }
  /// In mode substring_fallback: true when Python's `re` rejects the pattern too (the
  /// original falls back as well), false when only RE2 cannot run it (the original would
  /// run it as a regex, e.g. a lookahead).
  [[nodiscard]] bool rejected_by_python() const noexcept { return python_rejects_; }

 private:
  std::string pattern_;
  mode mode_ = mode::literal;
  std::shared_ptr<const re2::RE2> re_;
  std::string regex_error_;
  bool python_rejects_ = false;
  std::string required_;  // literal every match contains (prefilter), may be empty
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE pattern_matcher::pattern_matcher(std::string pattern) : pattern_(std::move(pattern)) {
  if (detail::is_literal_pattern(pattern_)) {
    mode_ = mode::literal;
    return;
  }
  // A pattern Python rejects (re.error) and one RE2 cannot compile both fall back.
  detail::py_regex_translation translated = detail::translate_python_regex(pattern_);
  if (!translated.error.empty()) {
    mode_ = mode::substring_fallback;
    regex_error_ = std::move(translated.error);
    python_rejects_ = !translated.unsupported;
    return;
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<RE2>(translated.re2, opts);
  if (!re->ok()) {
    mode_ = mode::substring_fallback;
    regex_error_ = re->error();
    return;
  }
  mode_ = mode::regex;
  required_ = detail::required_literal(translated.re2);
  re_ = std::move(re);
}

LITTLE_LOOPS_INLINE auto pattern_matcher::search(std::string_view text) const -> bool {
  switch (mode_) {
    case mode::literal:
    case mode::substring_fallback: return detail::contains_substring(text, pattern_);
    case mode::regex:
      if (!required_.empty() && !detail::contains_substring(text, required_)) return false;
      return RE2::PartialMatch(text, *re_);
  }
  return false;
}

LITTLE_LOOPS_INLINE auto pattern_matcher::find(std::string_view text) const -> std::optional<std::pair<std::size_t, std::size_t>> {
  if (mode_ != mode::regex) {
    const std::size_t at = text.find(pattern_);
    if (at == std::string_view::npos) return std::nullopt;
    return std::pair{at, pattern_.size()};
  }
  re2::StringPiece match;
  if (!re_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED, &match, 1))
    return std::nullopt;
  return std::pair{static_cast<std::size_t>(match.data() - text.data()), match.size()};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE evaluation_result contains_result(bool matched, std::string_view pattern, bool negate);
LITTLE_LOOPS_INLINE evaluation_result evaluate_output_contains(std::string_view output,
                                                  std::string_view pattern,
                                                  bool negate = false);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Verdict of a match (seed 000): found → `success` (`failure` when negated), not
/// found → `failure` (`success` when negated); details `{"matched", "pattern", "negate"}`.
LITTLE_LOOPS_INLINE evaluation_result contains_result(bool matched, std::string_view pattern, bool negate) {
  evaluation_result r;
  r.verdict = (matched != negate) ? "success" : "failure";
  r.details = json::object();
  r.details["matched"] = matched;
  r.details["pattern"] = detail::sanitize_utf8(pattern);
  r.details["negate"] = negate;
  return r;
}

/// @brief Searches `output` for `pattern` (compiles the pattern on every call; the default
/// evaluator compiles it once at load instead).
LITTLE_LOOPS_INLINE evaluation_result evaluate_output_contains(std::string_view output,
                                                  std::string_view pattern,
                                                  bool negate) {
  pattern_matcher m{std::string(pattern)};
  return contains_result(m.search(output), pattern, negate);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

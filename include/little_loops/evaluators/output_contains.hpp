// little_loops — output_contains evaluator: RE2 regex or substring search, optionally negated
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#include <re2/re2.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// True when `pattern` has no regex metacharacter, so a regex search equals a substring
// search.
inline bool is_literal_pattern(std::string_view pattern) noexcept {
  return pattern.find_first_of("\\^$.|?*+()[]{}") == std::string_view::npos;
}

// Byte-string search; glibc's memmem is a vectorised two-way search.
inline bool contains_substring(std::string_view text, std::string_view needle) noexcept {
  if (needle.empty()) return true;
  if (needle.size() > text.size()) return false;
#if defined(__GLIBC__)
  return ::memmem(text.data(), text.size(), needle.data(), needle.size()) != nullptr;
#else
  return text.find(needle) != std::string_view::npos;
#endif
}

// Rewrites the Python-only escape `\Z` (end of text) as RE2's `\z`.
inline std::string python_to_re2(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      out += '\\';
      out += pattern[i + 1] == 'Z' ? 'z' : pattern[i + 1];
      ++i;
      continue;
    }
    out += pattern[i];
  }
  return out;
}

// The longest run of literal bytes every match of `pattern` must contain (outside groups,
// classes and quantified atoms), or "" when none is known. Patterns with alternation or
// inline flags get "". Used as a memmem prefilter: when the run is absent, there is no match.
inline std::string required_literal(std::string_view pattern) {
  if (pattern.find('|') != std::string_view::npos ||
      pattern.find("(?") != std::string_view::npos)
    return {};
  std::string best, cur;
  int depth = 0;
  auto end_run = [&] {
    if (cur.size() > best.size()) best = cur;
    cur.clear();
  };
  const std::size_t n = pattern.size();
  for (std::size_t i = 0; i < n; ++i) {
    const char c = pattern[i];
    char literal = 0;
    if (c == '\\') {
      if (i + 1 >= n) return {};
      const char e = pattern[++i];
      const bool word = (e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z');
      if (word) {
        end_run();
        continue;
      }
      literal = e;
    } else if (c == '[') {
      std::size_t j = i + 1;
      if (j < n && pattern[j] == '^') ++j;
      if (j < n && pattern[j] == ']') ++j;
      while (j < n && pattern[j] != ']') {
        if (pattern[j] == '\\') ++j;
        ++j;
      }
      i = j;
      end_run();
      continue;
    } else if (c == '(') {
      ++depth;
      end_run();
      continue;
    } else if (c == ')') {
      --depth;
      end_run();
      continue;
    } else if (c == '.' || c == '^' || c == '$') {
      end_run();
      continue;
    } else if (c == '*' || c == '?' || c == '+' || c == '{') {
      if (!cur.empty()) cur.pop_back();
      end_run();
      continue;
    } else {
      literal = c;
    }
    if (depth == 0) cur += literal;
  }
  end_run();
  return best;
}

}  // namespace detail

/// @brief An output_contains pattern compiled once: a literal (substring search), an RE2
/// regex, or — when the pattern is not a valid regex — a substring search for the pattern
/// text (seed 000's fallback).
class pattern_matcher {
 public:
  /// How the pattern is matched.
  enum class mode { literal, regex, substring_fallback };

  explicit pattern_matcher(std::string pattern) : pattern_(std::move(pattern)) {
    if (detail::is_literal_pattern(pattern_)) {
      mode_ = mode::literal;
      return;
    }
    RE2::Options opts;
    opts.set_log_errors(false);
    auto re = std::make_shared<RE2>(detail::python_to_re2(pattern_), opts);
    if (!re->ok()) {
      mode_ = mode::substring_fallback;
      regex_error_ = re->error();
      return;
    }
    mode_ = mode::regex;
    dollar_ = pattern_.find('$') != std::string::npos;
    required_ = detail::required_literal(pattern_);
    re_ = std::move(re);
  }

  /// True when the pattern occurs in `text` (Python `re.search` semantics as far as RE2
  /// allows; `$` also matches before a final newline, as in Python).
  [[nodiscard]] bool search(std::string_view text) const {
    switch (mode_) {
      case mode::literal:
      case mode::substring_fallback: return detail::contains_substring(text, pattern_);
      case mode::regex: {
        if (!required_.empty() && !detail::contains_substring(text, required_)) return false;
        if (RE2::PartialMatch(text, *re_)) return true;
        if (dollar_ && !text.empty() && text.back() == '\n') {
          text.remove_suffix(1);
          return RE2::PartialMatch(text, *re_);
        }
        return false;
      }
    }
    return false;
  }

  /// The pattern as written.
  [[nodiscard]] const std::string& pattern() const noexcept { return pattern_; }
  /// How it is matched.
  [[nodiscard]] mode match_mode() const noexcept { return mode_; }
  /// The literal every match must contain (checked with memmem before running RE2).
  [[nodiscard]] const std::string& required_literal() const noexcept { return required_; }
  /// RE2's message when the pattern did not compile (mode substring_fallback).
  [[nodiscard]] const std::string& regex_error() const noexcept { return regex_error_; }

 private:
  std::string pattern_;
  mode mode_ = mode::literal;
  bool dollar_ = false;
  std::shared_ptr<const RE2> re_;
  std::string regex_error_;
  std::string required_;  // literal every match contains (prefilter), may be empty
};

/// @brief Verdict of a match (seed 000): found → `success` (`failure` when negated), not
/// found → `failure` (`success` when negated); details `{"matched", "pattern", "negate"}`.
inline evaluation_result contains_result(bool matched, std::string_view pattern, bool negate) {
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
inline evaluation_result evaluate_output_contains(std::string_view output,
                                                  std::string_view pattern,
                                                  bool negate = false) {
  pattern_matcher m{std::string(pattern)};
  return contains_result(m.search(output), pattern, negate);
}

LITTLE_LOOPS_NAMESPACE_END

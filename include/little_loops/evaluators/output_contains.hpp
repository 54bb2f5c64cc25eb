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

// Python's `re` reads a counted repetition `{m}`, `{m,}`, `{,n}`, `{m,n}` or `{,}` (but not
// `{}`); the length of that form starting at `p[0] == '{'`, or 0 when the brace is literal
// text. `min_empty` tells whether the minimum is omitted (`{,n}`, `{,}`).
inline std::size_t py_repeat_length(std::string_view p, bool* min_empty = nullptr) noexcept {
  std::size_t k = 1;
  const auto digits = [&] {
    const std::size_t from = k;
    while (k < p.size() && p[k] >= '0' && p[k] <= '9') ++k;
    return k - from;
  };
  const std::size_t lo = digits();
  const bool comma = k < p.size() && p[k] == ',';
  if (comma) {
    ++k;
    digits();
  }
  if (k >= p.size() || p[k] != '}' || (lo == 0 && !comma)) return 0;
  if (min_empty) *min_empty = lo == 0;
  return k + 1;
}

// Length of the character class starting at `p[0] == '['` as Python reads it (a `]` right
// after `[` or `[^` is a member; `\` escapes one character), or 0 when it is unterminated.
inline std::size_t py_class_length(std::string_view p) noexcept {
  std::size_t k = 1;
  if (k < p.size() && p[k] == '^') ++k;
  if (k < p.size() && p[k] == ']') ++k;
  while (k < p.size() && p[k] != ']') k += p[k] == '\\' ? 2 : 1;
  return k < p.size() ? k + 1 : 0;
}

// Translates the Python spellings RE2 reads differently: the escape `\Z` (end of text)
// becomes `\z`, and a repetition with the minimum omitted (`x{,n}`, `x{,}`, which Python
// reads as `x{0,n}`, `x{0,}` and RE2 as literal text) gets an explicit 0 when it follows
// an atom (a character, escape, class or group; after `(`, `|`, `^`, `$`, an anchor escape,
// another repetition or at the start Python rejects it, and it is left as is). Escaped
// braces and braces inside classes are untouched.
inline std::string python_to_re2(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 2);
  bool after_atom = false;  // the previous token can take a repetition
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[i + 1];
      out += '\\';
      out += e == 'Z' ? 'z' : e;
      ++i;
      after_atom = e != 'A' && e != 'b' && e != 'B' && e != 'Z';
      continue;
    }
    if (c == '[') {
      if (const std::size_t len = py_class_length(pattern.substr(i))) {
        out += pattern.substr(i, len);
        i += len - 1;
        after_atom = true;
        continue;
      }
    }
    if (c == '{') {
      bool min_empty = false;
      if (const std::size_t len = py_repeat_length(pattern.substr(i), &min_empty)) {
        if (after_atom) {
          out += '{';
          if (min_empty) out += '0';
          out += pattern.substr(i + 1, len - 1);
          i += len - 1;
          after_atom = false;
          continue;
        }
      }
    }
    out += c;
    // Anything else is an atom, including a brace that is not a repetition (literal text).
    after_atom = !(c == '(' || c == '|' || c == '^' || c == '$' || c == '*' || c == '+' ||
                   c == '?');
  }
  return out;
}

// The longest run of literal bytes that every match of `pattern` (RE2 syntax, as given by
// python_to_re2) must contain, or "" when none is known. Used as a memmem prefilter: when
// the run is absent from the text there is no match, so it must be sound, never complete.
// Only the top-level concatenation is read: groups, classes, `.`, anchors and escapes other
// than escaped punctuation end a run; a repeated atom (`?`, `*`, `+`, `{m,n}`, including
// `{0}`) is dropped from its run and ends it; escapes with arguments (`\x41`, `\x{41}`,
// `\pL`, `\p{Greek}`, octal `\123`, `\Q…\E`) are skipped whole. Alternation and inline
// flags (`(?i)`) anywhere give "", and so does anything unexpected.
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
  // Drops the last character (a whole UTF-8 sequence) of the run: the atom a repetition
  // applies to. When the atom was not a literal (a class, a group, `\d`), the run is empty.
  auto drop_atom = [&] {
    while (!cur.empty() && (static_cast<unsigned char>(cur.back()) & 0xC0) == 0x80)
      cur.pop_back();
    if (!cur.empty()) cur.pop_back();
  };
  auto hex = [](char h) {
    return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
  };
  const std::size_t n = pattern.size();
  for (std::size_t i = 0; i < n; ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 >= n) return {};
      const char e = pattern[++i];
      const bool word = (e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') ||
                        (e >= 'A' && e <= 'Z') || e == '_';
      if (!word) {  // escaped punctuation or a non-ASCII byte: a literal
        if (depth == 0) cur += e;
        continue;
      }
      end_run();
      // Skip the escape's argument, if it has one.
      if (e == 'x' || e == 'p' || e == 'P' || e == 'N') {
        if (i + 1 < n && pattern[i + 1] == '{') {
          const std::size_t close = pattern.find('}', i + 1);
          if (close == std::string_view::npos) return best;
          i = close;
        } else if (e == 'x') {
          for (int k = 0; k < 2 && i + 1 < n && hex(pattern[i + 1]); ++k) ++i;
        } else if (e != 'N') {
          ++i;  // one-letter property name: \pL
          if (i < n && (static_cast<unsigned char>(pattern[i]) & 0x80) != 0) return best;
        }
      } else if (e == 'u' || e == 'U') {
        const int len = e == 'u' ? 4 : 8;
        for (int k = 0; k < len && i + 1 < n && hex(pattern[i + 1]); ++k) ++i;
      } else if (e >= '0' && e <= '9') {
        for (int k = 0; k < 2 && i + 1 < n && pattern[i + 1] >= '0' && pattern[i + 1] <= '9';
             ++k)
          ++i;
      } else if (e == 'Q') {
        return best;  // quoted text up to \E: not worth reading
      }
      continue;
    }
    if (c == '[') {
      // Skip the class. A `[` inside (RE2's `[[:alpha:]]`) or `\Q` makes the end uncertain.
      std::size_t j = i + 1;
      if (j < n && pattern[j] == '^') ++j;
      if (j < n && pattern[j] == ']') ++j;
      while (j < n && pattern[j] != ']') {
        if (pattern[j] == '[') {
          end_run();
          return best;
        }
        if (pattern[j] == '\\') {
          if (j + 1 < n && pattern[j + 1] == 'Q') {
            end_run();
            return best;
          }
          ++j;
        }
        ++j;
      }
      i = j;
      end_run();
      continue;
    }
    if (c == '{') {
      if (const std::size_t len = py_repeat_length(pattern.substr(i))) {
        drop_atom();
        end_run();
        i += len - 1;
        continue;
      }
      end_run();  // a literal brace: fine to leave out
      continue;
    }
    if (c == '*' || c == '?' || c == '+') {
      drop_atom();
      end_run();
      continue;
    }
    if (c == '(') {
      ++depth;
      end_run();
      continue;
    }
    if (c == ')') {
      --depth;
      end_run();
      continue;
    }
    if (c == '.' || c == '^' || c == '$') {
      end_run();
      continue;
    }
    if (depth == 0) cur += c;
  }
  end_run();
  return best;
}

}  // namespace detail

/// @brief An output_contains pattern compiled once: a literal (substring search), an RE2
/// regex, or — when the pattern is not a valid regex — a substring search for the pattern
/// text (seed 000's fallback).
///
/// Patterns use Python `re` syntax as far as RE2 can follow it (`\Z` and `{,n}` are
/// translated); `\d`, `\w`, `\s` and `\b` are ASCII-only (RE2), unlike Python's Unicode
/// classes, and patterns RE2 cannot compile (backreferences such as `(a)\1`, lookaround
/// such as `(?!x)`) fall back to a substring search for the pattern text, as the seed does
/// for invalid patterns.
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
    const std::string translated = detail::python_to_re2(pattern_);
    auto re = std::make_shared<RE2>(translated, opts);
    if (!re->ok()) {
      mode_ = mode::substring_fallback;
      regex_error_ = re->error();
      return;
    }
    mode_ = mode::regex;
    dollar_ = pattern_.find('$') != std::string::npos;
    required_ = detail::required_literal(translated);
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

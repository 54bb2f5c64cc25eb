// little_loops — literal fast paths for output_contains: literal patterns, the literal a
// regex match must contain, and the byte search that looks for them
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/python_regex.hpp>
#include <little_loops/detail/utf8.hpp>

#include <cstring>
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

LITTLE_LOOPS_INLINE std::string required_literal(std::string_view pattern);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Reads an RE2 pattern for required_literal(): one pass over the top-level concatenation,
// keeping the literal run being read (`cur_`) and the longest one ended (`best_`). Each
// reader leaves `i_` on the last character of its construct, or returns false when the
// rest cannot be read (the answer is then `best_` as it stands).
class required_literal_reader {
 public:
  explicit required_literal_reader(std::string_view pattern) : p_(pattern), n_(pattern.size()) {}

  std::string run() && {
    if (p_.find('|') != std::string_view::npos) return {};
    // Non-capturing groups `(?:` (python_to_re2 writes `$` as `(?:\n?\z)`) are groups like
    // any other; any other `(?` (flags, named groups) gives "".
    for (std::size_t at = p_.find("(?"); at != std::string_view::npos; at = p_.find("(?", at + 2))
      if (at + 2 >= n_ || p_[at + 2] != ':') return {};
    for (i_ = 0; i_ < n_; ++i_)
      if (!token()) return std::move(best_);
    end_run();
    return std::move(best_);
  }

 private:
  std::string_view p_;
  std::size_t n_;
  std::size_t i_ = 0;
  int depth_ = 0;
  std::string best_, cur_;

  void end_run() {
    if (cur_.size() > best_.size()) best_ = cur_;
    cur_.clear();
  }

  // Drops the last character (a whole UTF-8 sequence) of the run: the atom a repetition
  // applies to. When the atom was not a literal (a class, a group, `\d`), the run is empty.
  void drop_atom() {
    while (!cur_.empty() && is_utf8_continuation(cur_.back())) cur_.pop_back();
    if (!cur_.empty()) cur_.pop_back();
  }

  bool token() {
    const char c = p_[i_];
    switch (c) {
      case '\\': return escape();
      case '[': return skip_class();
      case '{':
        if (const std::size_t len = py_repeat_length(p_.substr(i_))) {
          drop_atom();
          i_ += len - 1;
        }
        end_run();  // a literal brace: fine to leave out
        return true;
      case '*': case '?': case '+': drop_atom(); end_run(); return true;
      case '(': ++depth_; end_run(); return true;
      case ')': --depth_; end_run(); return true;
      case '.': case '^': case '$': end_run(); return true;
      default:
        if (depth_ == 0) cur_ += c;
        return true;
    }
  }

  // Escaped punctuation (or a non-ASCII byte) is a literal; any other escape ends the run
  // and is skipped with its argument.
  bool escape() {
    if (i_ + 1 >= n_) {
      best_.clear();
      return false;
    }
    const char e = p_[++i_];
    const bool word = (e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') ||
                      (e >= 'A' && e <= 'Z') || e == '_';
    if (!word) {
      if (depth_ == 0) cur_ += e;
      return true;
    }
    end_run();
    return skip_escape_argument(e);
  }

  // `\x41`, `\x{41}`, `\pL`, `\p{Greek}`, `\uXXXX`, octal `\123`; `\Q…\E` is not read.
  bool skip_escape_argument(char e) {
    if (e == 'x' || e == 'p' || e == 'P' || e == 'N') {
      if (i_ + 1 < n_ && p_[i_ + 1] == '{') {
        const std::size_t close = p_.find('}', i_ + 1);
        if (close == std::string_view::npos) return false;
        i_ = close;
      } else if (e == 'x') {
        for (int k = 0; k < 2 && i_ + 1 < n_ && py_hex_digit(p_[i_ + 1]); ++k) ++i_;
      } else if (e != 'N') {
        ++i_;  // one-letter property name: \pL
        if (i_ < n_ && (static_cast<unsigned char>(p_[i_]) & 0x80) != 0) return false;
      }
    } else if (e == 'u' || e == 'U') {
      const int len = e == 'u' ? 4 : 8;
      for (int k = 0; k < len && i_ + 1 < n_ && py_hex_digit(p_[i_ + 1]); ++k) ++i_;
    } else if (e >= '0' && e <= '9') {
      for (int k = 0; k < 2 && i_ + 1 < n_ && p_[i_ + 1] >= '0' && p_[i_ + 1] <= '9'; ++k) ++i_;
    } else if (e == 'Q') {
      return false;  // quoted text up to \E: not worth reading
    }
    return true;
  }

  // Skips the class. A `[` inside (RE2's `[[:alpha:]]`) or `\Q` makes the end uncertain.
  bool skip_class() {
    std::size_t j = i_ + 1;
    if (j < n_ && p_[j] == '^') ++j;
    if (j < n_ && p_[j] == ']') ++j;
    while (j < n_ && p_[j] != ']') {
      if (p_[j] == '[' || (p_[j] == '\\' && j + 1 < n_ && p_[j + 1] == 'Q')) {
        end_run();
        return false;
      }
      if (p_[j] == '\\') ++j;
      ++j;
    }
    i_ = j;
    end_run();
    return true;
  }
};

// The longest run of literal bytes that every match of `pattern` (RE2 syntax, as given by
// python_to_re2) must contain, or "" when none is known. Used as a memmem prefilter: when
// the run is absent from the text there is no match, so it must be sound, never complete.
// Only the top-level concatenation is read: groups, classes, `.`, anchors and escapes other
// than escaped punctuation end a run; a repeated atom (`?`, `*`, `+`, `{m,n}`, including
// `{0}`) is dropped from its run and ends it; escapes with arguments (`\x41`, `\x{41}`,
// `\pL`, `\p{Greek}`, octal `\123`, `\Q…\E`) are skipped whole. Alternation and inline
// flags (`(?i)`) anywhere give "", and so does anything unexpected.
LITTLE_LOOPS_INLINE std::string required_literal(std::string_view pattern) {
                                                 return required_literal_reader(pattern).run();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — output_contains evaluator: RE2 regex or substring search, optionally negated
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#include <fmt/format.h>
#include <re2/re2.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

// The result of reading a Python `re` pattern for RE2: the RE2 pattern, and `error` (non-empty)
// when Python's `re.compile` rejects the pattern or the pattern uses something that cannot be
// translated; the matcher then falls back to a substring search, as seed 000 does on
// `re.error`. The text of `re2` is still filled in (best effort) after an error.
struct py_regex_translation {
  std::string re2;
  std::string error;
  /// `error` is about something Python accepts but RE2 cannot run (a backreference, `\N{…}`),
  /// not something Python rejects.
  bool unsupported = false;
};

inline bool py_hex_digit(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool py_ascii_letter(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool py_octal_digit(char c) noexcept { return c >= '0' && c <= '7'; }

// Translates a Python `re` pattern (Python 3.11, no flags argument, str pattern) to RE2
// syntax, or reports why it cannot (see py_regex_translation). What it does:
//
// - Escapes are checked as Python's sre_parse does. An ASCII letter Python does not know
//   (`\z`, `\pL`, `\Q`, `\e`, `\C`, …; inside a class also `\A`, `\B`, `\Z`), an incomplete
//   `\xHH`, `\uXXXX` or `\UXXXXXXXX`, a `\U` beyond U+10FFFF, an octal escape above \377, a
//   trailing `\` and a group reference (`\1`, `\12`: an error without that group, and a
//   backreference RE2 cannot run otherwise) are errors. `\Z` becomes `\z`, `\b` inside a
//   class becomes a backspace, and `\xHH`, `\uXXXX`, `\UXXXXXXXX` and octal escapes
//   (`\0`, `\012`, `\123`, `[\1]`) become `\x{…}`. An escaped non-letter is a literal (an
//   escaped non-ASCII character is written unescaped, which RE2 requires).
//   `\N{NAME}` is valid Python (a named character), but there is no name table here, so it
//   is reported as untranslatable: the pattern falls back to a substring search where
//   Python would search for the named character (a known difference).
// - A `[` or a leading `]` inside a class is escaped (`[[:alpha:]]` is Python's class
//   {`[`, `:`, `a`, `l`, `p`, `h`} followed by a literal `]`, not RE2's POSIX class).
// - Comments `(?#…)` are removed. Global flag groups (`(?i)`, `(?im)`) are errors unless
//   they come before anything else (Python 3.11: "global flags not at the start of the
//   expression"); `(?-i)`, `(?L)`, unknown flags and a flag turned both on and off are
//   errors. Extensions Python does not know (`(?U)`, `(?<name>…)`) are errors. `u` is
//   dropped (a str pattern is Unicode anyway); `a` (global or scoped) is dropped and makes
//   `\d`, `\w`, `\s` and their negations ASCII, as in Python (RE2's `\b` is ASCII in either
//   mode; under `(?ai)` RE2 still folds case by Unicode rules); `x` is passed on, so RE2
//   rejects it (substring fallback).
// - A repetition with the minimum omitted (`x{,n}`, `x{,}`, which Python reads as
//   `x{0,n}`, `x{0,}` and RE2 as literal text) gets an explicit 0. A repetition after
//   nothing, after `(`, `|` or an anchor (`^`, `$`, `\A`, `\Z`, `\b`, `\B`) is "nothing to
//   repeat", and one after another (other than the lazy `?` and possessive `+`) is "multiple
//   repeat", as in Python.
// - `$` outside multi-line mode: Python's `$` matches at the end and also before a newline
//   that ends the text; RE2's only at the end, and RE2 has no lookahead to say "before a
//   final newline". It becomes `(?:\n?\z)`, which consumes that final newline instead of
//   looking at it. Only the verdict is reported (never the matched span), and when nothing
//   after the `$` has to consume text the verdict is the same. `$\n` (a newline, not
//   repeated, right after it) becomes `\n\z` and `$\Z` becomes `\z\z`, which are exact.
//   Known differences, all for patterns that make little sense: text after `$` other than
//   `\n` that would have to match the final newline (`a$\s` and `a$[^x]` match "a\n" in
//   Python, not here), and `\b`, `\B`, `^`, `\A` right after a `$` that matched before a
//   final newline. Under `(?m)` (global or scoped) `$` is left alone: RE2's multi-line `$`
//   is Python's (before any newline, and at the end). `\Z` (RE2's `\z`) matches only at
//   the very end, as in Python. (This replaces a retry without the final newline, which
//   also let `\Z` match before it and broke `a$\n`.)
inline py_regex_translation translate_python_regex(std::string_view pattern) {
  py_regex_translation t;
  std::string& out = t.re2;
  out.reserve(pattern.size() + 8);
  const std::size_t n = pattern.size();
  const auto fail = [&](std::string what, std::size_t at) {
    if (t.error.empty()) t.error = fmt::format("{} at position {}", what, at);
  };
  const auto unsupported = [&](std::string what, std::size_t at) {
    if (!t.error.empty()) return;
    t.error = fmt::format("{} at position {}", what, at);
    t.unsupported = true;
  };
  const auto emit_code_point = [&](unsigned long cp) { out += fmt::format("\\x{{{:X}}}", cp); };
  // Reads `count` hex digits after `p[at]`; the value, or -1 when fewer are there.
  const auto hex_run = [&](std::size_t at, std::size_t count) -> std::int64_t {
    std::int64_t v = 0;
    for (std::size_t h = 1; h <= count; ++h) {
      const char d = at + h < n ? pattern[at + h] : '\0';
      if (!py_hex_digit(d)) return -1;
      v = v * 16 + (d <= '9' ? d - '0' : (d | 0x20) - 'a' + 10);
    }
    return v;
  };

  // Python's classes are Unicode (a str pattern): `\d` is \p{Nd}, `\w` is [\p{L}\p{N}_]
  // (exactly, in Unicode 14; RE2's tables are a later Unicode, which adds letters) and `\s`
  // is str.isspace(); RE2's own `\d`, `\w`, `\s` are ASCII. The members of `\s`:
  static constexpr std::string_view py_space =
      "\\t\\n\\x0B\\f\\r\\x1C-\\x1F \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
      "\\x{202F}\\x{205F}\\x{3000}";
  static constexpr std::string_view py_word = "\\p{L}\\p{N}_";
  // Under the ASCII flag `(?a)` they are ASCII, as RE2's, except that Python's `\s` also
  // has \v.
  static constexpr std::string_view ascii_space = "\\t\\n\\x0B\\f\\r ";
  bool ascii = false;  // (?a) in effect (global, or scoped `(?a:…)`)

  // Translates the escape at pattern[i] == '\\' (i + 1 < n) and returns the index of its
  // last character. `in_class`: inside `[...]`. Sets `anchor` for \A \Z \b \B.
  const auto escape = [&](std::size_t i, bool in_class, bool& anchor) -> std::size_t {
    anchor = false;
    const char e = pattern[i + 1];
    if (ascii && (e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S')) {
      const bool negated = e == 'D' || e == 'W' || e == 'S';
      const std::string_view members = e == 'd' || e == 'D'   ? std::string_view("0-9")
                                       : e == 'w' || e == 'W' ? std::string_view("0-9A-Za-z_")
                                                              : ascii_space;
      if (!in_class) {
        out += negated ? "[^" : "[";
        out += members;
        out += ']';
      } else if (!negated) {
        out += members;
      } else {
        // RE2's own ASCII \D, \W (exact) and \S (which keeps \v: a known difference).
        out += '\\';
        out += e;
      }
      return i + 1;
    }
    switch (e) {
      case 'd': out += "\\p{Nd}"; return i + 1;
      case 'D': out += "\\P{Nd}"; return i + 1;
      case 'w':
        if (!in_class) out += '[';
        out += py_word;
        if (!in_class) out += ']';
        return i + 1;
      case 's':
        if (in_class) {
          out += py_space;
        } else {
          out += '[';
          out += py_space;
          out += ']';
        }
        return i + 1;
      case 'W': case 'S':
        if (!in_class) {
          out += "[^";
          out += e == 'W' ? py_word : py_space;
          out += ']';
          return i + 1;
        }
        // Inside a class with other members a negated class is one side of a union, which
        // RE2 can only write with its ASCII `\W` / `\S` (a known difference for non-ASCII
        // letters and spaces; a class of `\W` or `\S` alone is translated exactly).
        out += '\\';
        out += e;
        return i + 1;
      case 'a': case 'f': case 'n': case 'r': case 't': case 'v':
        out += '\\';
        out += e;
        return i + 1;
      case 'b':
        if (in_class) {
          out += "\\x08";  // backspace, as in Python
          return i + 1;
        }
        [[fallthrough]];
      case 'A': case 'B': case 'Z':
        if (in_class) {
          fail(fmt::format("bad escape \\{}", e), i);
          return i + 1;
        }
        anchor = true;
        out += '\\';
        out += e == 'Z' ? 'z' : e;
        return i + 1;
      case 'x': case 'u': case 'U': {
        const std::size_t len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        const std::int64_t cp = hex_run(i + 1, len);
        if (cp < 0) {
          fail(fmt::format("incomplete escape \\{}", e), i);
          return i + 1;
        }
        if (cp > 0x10FFFF) fail("bad escape \\U", i);
        emit_code_point(static_cast<unsigned long>(cp));
        return i + 1 + len;
      }
      case 'N':
        // Valid Python when followed by {NAME}, but names cannot be resolved here.
        if (i + 2 < n && pattern[i + 2] == '{')
          unsupported("named character escapes \\N{...} are not supported", i);
        else
          fail("missing {", i + 2);
        out += "\\N";
        return i + 1;
      default: break;
    }
    if (e >= '0' && e <= '9') {
      // Octal: `\0` plus up to two octal digits; inside a class any octal digit starts one
      // (up to three digits); outside, `\1`–`\7` followed by two more octal digits. Any
      // other digit escape is a group reference (or "bad escape" inside a class).
      std::size_t len = 0;
      if (e == '0' || (in_class && py_octal_digit(e))) {
        len = 1;
        while (len < 3 && i + 1 + len < n && py_octal_digit(pattern[i + 1 + len])) ++len;
      } else if (!in_class && py_octal_digit(e) && i + 3 < n &&
                 py_octal_digit(pattern[i + 2]) && py_octal_digit(pattern[i + 3])) {
        len = 3;
      }
      if (len == 0) {
        if (in_class)
          fail(fmt::format("bad escape \\{}", e), i);
        else
          unsupported("group references (backreferences) are not supported", i);
        out += '\\';
        out += e;
        return i + 1;
      }
      unsigned long cp = 0;
      for (std::size_t k = 0; k < len; ++k)
        cp = cp * 8 + static_cast<unsigned long>(pattern[i + 1 + k] - '0');
      if (cp > 0377) fail("octal escape value outside of range 0-0o377", i);
      emit_code_point(cp);
      return i + len;
    }
    if (py_ascii_letter(e)) {
      fail(fmt::format("bad escape \\{}", e), i);
      out += '\\';
      out += e;
      return i + 1;
    }
    // Any other character is itself. RE2 takes escaped ASCII punctuation and whitespace,
    // but not an escaped non-ASCII character, which needs no escape.
    if (static_cast<unsigned char>(e) < 0x80) out += '\\';
    out += e;
    return i + 1;
  };

  std::vector<bool> multiline_stack;  // multi-line mode outside each open group
  std::vector<bool> ascii_stack;      // ASCII mode outside each open group
  bool multiline = false;             // (?m) in effect
  bool flags_allowed = true;          // nothing but global flags and comments so far
  // What the previous token was, for repetitions: an atom (can be repeated), a repetition
  // (takes a lazy `?` or possessive `+`), or neither (start, `(`, `|`, an anchor).
  enum class prev_kind { none, atom, repeat } prev = prev_kind::none;

  for (std::size_t i = 0; i < n; ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      flags_allowed = false;
      if (i + 1 >= n) {
        fail("bad escape (end of pattern)", i);
        out += c;
        continue;
      }
      bool anchor = false;
      i = escape(i, false, anchor);
      prev = anchor ? prev_kind::none : prev_kind::atom;
      continue;
    }
    if (c == '[') {
      flags_allowed = false;
      const std::size_t len = py_class_length(pattern.substr(i));
      if (len == 0) {
        fail("unterminated character set", i);
        out += pattern.substr(i);
        break;
      }
      const std::size_t end = i + len - 1;  // the closing `]`
      const bool negated = pattern[i + 1] == '^';
      const std::size_t body = i + 1 + (negated ? 1 : 0);
      if (end == body + 2 && pattern[body] == '\\' && (pattern[body + 1] == 'W' || pattern[body + 1] == 'S')) {
        // `[\W]`, `[^\S]`…: one negated class, written as the complement of its members.
        out += negated ? "[" : "[^";
        if (ascii)
          out += pattern[body + 1] == 'W' ? std::string_view("0-9A-Za-z_") : ascii_space;
        else
          out += pattern[body + 1] == 'W' ? py_word : py_space;
        out += ']';
        i = end;
        prev = prev_kind::atom;
        continue;
      }
      out += '[';
      std::size_t k = i + 1;
      if (pattern[k] == '^') out += pattern[k++];
      if (pattern[k] == ']') {
        out += "\\]";
        ++k;
      }
      // Ranges: Python accepts only single characters as their ends (`[\d-z]` is "bad
      // character range"; RE2 would read it as a union with `-`). `item` is the member before
      // an unescaped `-` that can start a range.
      bool have_item = pattern[i + 1 + (negated ? 1 : 0)] == ']';  // a leading `]` member
      bool item_is_set = false;
      bool range_open = false;
      std::size_t item_at = body, item_len = have_item ? 1 : 0;
      for (; k < end; ++k) {
        const std::size_t at = k;
        bool is_set = false;
        if (pattern[k] == '\\') {
          is_set = pattern[k + 1] != '\0' && std::strchr("dDwWsS", pattern[k + 1]) != nullptr;
          bool anchor = false;
          k = escape(k, true, anchor);
        } else if (pattern[k] == '-' && have_item && !range_open && k + 1 < end) {
          range_open = true;
          out += '-';
          continue;
        } else if (pattern[k] == '[') {
          out += "\\[";
        } else {
          out += pattern[k];
        }
        if (range_open) {
          if (item_is_set || is_set)
            fail(fmt::format("bad character range {}-{}", pattern.substr(item_at, item_len),
                             pattern.substr(at, k - at + 1)),
                 item_at);
          range_open = false;
          have_item = false;
        } else {
          have_item = true;
          item_is_set = is_set;
          item_at = at;
          item_len = k - at + 1;
        }
      }
      out += ']';
      i = end;
      prev = prev_kind::atom;
      continue;
    }
    if (c == '(' && i + 2 < n && pattern[i + 1] == '?' && pattern[i + 2] == '#') {
      // A comment: dropped. An escape inside is one token, so `\)` does not end it.
      std::size_t k = i + 3;
      while (k < n && pattern[k] != ')') k += pattern[k] == '\\' ? 2 : 1;
      if (k >= n) {
        fail("missing ), unterminated comment", i);
        break;
      }
      i = k;
      continue;  // `prev` and `flags_allowed` unchanged: a comment is not an item
    }
    if (c == '(') {
      std::size_t k = i + 1;
      if (k < n && pattern[k] == '?') {
        ++k;
        const auto is_flag = [&](char f) { return f != '\0' && std::strchr("aiLmsux", f) != nullptr; };
        if (k < n && (is_flag(pattern[k]) || pattern[k] == '-')) {
          // Inline flags: `(?flags)` (global) or `(?flags-flags:...)` (scoped).
          std::string on, off;
          while (k < n && is_flag(pattern[k])) on += pattern[k++];
          const bool minus = k < n && pattern[k] == '-';
          if (minus) {
            ++k;
            while (k < n && is_flag(pattern[k])) off += pattern[k++];
          }
          // `u` (Unicode matching) is what a str pattern does anyway, and `a` (ASCII
          // classes) is done here by the class translations: both dropped for RE2.
          std::string kept_on;
          for (char f : on)
            if (f != 'u' && f != 'a') kept_on += f;
          if (k >= n || (pattern[k] != ')' && pattern[k] != ':')) {
            fail("unknown flag", k);
          } else if (on.find('L') != std::string::npos) {
            fail("bad inline flags: cannot use 'L' flag with a str pattern", k);
          } else if (on.find('a') != std::string::npos && on.find('u') != std::string::npos) {
            fail("bad inline flags: flags 'a', 'u' and 'L' are incompatible", k);
          } else if (off.find_first_of("auL") != std::string::npos) {
            fail("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", k);
          } else if (pattern[k] == ')') {
            if (minus) fail("missing :", k);
            if (!flags_allowed) fail("global flags not at the start of the expression", i);
            if (on.find('m') != std::string::npos) multiline = true;
            if (on.find('a') != std::string::npos) ascii = true;
            if (!kept_on.empty()) {
              out += "(?";
              out += kept_on;
              out += ')';
            }
            i = k;
            continue;  // not an item: `prev` and `flags_allowed` unchanged
          } else {
            for (char f : off)
              if (on.find(f) != std::string::npos)
                fail("bad inline flags: flag turned on and off", k);
            if (minus && off.empty()) fail("missing flag", k);
            multiline_stack.push_back(multiline);
            ascii_stack.push_back(ascii);
            if (on.find('m') != std::string::npos) multiline = true;
            if (off.find('m') != std::string::npos) multiline = false;
            if (on.find('a') != std::string::npos) ascii = true;
            out += "(?";
            out += kept_on;
            if (minus) {
              out += '-';
              out += off;
            }
            out += ':';
            i = k;
            flags_allowed = false;
            prev = prev_kind::none;
            continue;
          }
        }
        // Python 3.11 also knows (?: (?= (?! (?> (?<= (?<! (?P<name> (?P=name) (?(…);
        // they are passed on (RE2 rejects all but (?: and (?P<name>). Anything else, such
        // as RE2's (?<name>…), is an error in Python.
        std::size_t intro = 0;  // length of the introducer after `(?`
        if (k < n && (pattern[k] == ':' || pattern[k] == '=' || pattern[k] == '!' ||
                      pattern[k] == '>' || pattern[k] == '('))
          intro = 1;
        else if (k + 1 < n && pattern[k] == '<' && (pattern[k + 1] == '=' || pattern[k + 1] == '!'))
          intro = 2;
        else if (k + 1 < n && pattern[k] == 'P' && (pattern[k + 1] == '<' || pattern[k + 1] == '='))
          intro = 2;
        if (intro == 0) {
          fail(fmt::format("unknown extension ?{}", k < n ? std::string(1, pattern[k]) : ""),
               i + 1);
        } else if (pattern[k] == '(' || (pattern[k] == 'P' && pattern[k + 1] == '=')) {
          unsupported("backreferences and conditional groups are not supported", i);
        }
        out += pattern.substr(i, 2 + intro);
        i = k + intro - 1;
      } else {
        out += c;
      }
      multiline_stack.push_back(multiline);
      ascii_stack.push_back(ascii);
      flags_allowed = false;
      prev = prev_kind::none;
      continue;
    }
    if (c == ')') {
      if (multiline_stack.empty()) {
        fail("unbalanced parenthesis", i);
      } else {
        multiline = multiline_stack.back();
        multiline_stack.pop_back();
        ascii = ascii_stack.back();
        ascii_stack.pop_back();
      }
      out += c;
      flags_allowed = false;
      prev = prev_kind::atom;
      continue;
    }
    if (c == '$' && !multiline) {
      flags_allowed = false;
      prev = prev_kind::none;
      // `$\n` with the newline not repeated: the newline that ends the text.
      std::size_t nl = 0;
      if (i + 1 < n && pattern[i + 1] == '\n') nl = 1;
      if (i + 2 < n && pattern[i + 1] == '\\' && pattern[i + 2] == 'n') nl = 2;
      if (nl != 0) {
        const std::size_t after = i + 1 + nl;
        const bool repeated =
            after < n && (pattern[after] == '*' || pattern[after] == '+' ||
                          pattern[after] == '?' ||
                          (pattern[after] == '{' && py_repeat_length(pattern.substr(after))));
        if (!repeated) {
          out += "\\n\\z";
          i = after - 1;
          continue;
        }
      }
      // `$\Z`: the end itself (`\Z` fails before the final newline).
      if (i + 2 < n && pattern[i + 1] == '\\' && pattern[i + 2] == 'Z') {
        out += "\\z";
        continue;
      }
      out += "(?:\\n?\\z)";
      continue;
    }
    const bool brace_repeat = c == '{' && py_repeat_length(pattern.substr(i)) != 0;
    if (c == '*' || c == '+' || c == '?' || brace_repeat) {
      flags_allowed = false;
      if (prev == prev_kind::repeat && (c == '?' || c == '+')) {
        out += c;  // lazy (or possessive, which RE2 rejects) modifier
        prev = prev_kind::none;
        continue;
      }
      if (prev != prev_kind::atom)
        fail(prev == prev_kind::repeat ? "multiple repeat" : "nothing to repeat", i);
      if (brace_repeat) {
        bool min_empty = false;
        const std::size_t len = py_repeat_length(pattern.substr(i), &min_empty);
        out += '{';
        if (min_empty && prev == prev_kind::atom) out += '0';
        // Counts are numbers to Python (`{01}` is `{1}`); RE2 reads a leading zero as text,
        // so each count is written without its leading zeros.
        const std::string_view counts = pattern.substr(i + 1, len - 2);  // between the braces
        std::size_t from = 0;
        while (from <= counts.size()) {
          const std::size_t comma = std::min(counts.find(',', from), counts.size());
          std::string_view number = counts.substr(from, comma - from);
          if (!number.empty()) {
            const std::size_t first = number.find_first_not_of('0');
            number = first == std::string_view::npos ? std::string_view("0") : number.substr(first);
          }
          out += number;
          if (comma == counts.size()) break;
          out += ',';
          from = comma + 1;
        }
        out += '}';
        i += len - 1;
      } else {
        out += c;
      }
      prev = prev_kind::repeat;
      continue;
    }
    out += c;
    flags_allowed = false;
    // `|` and the anchors `^` and (multi-line) `$` cannot be repeated; anything else is an
    // atom, including a brace that is not a repetition (literal text).
    prev = (c == '|' || c == '^' || c == '$') ? prev_kind::none : prev_kind::atom;
  }
  if (t.error.empty() && !multiline_stack.empty()) fail("missing ), unterminated subpattern", n);
  return t;
}

// The RE2 text of translate_python_regex() (without its verdict on validity).
inline std::string python_to_re2(std::string_view pattern) {
  return translate_python_regex(pattern).re2;
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
  if (pattern.find('|') != std::string_view::npos) return {};
  // Non-capturing groups `(?:` (python_to_re2 writes `$` as `(?:\n?\z)`) are groups like
  // any other; any other `(?` (flags, named groups) gives "".
  for (std::size_t at = pattern.find("(?"); at != std::string_view::npos;
       at = pattern.find("(?", at + 2))
    if (at + 2 >= pattern.size() || pattern[at + 2] != ':') return {};
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

  explicit pattern_matcher(std::string pattern) : pattern_(std::move(pattern)) {
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

  /// True when the pattern occurs in `text` (Python `re.search` semantics as far as RE2
  /// allows; `$` also matches before a final newline, as in Python: see
  /// detail::translate_python_regex).
  [[nodiscard]] bool search(std::string_view text) const {
    switch (mode_) {
      case mode::literal:
      case mode::substring_fallback: return detail::contains_substring(text, pattern_);
      case mode::regex:
        if (!required_.empty() && !detail::contains_substring(text, required_)) return false;
        return RE2::PartialMatch(text, *re_);
    }
    return false;
  }

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
  std::shared_ptr<const RE2> re_;
  std::string regex_error_;
  bool python_rejects_ = false;
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

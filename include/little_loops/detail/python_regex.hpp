// little_loops — Python `re` patterns read for RE2: the translator and its syntax helpers
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

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

inline bool py_hex_digit(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool py_ascii_letter(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool py_octal_digit(char c) noexcept { return c >= '0' && c <= '7'; }

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

LITTLE_LOOPS_INLINE py_regex_translation translate_python_regex(std::string_view pattern);
LITTLE_LOOPS_INLINE std::string python_to_re2(std::string_view pattern);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Python's classes are Unicode (a str pattern): `\d` is \p{Nd}, `\w` is [\p{L}\p{N}_]
// (exactly, in Unicode 14; RE2's tables are a later Unicode, which adds letters) and `\s`
// is str.isspace(); RE2's own `\d`, `\w`, `\s` are ASCII. The members of `\s`:
inline constexpr std::string_view py_space_members =
    "\\t\\n\\x0B\\f\\r\\x1C-\\x1F \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";
inline constexpr std::string_view py_word_members = "\\p{L}\\p{N}_";
// Under the ASCII flag `(?a)` they are ASCII, as RE2's, except that Python's `\s` also
// has \v.
inline constexpr std::string_view py_ascii_space_members = "\\t\\n\\x0B\\f\\r ";
inline constexpr std::string_view py_ascii_word_members = "0-9A-Za-z_";

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
//   the very end, as in Python.
//
// One pass over the pattern: each construct has its reader, which writes its RE2 text to
// `out_`, leaves `i_` on the construct's last character and keeps the state that the
// constructs after it depend on (the modes in effect, what a repetition would apply to).
class py_regex_translator {
 public:
  explicit py_regex_translator(std::string_view pattern) : p_(pattern), n_(pattern.size()) {}

  py_regex_translation run() && {
    out_.reserve(n_ + 8);
    for (i_ = 0; i_ < n_; ++i_)
      if (!token()) break;
    if (t_.error.empty() && !multiline_stack_.empty())
      fail("missing ), unterminated subpattern", n_);
    t_.re2 = std::move(out_);
    return std::move(t_);
  }

 private:
  // What the previous token was, for repetitions: an atom (can be repeated), a repetition
  // (takes a lazy `?` or possessive `+`), or neither (start, `(`, `|`, an anchor).
  enum class prev_kind { none, atom, repeat };

  std::string_view p_;
  std::size_t n_;
  std::size_t i_ = 0;
  py_regex_translation t_;  // its `re2` is filled from `out_` at the end
  std::string out_;
  bool ascii_ = false;                  // (?a) in effect (global, or scoped `(?a:…)`)
  bool multiline_ = false;              // (?m) in effect
  bool flags_allowed_ = true;           // nothing but global flags and comments so far
  std::vector<bool> multiline_stack_;   // multi-line mode outside each open group
  std::vector<bool> ascii_stack_;       // ASCII mode outside each open group
  prev_kind prev_ = prev_kind::none;

  char at(std::size_t k) const noexcept { return k < n_ ? p_[k] : '\0'; }

  // The first error wins.
  void fail(std::string_view what, std::size_t at) {
    if (t_.error.empty()) t_.error = fmt::format("{} at position {}", what, at);
  }
  void unsupported(std::string_view what, std::size_t at) {
    if (!t_.error.empty()) return;
    t_.error = fmt::format("{} at position {}", what, at);
    t_.unsupported = true;
  }
  void emit_code_point(unsigned long cp) { out_ += fmt::format("\\x{{{:X}}}", cp); }

  // Reads `count` hex digits after `p_[from]`; the value, or -1 when fewer are there.
  std::int64_t hex_run(std::size_t from, std::size_t count) const noexcept {
    std::int64_t v = 0;
    for (std::size_t h = 1; h <= count; ++h) {
      const char d = at(from + h);
      if (!py_hex_digit(d)) return -1;
      v = v * 16 + (d <= '9' ? d - '0' : (d | 0x20) - 'a' + 10);
    }
    return v;
  }

  // One token at `i_`; false when the rest of the pattern cannot be read.
  bool token() {
    const char c = p_[i_];
    if (c == '\\') return top_level_escape();
    if (c == '[') return char_class();
    if (c == '(' && at(i_ + 1) == '?' && at(i_ + 2) == '#') return comment();
    if (c == '(') return open_group();
    if (c == ')') return close_group();
    if (c == '$' && !multiline_) return dollar();
    if (c == '*' || c == '+' || c == '?' || (c == '{' && py_repeat_length(p_.substr(i_)) != 0))
      return repetition();
    out_ += c;
    flags_allowed_ = false;
    // `|` and the anchors `^` and (multi-line) `$` cannot be repeated; anything else is an
    // atom, including a brace that is not a repetition (literal text).
    prev_ = (c == '|' || c == '^' || c == '$') ? prev_kind::none : prev_kind::atom;
    return true;
  }

  // --- Escapes ----------------------------------------------------------------------------

  bool top_level_escape() {
    flags_allowed_ = false;
    if (i_ + 1 >= n_) {
      fail("bad escape (end of pattern)", i_);
      out_ += '\\';
      return true;
    }
    bool anchor = false;
    i_ = escape(i_, false, anchor);
    prev_ = anchor ? prev_kind::none : prev_kind::atom;
    return true;
  }

  // Translates the escape at p_[i] == '\\' (i + 1 < n_) and returns the index of its last
  // character. `in_class`: inside `[...]`. Sets `anchor` for \A \Z \b \B.
  std::size_t escape(std::size_t i, bool in_class, bool& anchor) {
    anchor = false;
    const char e = p_[i + 1];
    const bool set = e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S';
    if (set && ascii_) {
      ascii_set_escape(e, in_class);
      return i + 1;
    }
    if (set) {
      unicode_set_escape(e, in_class);
      return i + 1;
    }
    switch (e) {
      case 'a': case 'f': case 'n': case 'r': case 't': case 'v':
        out_ += '\\';
        out_ += e;
        return i + 1;
      case 'b': case 'A': case 'B': case 'Z': anchor = anchor_escape(i, e, in_class); return i + 1;
      case 'x': case 'u': case 'U': return hex_escape(i, e);
      case 'N': named_escape(i); return i + 1;
      default: break;
    }
    if (e >= '0' && e <= '9') return digit_escape(i, e, in_class);
    if (py_ascii_letter(e)) fail(fmt::format("bad escape \\{}", e), i);
    // Any other character is itself. RE2 takes escaped ASCII punctuation and whitespace,
    // but not an escaped non-ASCII character, which needs no escape.
    if (static_cast<unsigned char>(e) < 0x80) out_ += '\\';
    out_ += e;
    return i + 1;
  }

  // `\d \D \w \W \s \S` under `(?a)`.
  void ascii_set_escape(char e, bool in_class) {
    const bool negated = e == 'D' || e == 'W' || e == 'S';
    const std::string_view members = e == 'd' || e == 'D'   ? std::string_view("0-9")
                                     : e == 'w' || e == 'W' ? py_ascii_word_members
                                                            : py_ascii_space_members;
    if (!in_class) {
      out_ += negated ? "[^" : "[";
      out_ += members;
      out_ += ']';
    } else if (!negated) {
      out_ += members;
    } else {
      // RE2's own ASCII \D, \W (exact) and \S (which keeps \v: a known difference).
      out_ += '\\';
      out_ += e;
    }
  }

  // `\d \D \w \W \s \S` as Python's Unicode classes.
  void unicode_set_escape(char e, bool in_class) {
    if (e == 'd' || e == 'D') {
      out_ += e == 'd' ? "\\p{Nd}" : "\\P{Nd}";
      return;
    }
    const std::string_view members = e == 'w' || e == 'W' ? py_word_members : py_space_members;
    if (e == 'w' || e == 's') {
      if (!in_class) out_ += '[';
      out_ += members;
      if (!in_class) out_ += ']';
    } else if (!in_class) {
      out_ += "[^";
      out_ += members;
      out_ += ']';
    } else {
      // Inside a class with other members a negated class is one side of a union, which
      // RE2 can only write with its ASCII `\W` / `\S` (a known difference for non-ASCII
      // letters and spaces; a class of `\W` or `\S` alone is translated exactly).
      out_ += '\\';
      out_ += e;
    }
  }

  // `\b \A \B \Z`: anchors (true), except `\b` inside a class, a backspace.
  bool anchor_escape(std::size_t i, char e, bool in_class) {
    if (!in_class) {
      out_ += '\\';
      out_ += e == 'Z' ? 'z' : e;
      return true;
    }
    if (e == 'b')
      out_ += "\\x08";  // backspace, as in Python
    else
      fail(fmt::format("bad escape \\{}", e), i);
    return false;
  }

  // `\xHH \uXXXX \UXXXXXXXX`; the index of the last character read.
  std::size_t hex_escape(std::size_t i, char e) {
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

  // `\N{NAME}`: valid Python, but names cannot be resolved here.
  void named_escape(std::size_t i) {
    if (at(i + 2) == '{')
      unsupported("named character escapes \\N{...} are not supported", i);
    else
      fail("missing {", i + 2);
    out_ += "\\N";
  }

  // Octal: `\0` plus up to two octal digits; inside a class any octal digit starts one (up
  // to three digits); outside, `\1`–`\7` followed by two more octal digits. Any other digit
  // escape is a group reference (or "bad escape" inside a class).
  std::size_t digit_escape(std::size_t i, char e, bool in_class) {
    std::size_t len = 0;
    if (e == '0' || (in_class && py_octal_digit(e))) {
      len = 1;
      while (len < 3 && i + 1 + len < n_ && py_octal_digit(p_[i + 1 + len])) ++len;
    } else if (!in_class && py_octal_digit(e) && i + 3 < n_ && py_octal_digit(p_[i + 2]) &&
               py_octal_digit(p_[i + 3])) {
      len = 3;
    }
    if (len == 0) {
      if (in_class)
        fail(fmt::format("bad escape \\{}", e), i);
      else
        unsupported("group references (backreferences) are not supported", i);
      out_ += '\\';
      out_ += e;
      return i + 1;
    }
    unsigned long cp = 0;
    for (std::size_t k = 0; k < len; ++k)
      cp = cp * 8 + static_cast<unsigned long>(p_[i + 1 + k] - '0');
    if (cp > 0377) fail("octal escape value outside of range 0-0o377", i);
    emit_code_point(cp);
    return i + len;
  }

  // --- Character classes ------------------------------------------------------------------

  bool char_class() {
    flags_allowed_ = false;
    const std::size_t len = py_class_length(p_.substr(i_));
    if (len == 0) {
      fail("unterminated character set", i_);
      out_ += p_.substr(i_);
      return false;
    }
    const std::size_t end = i_ + len - 1;  // the closing `]`
    const bool negated = p_[i_ + 1] == '^';
    const std::size_t body = i_ + 1 + (negated ? 1 : 0);
    const bool lone_negated_set =
        end == body + 2 && p_[body] == '\\' && (p_[body + 1] == 'W' || p_[body + 1] == 'S');
    if (lone_negated_set)
      complement_class(negated, p_[body + 1]);
    else
      class_members(negated, body, end);
    i_ = end;
    prev_ = prev_kind::atom;
    return true;
  }

  // `[\W]`, `[^\S]`…: one negated class, written as the complement of its members.
  void complement_class(bool negated, char e) {
    out_ += negated ? "[" : "[^";
    if (ascii_)
      out_ += e == 'W' ? py_ascii_word_members : py_ascii_space_members;
    else
      out_ += e == 'W' ? py_word_members : py_space_members;
    out_ += ']';
  }

  // The class `[` … `]` with its members from `body` to `end` (the closing `]`).
  // Ranges: Python accepts only single characters as their ends (`[\d-z]` is "bad character
  // range"; RE2 would read it as a union with `-`). `item` is the member before an
  // unescaped `-` that can start a range.
  void class_members(bool negated, std::size_t body, std::size_t end) {
    out_ += '[';
    if (negated) out_ += '^';
    std::size_t k = body;
    bool have_item = p_[k] == ']';  // a leading `]` member
    if (have_item) {
      out_ += "\\]";
      ++k;
    }
    bool item_is_set = false;
    bool range_open = false;
    std::size_t item_at = body, item_len = have_item ? 1 : 0;
    for (; k < end; ++k) {
      const std::size_t from = k;
      bool is_set = false;
      if (p_[k] == '\\') {
        is_set = p_[k + 1] != '\0' && std::strchr("dDwWsS", p_[k + 1]) != nullptr;
        bool anchor = false;
        k = escape(k, true, anchor);
      } else if (p_[k] == '-' && have_item && !range_open && k + 1 < end) {
        range_open = true;
        out_ += '-';
        continue;
      } else {
        if (p_[k] == '[') out_ += '\\';
        out_ += p_[k];
      }
      if (range_open) {
        if (item_is_set || is_set)
          fail(fmt::format("bad character range {}-{}", p_.substr(item_at, item_len),
                           p_.substr(from, k - from + 1)),
               item_at);
        range_open = false;
        have_item = false;
      } else {
        have_item = true;
        item_is_set = is_set;
        item_at = from;
        item_len = k - from + 1;
      }
    }
    out_ += ']';
  }

  // --- Groups and flags -------------------------------------------------------------------

  // A comment `(?#…)`: dropped. An escape inside is one token, so `\)` does not end it.
  // `prev_` and `flags_allowed_` stay: a comment is not an item.
  bool comment() {
    std::size_t k = i_ + 3;
    while (k < n_ && p_[k] != ')') k += p_[k] == '\\' ? 2 : 1;
    if (k >= n_) {
      fail("missing ), unterminated comment", i_);
      return false;
    }
    i_ = k;
    return true;
  }

  static bool is_flag(char f) noexcept { return f != '\0' && std::strchr("aiLmsux", f) != nullptr; }

  bool open_group() {
    if (at(i_ + 1) == '?' && (is_flag(at(i_ + 2)) || at(i_ + 2) == '-')) return inline_flags();
    if (at(i_ + 1) == '?')
      extension(i_ + 2);
    else
      out_ += '(';
    push_modes();
    flags_allowed_ = false;
    prev_ = prev_kind::none;
    return true;
  }

  void push_modes() {
    multiline_stack_.push_back(multiline_);
    ascii_stack_.push_back(ascii_);
  }

  // Python 3.11 also knows (?: (?= (?! (?> (?<= (?<! (?P<name> (?P=name) (?(…); they are
  // passed on (RE2 rejects all but (?: and (?P<name>). Anything else, such as RE2's
  // (?<name>…), is an error in Python. `k`: the introducer (right after `(?`, or after the
  // flags of a flag group in error, whose `(?` is then passed on as it is).
  void extension(std::size_t k) {
    const char a = at(k), b = at(k + 1);
    std::size_t intro = 0;  // length of the introducer after `(?`
    if (k < n_ && (a == ':' || a == '=' || a == '!' || a == '>' || a == '('))
      intro = 1;
    else if (k + 1 < n_ && a == '<' && (b == '=' || b == '!'))
      intro = 2;
    else if (k + 1 < n_ && a == 'P' && (b == '<' || b == '='))
      intro = 2;
    if (intro == 0)
      fail(fmt::format("unknown extension ?{}", k < n_ ? std::string(1, a) : ""), i_ + 1);
    else if (a == '(' || (a == 'P' && b == '='))
      unsupported("backreferences and conditional groups are not supported", i_);
    out_ += p_.substr(i_, 2 + intro);
    i_ = k + intro - 1;
  }

  // Inline flags: `(?flags)` (global) or `(?flags-flags:...)` (scoped).
  bool inline_flags() {
    std::size_t k = i_ + 2;
    std::string on, off;
    while (k < n_ && is_flag(p_[k])) on += p_[k++];
    const bool minus = k < n_ && p_[k] == '-';
    if (minus) {
      ++k;
      while (k < n_ && is_flag(p_[k])) off += p_[k++];
    }
    if (k >= n_ || (p_[k] != ')' && p_[k] != ':')) {
      fail("unknown flag", k);
    } else if (on.find('L') != std::string::npos) {
      fail("bad inline flags: cannot use 'L' flag with a str pattern", k);
    } else if (on.find('a') != std::string::npos && on.find('u') != std::string::npos) {
      fail("bad inline flags: flags 'a', 'u' and 'L' are incompatible", k);
    } else if (off.find_first_of("auL") != std::string::npos) {
      fail("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", k);
    } else if (p_[k] == ')') {
      global_flags(on, minus, k);
      return true;
    } else {
      scoped_flags(on, off, minus, k);
      return true;
    }
    // An error: the group is passed on as an extension would be.
    extension(k);
    push_modes();
    flags_allowed_ = false;
    prev_ = prev_kind::none;
    return true;
  }

  // `u` (Unicode matching) is what a str pattern does anyway, and `a` (ASCII classes) is
  // done here by the class translations: both dropped for RE2.
  static std::string flags_for_re2(std::string_view on) {
    std::string kept;
    for (char f : on)
      if (f != 'u' && f != 'a') kept += f;
    return kept;
  }

  // `(?flags)` ending at `close`: not an item, so `prev_` and `flags_allowed_` stay.
  void global_flags(std::string_view on, bool minus, std::size_t close) {
    if (minus) fail("missing :", close);
    if (!flags_allowed_) fail("global flags not at the start of the expression", i_);
    if (on.find('m') != std::string_view::npos) multiline_ = true;
    if (on.find('a') != std::string_view::npos) ascii_ = true;
    const std::string kept = flags_for_re2(on);
    if (!kept.empty()) {
      out_ += "(?";
      out_ += kept;
      out_ += ')';
    }
    i_ = close;
  }

  // `(?on-off:` ending at the colon `colon`.
  void scoped_flags(std::string_view on, std::string_view off, bool minus, std::size_t colon) {
    for (char f : off)
      if (on.find(f) != std::string_view::npos) fail("bad inline flags: flag turned on and off", colon);
    if (minus && off.empty()) fail("missing flag", colon);
    push_modes();
    if (on.find('m') != std::string_view::npos) multiline_ = true;
    if (off.find('m') != std::string_view::npos) multiline_ = false;
    if (on.find('a') != std::string_view::npos) ascii_ = true;
    out_ += "(?";
    out_ += flags_for_re2(on);
    if (minus) {
      out_ += '-';
      out_ += off;
    }
    out_ += ':';
    i_ = colon;
    flags_allowed_ = false;
    prev_ = prev_kind::none;
  }

  bool close_group() {
    if (multiline_stack_.empty()) {
      fail("unbalanced parenthesis", i_);
    } else {
      multiline_ = multiline_stack_.back();
      multiline_stack_.pop_back();
      ascii_ = ascii_stack_.back();
      ascii_stack_.pop_back();
    }
    out_ += ')';
    flags_allowed_ = false;
    prev_ = prev_kind::atom;
    return true;
  }

  // --- Anchors and repetitions ------------------------------------------------------------

  // `$` outside multi-line mode (see translate_python_regex).
  bool dollar() {
    flags_allowed_ = false;
    prev_ = prev_kind::none;
    // `$\n` with the newline not repeated: the newline that ends the text.
    std::size_t nl = 0;
    if (at(i_ + 1) == '\n' && i_ + 1 < n_) nl = 1;
    if (i_ + 2 < n_ && p_[i_ + 1] == '\\' && p_[i_ + 2] == 'n') nl = 2;
    if (nl != 0) {
      const std::size_t after = i_ + 1 + nl;
      const char a = at(after);
      const bool repeated = after < n_ && (a == '*' || a == '+' || a == '?' ||
                                           (a == '{' && py_repeat_length(p_.substr(after))));
      if (!repeated) {
        out_ += "\\n\\z";
        i_ = after - 1;
        return true;
      }
    }
    // `$\Z`: the end itself (`\Z` fails before the final newline).
    if (i_ + 2 < n_ && p_[i_ + 1] == '\\' && p_[i_ + 2] == 'Z')
      out_ += "\\z";
    else
      out_ += "(?:\\n?\\z)";
    return true;
  }

  // `*`, `+`, `?` or a counted repetition `{…}`.
  bool repetition() {
    const char c = p_[i_];
    flags_allowed_ = false;
    if (prev_ == prev_kind::repeat && (c == '?' || c == '+')) {
      out_ += c;  // lazy (or possessive, which RE2 rejects) modifier
      prev_ = prev_kind::none;
      return true;
    }
    if (prev_ != prev_kind::atom)
      fail(prev_ == prev_kind::repeat ? "multiple repeat" : "nothing to repeat", i_);
    if (c == '{')
      counted_repetition();
    else
      out_ += c;
    prev_ = prev_kind::repeat;
    return true;
  }

  // `{m,n}` and its short forms. Counts are numbers to Python (`{01}` is `{1}`); RE2 reads a
  // leading zero as text, so each count is written without its leading zeros, and an
  // omitted minimum after an atom as 0.
  void counted_repetition() {
    bool min_empty = false;
    const std::size_t len = py_repeat_length(p_.substr(i_), &min_empty);
    out_ += '{';
    if (min_empty && prev_ == prev_kind::atom) out_ += '0';
    const std::string_view counts = p_.substr(i_ + 1, len - 2);  // between the braces
    std::size_t from = 0;
    while (from <= counts.size()) {
      const std::size_t comma = std::min(counts.find(',', from), counts.size());
      std::string_view number = counts.substr(from, comma - from);
      if (!number.empty()) {
        const std::size_t first = number.find_first_not_of('0');
        number = first == std::string_view::npos ? std::string_view("0") : number.substr(first);
      }
      out_ += number;
      if (comma == counts.size()) break;
      out_ += ',';
      from = comma + 1;
    }
    out_ += '}';
    i_ += len - 1;
  }
};

// See py_regex_translator.
LITTLE_LOOPS_INLINE py_regex_translation translate_python_regex(std::string_view pattern) {
  return py_regex_translator(pattern).run();
}

// The RE2 text of translate_python_regex() (without its verdict on validity).
LITTLE_LOOPS_INLINE std::string python_to_re2(std::string_view pattern) {
  return translate_python_regex(pattern).re2;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

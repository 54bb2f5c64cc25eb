// little_loops — ll-loop: a small command-line parser with per-verb help
// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ll_loop {

/// One `--long` / `-s` option of a verb.
struct option_spec {
  std::string_view long_name;      ///< without the dashes, e.g. "max-iterations"
  char short_name = 0;             ///< 0: none
  std::string_view value_name;     ///< empty: a flag; else the placeholder shown in help
  std::string_view help;
  bool repeatable = false;         ///< may be given several times (values accumulate)
  std::vector<std::string_view> choices;  ///< allowed values (empty: any)
};

/// A verb: its positional arguments and options.
struct verb_spec {
  std::string_view name;
  std::string_view summary;                 ///< one line, for the global help
  std::vector<std::string_view> positionals;  ///< e.g. {"LOOP"}; "[NAME]" marks optional
  std::vector<option_spec> options;
  std::string_view details;                 ///< extra help text (may be empty)
};

/// The parsed command line of one verb.
struct parsed_args {
  std::string verb;
  std::string usage;  ///< the verb's `usage:` line, printed before a usage error
  std::vector<std::string> positionals;
  std::map<std::string, std::vector<std::string>, std::less<>> values;  ///< option → values
  bool help = false;

  /// True when the flag (or a valued option) was given.
  [[nodiscard]] bool has(std::string_view name) const { return values.find(name) != values.end(); }
  /// The last value given for an option.
  [[nodiscard]] std::optional<std::string> value(std::string_view name) const;
  /// Every value given for a repeatable option, in order.
  [[nodiscard]] std::vector<std::string> all(std::string_view name) const;
  /// The i-th positional, or "" when absent.
  [[nodiscard]] std::string positional(std::size_t i) const;
};

/// Result of parsing: the arguments or a usage error message (without the "error:" prefix).
struct parse_outcome {
  std::optional<parsed_args> args;
  std::string error;
};

/// Parses `argv` (the words after the verb) against `spec`.
parse_outcome parse_verb_args(const verb_spec& spec, const std::vector<std::string>& argv);

/// Prints the verb's `usage:` line to stderr, as argparse does before a usage error's
/// `ll-loop VERB: error: ...` line.
void print_usage_line(const parsed_args& args);

/// The `usage:` line of a verb.
std::string usage_line(const verb_spec& spec);

/// The full `--help` text of a verb.
std::string verb_help(const verb_spec& spec);

/// "did you mean" helper: the candidate closest to `word` (edit distance ≤ 2 or a prefix),
/// or "" when none is close.
std::string closest_match(std::string_view word, const std::vector<std::string_view>& candidates);

/// Splits a command given as one string (`--prompt-command`, `--judge-command`) into argv
/// words the way a POSIX shell splits words, without any expansion: blanks separate words;
/// '...' keeps everything literally; "..." keeps everything but lets a backslash escape
/// `"`, `\`, `$`, `` ` `` and a newline; a backslash outside quotes makes the next character
/// literal. So `my-llm --model 'big model' -p` is three words and an argument may contain
/// spaces or quotes. On an unterminated quote or a trailing backslash: nullopt and `error`.
std::optional<std::vector<std::string>> split_command_words(std::string_view text, std::string& error);

/// Parses a non-negative integer argument; nullopt on junk or overflow.
std::optional<long long> parse_count(std::string_view text);

}  // namespace ll_loop

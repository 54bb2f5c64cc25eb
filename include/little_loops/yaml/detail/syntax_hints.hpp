// little_loops — YAML syntax errors explained: what yaml-cpp's message means in a loop file
// SPDX-License-Identifier: MIT
#pragma once

// yaml-cpp reports "illegal map value" or "end of map not found" for the three mistakes
// people make most when writing YAML by hand: a tab in the indentation, a `: ` inside an
// unquoted value, and a key indented more or less than its siblings. These helpers look at
// the lines around the error and say which one it is, where, and how to fix it.

#include <little_loops/config.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A syntax error restated: 1-based line and column, and the message.
struct yaml_hint {
  std::size_t line = 0;
  std::size_t column = 0;
  std::string message;
};

/// The lines of `text` (without their line breaks).
inline std::vector<std::string_view> yaml_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

inline std::size_t yaml_indent(std::string_view line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? line.size() : first;
}

inline bool yaml_blank_or_comment(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t");
  return first == std::string_view::npos || line[first] == '#';
}

/// The key of a `key: value` or `key:` line (after its indentation), or "".
inline std::string_view yaml_line_key(std::string_view line) {
  line.remove_prefix(yaml_indent(line));
  if (line.starts_with("- ")) line.remove_prefix(2);
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  if (colon + 1 < line.size() && line[colon + 1] != ' ') return {};
  return line.substr(0, colon);
}

/// A tab in the indentation of a line up to `last` (1-based): YAML indents with spaces only.
inline std::optional<yaml_hint> tab_indent_hint(const std::vector<std::string_view>& lines,
                                                std::size_t last) {
  for (std::size_t i = 0; i < lines.size() && i < last; ++i) {
    const std::string_view line = lines[i];
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    const std::size_t tab = line.substr(0, first).find('\t');
    if (tab != std::string_view::npos)
      return yaml_hint{i + 1, tab + 1, "tabs cannot indent YAML: indent this line with spaces"};
  }
  return std::nullopt;
}

/// The indentation levels open at line `index` (0-based): the indents of the lines above it
/// that it could be a sibling of, deepest first, each with the key written there.
inline std::vector<std::pair<std::size_t, std::string_view>> open_levels(
    const std::vector<std::string_view>& lines, std::size_t index) {
  std::vector<std::pair<std::size_t, std::string_view>> levels;
  for (std::size_t i = index; i-- > 0;) {
    if (yaml_blank_or_comment(lines[i])) continue;
    const std::size_t indent = yaml_indent(lines[i]);
    if (levels.empty() || indent < levels.back().first) levels.emplace_back(indent, yaml_line_key(lines[i]));
    if (indent == 0) break;
  }
  return levels;
}

/// A key at an indentation no open mapping has, or deeper than the value above it.
inline std::optional<yaml_hint> indent_hint(const std::vector<std::string_view>& lines,
                                            std::size_t index) {
  if (index >= lines.size() || yaml_line_key(lines[index]).empty()) return std::nullopt;
  const std::size_t indent = yaml_indent(lines[index]);
  const auto levels = open_levels(lines, index);
  if (levels.empty()) return std::nullopt;
  std::vector<std::string> choices;
  for (const auto& [level, key] : levels) {
    if (level == indent) return std::nullopt;
    if (choices.size() < 2 && (level < indent || choices.empty()))
      choices.push_back(key.empty() ? fmt::format("column {}", level + 1)
                                    : fmt::format("column {} (like \"{}\")", level + 1, key));
    if (level < indent) break;
  }
  return yaml_hint{index + 1, indent + 1,
                   fmt::format("this key does not line up with the keys above it: expected this "
                               "key at {}",
                               choices.size() == 1 ? choices[0] : choices[0] + " or " + choices[1])};
}

/// An unquoted value holding `: ` (`action: echo said: hi`).
inline std::optional<yaml_hint> colon_in_value_hint(const std::vector<std::string_view>& lines,
                                                    std::size_t index, std::size_t column) {
  if (index >= lines.size()) return std::nullopt;
  const std::string_view line = lines[index];
  const std::string_view key = yaml_line_key(line);
  if (key.empty()) return std::nullopt;
  const std::size_t value = line.find(':', yaml_indent(line)) + 1;
  if (column <= value) return std::nullopt;  // the error is at the key's own colon
  const std::size_t start = line.find_first_not_of(' ', value);
  return yaml_hint{index + 1, start == std::string_view::npos ? value + 1 : start + 1,
                   fmt::format("the value of \"{}\" contains \": \", which YAML reads as another "
                               "key: quote this value or use a block scalar (>-)",
                               key)};
}

/// What yaml-cpp's error `message` at 1-based `line`:`column` of `text` means, when it is one
/// of the mistakes above; nullopt otherwise.
inline std::optional<yaml_hint> explain_yaml_error(std::string_view text, std::size_t line,
                                                   std::size_t column, std::string_view message) {
  const auto lines = yaml_lines(text);
  if (auto tab = tab_indent_hint(lines, line)) return tab;
  if (line == 0) return std::nullopt;
  if (message == "illegal map value") {
    if (auto colon = colon_in_value_hint(lines, line - 1, column)) return colon;
    return indent_hint(lines, line - 1);
  }
  if (message == "end of map not found" || message == "end of sequence not found")
    return indent_hint(lines, line - 1);
  return std::nullopt;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

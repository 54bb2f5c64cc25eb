// little_loops — classify evaluator: one line of the output, trimmed, is the verdict
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

inline bool is_classify_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

inline std::string_view trim_classify(std::string_view s) noexcept {
  while (!s.empty() && is_classify_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_classify_space(s.back())) s.remove_suffix(1);
  return s;
}

LITTLE_LOOPS_INLINE std::vector<std::string_view> classify_lines(std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The non-blank lines of `text`, split at `\n`, `\r\n`, `\r`, `\v` and `\f` (Python's
/// splitlines for ASCII text), whitespace-only lines dropped.
LITTLE_LOOPS_INLINE std::vector<std::string_view> classify_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  auto push = [&](std::size_t end) {
    std::string_view line = text.substr(start, end - start);
    if (!trim_classify(line).empty()) lines.push_back(line);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\n' && c != '\r' && c != '\v' && c != '\f') continue;
    push(i);
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < text.size()) push(text.size());
  return lines;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE evaluation_result evaluate_classify(std::string_view output, const json& line);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief The classify evaluator: the verdict is one non-blank line of `output`, trimmed
/// (case kept). `line` is `"first"`, `"last"` (also when null) or an index, 0-based and
/// negative from the end. No line, or an index out of range, gives the empty verdict (which
/// only `_` can route), with `error: "index out of range"` in the details for the latter.
LITTLE_LOOPS_INLINE evaluation_result evaluate_classify(std::string_view output, const json& line) {
  const auto lines = detail::classify_lines(output);
  const json line_value = line.is_null() ? json("last") : line;
  json details = json::object();
  details["line"] = line_value;
  if (lines.empty()) {
    details["token"] = "";
    details["source_lines"] = 0;
    return evaluation_result{std::string(), std::move(details)};
  }
  const auto count = static_cast<std::int64_t>(lines.size());
  std::int64_t index = count - 1;
  if (line_value.is_string() && line_value.get_ref<const std::string&>() == "first") index = 0;
  if (line_value.is_number_integer()) {
    index = line_value.get<std::int64_t>();
    if (index < 0) index += count;
  }
  if (index < 0 || index >= count) {
    details["token"] = "";
    details["source_lines"] = count;
    details["error"] = "index out of range";
    return evaluation_result{std::string(), std::move(details)};
  }
  std::string token(detail::trim_classify(lines[static_cast<std::size_t>(index)]));
  details["token"] = token;
  return evaluation_result{std::move(token), std::move(details)};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

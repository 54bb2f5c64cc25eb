// little_loops — the failure class of an action that exited non-zero (captured.X.failure_type)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/results.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline bool contains_word(std::string_view text, std::string_view word) noexcept {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !is_word(text[at - 1]);
    const std::size_t end = at + word.size();
    if (left && (end == text.size() || !is_word(text[end]))) return true;
  }
  return false;
}

/// The reference's failure classes, first match wins, on the lower-cased `output + "\n" +
/// stderr`: `transient` (quota, network, timeouts, resources, server errors, context
/// length, sessions, a missing command, a kill, tool errors, Python tracebacks),
/// `non_recoverable` (authentication), else `real`. An action that exited 0 has none ("").
inline std::string failure_type_of(int exit_code, std::string_view output, std::string_view stderr_text) {
  if (exit_code == 0) return {};
  std::string raw(output);
  raw += '\n';
  raw += stderr_text;
  if (raw.find("<tool_use_error>") != std::string::npos) return "transient";
  std::string text = raw;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto any = [&text](std::initializer_list<std::string_view> needles) {
    return std::any_of(needles.begin(), needles.end(),
                       [&text](std::string_view n) { return text.find(n) != std::string::npos; });
  };
  if (any({"out of extra usage", "rate limit", "quota exceeded", "too many requests", "api limit",
           "usage limit", "429", "resource exhausted", "resourceexhausted"}))
    return "transient";
  if (any({"connection refused", "connection timeout", "network error", "dns resolution",
           "connection reset", "service unavailable", "502 bad gateway", "503 service unavailable",
           "504 gateway timeout"}) ||
      contains_word(text, "econnrefused") || contains_word(text, "enotfound") ||
      contains_word(text, "etimedout"))
    return "transient";
  if (any({"timeout", "timed out", "deadline exceeded", "disk full", "no space left",
           "resource temporarily unavailable", "too many open files", "memory allocation failed",
           "out of memory"}))
    return "transient";
  if (any({"401", "403", "unauthorized", "forbidden", "authentication", "invalid api key",
           "invalid_api_key", "expired token"}))
    return "non_recoverable";
  if (any({"the server had an error", "internal server error", "overloaded_error", "overloaded",
           "529", "api error", "prompt is too long", "context length exceeded", "context window",
           "maximum context", "requires a valid session id", "requires a valid session title",
           "command not found", "read-only variable", "file \"<string>\"", "file \"<stdin>\""}) ||
      contains_word(text, "killed"))
    return "transient";
  return "real";
}

// captured.X.failure_type and timeout_kind (design §6.3): a timed-out action counts as exit
// 124, with `Action timed out` for text when it wrote no stderr.
inline void record_failure(captured_record& rec, const action_result& a) {
  rec.timeout_kind = !a.timed_out ? "" : a.idle_timeout ? "idle" : "wall";
  if (a.exit_code == 0 && !a.abnormal()) {
    rec.failure_type.clear();
    return;
  }
  const std::string_view idle = "Action idle-timed out";
  const std::string_view wall = "Action timed out";
  const std::string_view err = !a.stderr_output.empty() ? std::string_view(a.stderr_output)
                               : a.timed_out            ? (a.idle_timeout ? idle : wall)
                                                        : std::string_view();
  const int code = a.timed_out ? 124 : (a.exit_code == 0 ? 1 : a.exit_code);
  rec.failure_type = failure_type_of(code, a.output, err);
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

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

/// The reference's failure patterns (lower case), by kind.
inline constexpr std::array<std::string_view, 9> rate_limit_patterns{
    "out of extra usage", "rate limit", "quota exceeded", "too many requests", "api limit",
    "usage limit", "429", "resource exhausted", "resourceexhausted"};
inline constexpr std::array<std::string_view, 9> network_patterns{
    "connection refused", "connection timeout", "network error", "dns resolution",
    "connection reset", "service unavailable", "502 bad gateway", "503 service unavailable",
    "504 gateway timeout"};
inline constexpr std::array<std::string_view, 8> auth_patterns{
    "401", "403", "unauthorized", "forbidden", "authentication", "invalid api key",
    "invalid_api_key", "expired token"};
inline constexpr std::array<std::string_view, 6> api_error_patterns{
    "the server had an error", "internal server error", "overloaded_error", "overloaded", "529",
    "api error"};

LITTLE_LOOPS_INLINE std::string lowered_failure_text(std::string_view output, std::string_view stderr_text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `output + "\n" + stderr`, lower-cased.
LITTLE_LOOPS_INLINE std::string lowered_failure_text(std::string_view output, std::string_view stderr_text) {
  std::string text(output);
  text += '\n';
  text += stderr_text;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

template <std::size_t N>
bool contains_any(std::string_view text, const std::array<std::string_view, N>& needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [text](std::string_view n) { return text.find(n) != std::string_view::npos; });
}

LITTLE_LOOPS_INLINE bool is_network_failure(std::string_view text);
LITTLE_LOOPS_INLINE bool result_event_seen(std::string_view output) noexcept;
LITTLE_LOOPS_INLINE bool is_infra_teardown(int exit_code, std::string_view output) noexcept;
LITTLE_LOOPS_INLINE std::string failure_type_of(int exit_code, std::string_view output, std::string_view stderr_text);
LITTLE_LOOPS_INLINE std::string_view error_class_of(std::string_view output, std::string_view stderr_text);
LITTLE_LOOPS_INLINE void record_failure(captured_record& rec, const action_result& a);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE bool is_network_failure(std::string_view text) {
  return contains_any(text, network_patterns) || contains_word(text, "econnrefused") ||
         contains_word(text, "enotfound") || contains_word(text, "etimedout");
}

/// Whether `output` holds a stream-json `result` event (a line of JSON whose `type` is
/// `result`), which an agent CLI writes when its turn ends.
LITTLE_LOOPS_INLINE bool result_event_seen(std::string_view output) noexcept {
  for (std::string_view key : {"\"type\":\"result\"", "\"type\": \"result\""})
    if (output.find(key) != std::string_view::npos) return true;
  return false;
}

/// Exit 143 (SIGTERM) after a `result` event: the agent's process group was torn down once
/// its turn ended, a re-runnable infrastructure kill (the reference's INFRA_RETRY).
LITTLE_LOOPS_INLINE bool is_infra_teardown(int exit_code, std::string_view output) noexcept {
  return exit_code == 143 && result_event_seen(output);
}

/// The reference's failure classes, first match wins, on the lower-cased `output + "\n" +
/// stderr`: `transient` (quota, network, timeouts, resources, server errors, context
/// length, sessions, a missing command, a kill, tool errors, Python tracebacks),
/// `non_recoverable` (authentication), else `real`; before them `infra_retry` for an infra
/// teardown (is_infra_teardown). An action that exited 0 has none ("").
LITTLE_LOOPS_INLINE std::string failure_type_of(int exit_code, std::string_view output, std::string_view stderr_text) {
  if (exit_code == 0) return {};
  if (is_infra_teardown(exit_code, output)) return "infra_retry";
  std::string raw(output);
  raw += '\n';
  raw += stderr_text;
  if (raw.find("<tool_use_error>") != std::string::npos) return "transient";
  const std::string text = lowered_failure_text(output, stderr_text);
  auto any = [&text](std::initializer_list<std::string_view> needles) {
    return std::any_of(needles.begin(), needles.end(),
                       [&text](std::string_view n) { return text.find(n) != std::string::npos; });
  };
  if (contains_any(text, rate_limit_patterns) || is_network_failure(text)) return "transient";
  if (any({"timeout", "timed out", "deadline exceeded", "disk full", "no space left",
           "resource temporarily unavailable", "too many open files", "memory allocation failed",
           "out of memory"}))
    return "transient";
  if (contains_any(text, auth_patterns)) return "non_recoverable";
  if (contains_any(text, api_error_patterns) ||
      any({"prompt is too long", "context length exceeded", "context window",
           "maximum context", "requires a valid session id", "requires a valid session title",
           "command not found", "read-only variable", "file \"<string>\"", "file \"<stdin>\""}) ||
      contains_word(text, "killed"))
    return "transient";
  return "real";
}

/// The error class (resilience.hpp) of a failed action by the same patterns as
/// failure_type_of(), first match wins: `rate_limit`, `network`, `timeout` (text),
/// `auth`, `api_error`, else `exit_code`.
LITTLE_LOOPS_INLINE std::string_view error_class_of(std::string_view output, std::string_view stderr_text) {
  const std::string text = lowered_failure_text(output, stderr_text);
  if (contains_any(text, rate_limit_patterns)) return "rate_limit";
  if (is_network_failure(text)) return "network";
  if (text.find("timed out") != std::string::npos || text.find("deadline exceeded") != std::string::npos)
    return "timeout";
  if (contains_any(text, auth_patterns)) return "auth";
  if (contains_any(text, api_error_patterns)) return "api_error";
  return "exit_code";
}

// captured.X.failure_type and timeout_kind (design §6.3): a timed-out action counts as exit
// 124, with `Action timed out` for text when it wrote no stderr.
LITTLE_LOOPS_INLINE void record_failure(captured_record& rec, const action_result& a) {
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
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

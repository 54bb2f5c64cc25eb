// little_loops — the library's error and diagnostic types
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Stable error codes. The numeric values never change once released; the formatted form
/// is `LL-E<number>` (e.g. `LL-E101`), greppable in logs and docs.
enum class errc : int {
  ok = 0,
  // 1xx: loading and parsing documents
  parse_error = 101,    ///< the text is not valid JSON/YAML
  invalid_loop = 102,   ///< the document does not describe a valid loop (see diagnostics)
  invalid_spec = 103,   ///< a paradigm spec is invalid (see diagnostics)
  composition_failed = 104,   ///< `from:`, `flow:`, `import:` or `fragment:` cannot be composed
  reference_not_found = 105,  ///< a parent loop or fragment library does not resolve
  // 2xx: templates and interpolation
  template_syntax = 201,    ///< a `${...}` template is malformed
  missing_variable = 202,   ///< a template variable does not resolve
  template_too_large = 203, ///< a template renders past its size limit
  // 3xx: evaluation
  evaluation_failed = 301,  ///< an evaluator could not produce a verdict
  judge_failed = 302,       ///< the LLM judge backend failed or replied badly
  // 4xx: execution
  no_transition = 401,      ///< no route for a verdict
  unknown_state = 402,      ///< a route target names no state
  action_failed = 403,      ///< the action runner could not run the action
  snapshot_mismatch = 404,  ///< a snapshot does not belong to this loop
  invalid_snapshot = 405,   ///< a snapshot document is malformed
  cap_reached = 406,        ///< `max_edge_revisits`, the `circuit` or a throttle ended the run
  // 5xx: host adapters
  io_error = 501,           ///< a file or process operation failed
};

LITTLE_LOOPS_INLINE std::string error_id(errc code);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The stable textual id of an error code, e.g. `LL-E102`.
LITTLE_LOOPS_INLINE std::string error_id(errc code) { return fmt::format("LL-E{:03}", static_cast<int>(code)); }
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Severity of a diagnostic.
enum class severity { error, warning };

/// `"error"` / `"warning"`.
inline std::string_view to_string(severity s) noexcept {
  return s == severity::error ? std::string_view{"error"} : std::string_view{"warning"};
}

/// One finding about a document: where (a dotted path such as
/// `states.fix.evaluate.operator`; empty for the root), what, and how bad.
struct diagnostic {
  severity level = severity::error;
  std::string path;     ///< dotted path into the document; "" means the document root
  std::string message;  ///< human-readable, may include a "did you mean" hint
  std::string code;     ///< stable rule id, e.g. "unknown-key", "dangling-route"

  friend bool operator==(const diagnostic&, const diagnostic&) = default;
};

/// A list of diagnostics, in document order.
using diagnostics = std::vector<diagnostic>;

/// True when `list` holds at least one diagnostic of severity error.
inline bool has_errors(const diagnostics& list) noexcept {
  for (const auto& d : list)
    if (d.level == severity::error) return true;
  return false;
}

/// The library's error: a stable code, a message, the path it concerns and, for documents,
/// every diagnostic found.
struct error {
  errc code = errc::ok;
  std::string message;
  std::string path;                ///< dotted document path or file path; may be empty
  diagnostics details;             ///< all findings, for invalid documents

  error() = default;
  error(errc c, std::string msg, std::string where = {}, diagnostics found = {})
      : code(c), message(std::move(msg)), path(std::move(where)), details(std::move(found)) {}
};

LITTLE_LOOPS_INLINE std::string to_string(const error& e);
LITTLE_LOOPS_INLINE std::string to_string(const diagnostic& d);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `LL-E102 at states.fix: message`.
LITTLE_LOOPS_INLINE std::string to_string(const error& e) {
  if (e.path.empty()) return fmt::format("{}: {}", error_id(e.code), e.message);
  return fmt::format("{} at {}: {}", error_id(e.code), e.path, e.message);
}

/// `error: states.fix.evaluate.operator: unknown operator "eqq" (did you mean "eq"?)`
LITTLE_LOOPS_INLINE std::string to_string(const diagnostic& d) {
  if (d.path.empty()) return fmt::format("{}: {}", to_string(d.level), d.message);
  return fmt::format("{}: {}: {}", to_string(d.level), d.path, d.message);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

template <>
struct fmt::formatter<little_loops::error> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(const little_loops::error& e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(little_loops::to_string(e), ctx);
  }
};

template <>
struct fmt::formatter<little_loops::diagnostic> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(const little_loops::diagnostic& d, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(little_loops::to_string(d), ctx);
  }
};

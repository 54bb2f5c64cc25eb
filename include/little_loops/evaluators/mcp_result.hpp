// little_loops — mcp_result evaluator: an MCP tool call's exit code and response envelope
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/evaluators/output_json.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/detail/utf8.hpp>

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief The result of an `mcp_tool` action (`mcp-call SERVER/TOOL PARAMS`), read as the
/// reference reads it: exit 127 → `not_found` (the server or tool is not configured); exit
/// 124 → `timeout`; otherwise the output is the MCP response envelope (JSON; empty output
/// reads as `{}`): a true `isError` (Python's truth) → `tool_error`, else `success`; without
/// `isError` (or an envelope that is not an object) a non-zero exit means an error. Output
/// that is not JSON is `tool_error` (`Invalid JSON from mcp-call: <first 200 characters>`). Details: `{exit_code, envelope}` or `{exit_code,
/// error}`. Its verdicts are its own words in both dialects.
LITTLE_LOOPS_INLINE evaluation_result evaluate_mcp_result(std::string_view output, int exit_code);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE evaluation_result evaluate_mcp_result(std::string_view output, int exit_code) {
  evaluation_result r;
  if (exit_code == 127 || exit_code == 124) {
    r.verdict = exit_code == 127 ? "not_found" : "timeout";
    r.details = json{{"exit_code", exit_code},
                     {"error", exit_code == 127 ? "Server or tool not found in .mcp.json"
                                                : "MCP tool call timed out"}};
    return r;
  }
  const std::string_view text = detail::trim_py(output);
  json envelope = json::object();
  if (!text.empty()) {
    detail::output_document doc;
    std::string message;
    if (detail::extract_json_path(text, {}, doc, message) != detail::json_extract::found) {
      r.verdict = "tool_error";
      r.details = json{{"exit_code", exit_code},
                       {"error", "Invalid JSON from mcp-call: " +
                                     detail::sanitize_utf8(detail::utf8_prefix(output, 200))}};
      return r;
    }
    envelope = detail::to_library_json(doc);
  }
  bool is_error = exit_code != 0;
  if (envelope.is_object()) {
    const auto flag = envelope.find("isError");
    if (flag != envelope.end()) {  // read as Python reads a value's truth
      const json& v = *flag;
      is_error = v.is_boolean() ? v.get<bool>()
                 : v.is_number() ? v.get<double>() != 0
                 : v.is_string() ? !v.get_ref<const std::string&>().empty()
                 : v.is_null()   ? false
                                 : !v.empty();
    }
  }
  r.verdict = is_error ? "tool_error" : "success";
  r.details = json{{"exit_code", exit_code}, {"envelope", std::move(envelope)}};
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

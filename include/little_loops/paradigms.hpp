// little_loops — paradigm specs (goal, convergence, invariants, imperative) → loops
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/paradigms/common.hpp>
#include <little_loops/paradigms/convergence.hpp>
#include <little_loops/paradigms/goal.hpp>
#include <little_loops/paradigms/imperative.hpp>
#include <little_loops/paradigms/invariants.hpp>

#include <array>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The values `paradigm:` accepts, sorted (the order of the "Must be one of" message).
inline constexpr std::array<std::string_view, 5> paradigm_names{
    "convergence", "fsm", "goal", "imperative", "invariants"};

/// Compiles any spec by its `paradigm:` key: `goal`, `convergence`, `invariants` and
/// `imperative` go to their compilers, which record it in fsm_loop::paradigm; `fsm`, no
/// `paradigm` key at all, or an `initial` key (a loop compiled earlier) mean the document
/// is a loop and is read by load_loop(), which keeps `paradigm` as provenance. Every result
/// has gone through validate(), once. Errors: errc::invalid_spec (paradigm specs, unknown
/// paradigm) or errc::invalid_loop (fsm documents, see load_loop()), with every diagnostic
/// in error::details. Validation warnings are appended to `warnings` if given.
inline expected<fsm_loop, error> compile_paradigm(const json& spec,
                                                  diagnostics* warnings = nullptr) {
  using namespace detail;
  if (!spec.is_object()) {
    diagnostics out;
    report_type(out, "", "a paradigm spec or loop document (a JSON object)", spec);
    std::string message = out.front().message;
    return unexpected(error{errc::invalid_spec, std::move(message), "", std::move(out)});
  }
  std::string paradigm = "fsm";
  if (const auto it = spec.find("paradigm"); it != spec.end()) {
    diagnostics out;
    if (auto v = read_string(*it, "paradigm", out)) paradigm = std::move(*v);
    if (has_errors(out)) {
      std::string message = out.front().message;
      return unexpected(error{errc::invalid_spec, std::move(message), "paradigm", std::move(out)});
    }
  }
  // A document with `initial` is a loop whatever its `paradigm` says (a compiled loop keeps
  // the paradigm it came from, as provenance), as the original's loader decides.
  const bool is_loop = paradigm == "fsm" || spec.contains("initial");
  if (!is_loop) {
    if (paradigm == "goal") return compile_goal(spec, warnings);
    if (paradigm == "convergence") return compile_convergence(spec, warnings);
    if (paradigm == "invariants") return compile_invariants(spec, warnings);
    if (paradigm == "imperative") return compile_imperative(spec, warnings);
  } else {
    return load_loop(spec, warnings);  // keeps `paradigm` as provenance
  }
  diagnostics out;
  report(out, "paradigm", "unknown-paradigm",
         fmt::format("Unknown paradigm: '{}'. Must be one of: {}{}", paradigm_excerpt(paradigm),
                     fmt::join(paradigm_names, ", "), did_you_mean(paradigm, paradigm_names)));
  std::string message = out.front().message;
  return unexpected(error{errc::invalid_spec, std::move(message), "paradigm", std::move(out)});
}

/// compile_paradigm() of JSON text; syntax errors and duplicate keys are errc::parse_error.
inline expected<fsm_loop, error> compile_paradigm_text(std::string_view json_text,
                                                       diagnostics* warnings = nullptr) {
  auto document = parse_json_text(json_text);
  if (!document) return unexpected(document.error());
  return compile_paradigm(*document, warnings);
}

LITTLE_LOOPS_NAMESPACE_END

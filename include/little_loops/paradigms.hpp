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
/// is a loop and is read by parse_loop(), which keeps `paradigm` as provenance. Every result
/// has gone through validate(). Errors: errc::invalid_spec (paradigm specs, unknown
/// paradigm) or errc::invalid_loop / errc::parse_error (fsm documents), with every
/// diagnostic in error::details. Validation warnings are appended to `warnings` if given.
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
    fsm_loop loop;  // keeps `paradigm` as provenance
    diagnostics checked;
    read_loop(spec, loop, checked);
    const bool unreadable = count_errors(checked) != 0;
    validate_read(loop, checked);  // the validator's findings too, as the original reports them
    if (unreadable) return unexpected(invalid_loop_error(std::move(checked)));
    if (has_errors(checked)) {
      std::size_t errors = 0;
      for (const auto& d : checked)
        if (d.level == severity::error) ++errors;
      const diagnostic* first = nullptr;
      for (const auto& d : checked)
        if (d.level == severity::error && first == nullptr) first = &d;
      std::string message = errors == 1 ? first->message
                                        : fmt::format("invalid loop: {} errors, first: {}",
                                                      errors, first->message);
      std::string where = errors == 1 ? first->path : std::string();
      return unexpected(error{errc::invalid_loop, std::move(message), std::move(where),
                              std::move(checked)});
    }
    if (warnings != nullptr) warnings->insert(warnings->end(), checked.begin(), checked.end());
    return loop;
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

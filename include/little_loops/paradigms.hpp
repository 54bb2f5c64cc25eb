// little_loops — paradigm specs (goal, convergence, invariants, imperative) → loops
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/paradigms/common.hpp>
#include <little_loops/paradigms/convergence.hpp>
#include <little_loops/paradigms/goal.hpp>
#include <little_loops/paradigms/imperative.hpp>
#include <little_loops/paradigms/invariants.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The values `paradigm:` accepts, sorted (the order of the "Must be one of" message).
inline constexpr std::array<std::string_view, 5> paradigm_names{
    "convergence", "fsm", "goal", "imperative", "invariants"};

namespace detail {

LITTLE_LOOPS_INLINE expected<std::string, error> spec_paradigm(const json& spec);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The paradigm `spec` names, or "fsm" when the document is a loop: `paradigm: fsm`, no
/// `paradigm` key, or an `initial` key (a loop compiled earlier keeps the paradigm it came
/// from, as provenance, as the original's loader decides). errc::invalid_spec when `spec`
/// is no object, `paradigm` no string, or names no paradigm.
LITTLE_LOOPS_INLINE expected<std::string, error> spec_paradigm(const json& spec) {
  diagnostics out;
  const auto refuse = [&out](std::string path) {
    std::string message = out.front().message;
    return unexpected(error{errc::invalid_spec, std::move(message), std::move(path), std::move(out)});
  };
  if (!spec.is_object()) {
    report_type(out, "", "a paradigm spec or loop document (a JSON object)", spec);
    return refuse("");
  }
  std::string paradigm = "fsm";
  if (const auto it = spec.find("paradigm"); it != spec.end()) {
    if (auto v = read_string(*it, "paradigm", out)) paradigm = std::move(*v);
    if (has_errors(out)) return refuse("paradigm");
  }
  if (paradigm == "fsm" || spec.contains("initial")) return std::string("fsm");
  if (std::find(paradigm_names.begin(), paradigm_names.end(), paradigm) != paradigm_names.end())
    return paradigm;
  report(out, "paradigm", "unknown-paradigm",
         fmt::format("Unknown paradigm: '{}'. Must be one of: {}{}", paradigm_excerpt(paradigm),
                     fmt::join(paradigm_names, ", "), did_you_mean(paradigm, paradigm_names)));
  return refuse("paradigm");
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE expected<loop_draft, error> draft_paradigm(const json& spec);
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_paradigm(const json& spec,
                                                  diagnostics* warnings = nullptr);
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_paradigm_text(std::string_view json_text,
                                                       diagnostics* warnings = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The first step of compile_paradigm(): a spec compiled by its paradigm's compiler, or a
/// loop document read strictly (see spec_paradigm() for which), not validated yet, so that
/// a host can change the loop before validate_loop(loop_draft) judges it, once (see
/// loop_draft). Errors: errc::invalid_spec (not an object, unknown paradigm); a spec's or a
/// loop's own findings come from validate_loop().
LITTLE_LOOPS_INLINE expected<loop_draft, error> draft_paradigm(const json& spec) {
  auto paradigm = detail::spec_paradigm(spec);
  if (!paradigm) return unexpected(std::move(paradigm.error()));
  if (*paradigm == "goal") return detail::draft_goal(spec);
  if (*paradigm == "convergence") return detail::draft_convergence(spec);
  if (*paradigm == "invariants") return detail::draft_invariants(spec);
  if (*paradigm == "imperative") return detail::draft_imperative(spec);
  return read_loop_draft(spec);  // keeps `paradigm` as provenance
}

/// Compiles any spec by its `paradigm:` key: `goal`, `convergence`, `invariants` and
/// `imperative` go to their compilers, which record it in fsm_loop::paradigm; `fsm`, no
/// `paradigm` key at all, or an `initial` key (a loop compiled earlier) mean the document
/// is a loop and is read by load_loop(), which keeps `paradigm` as provenance. Every result
/// has gone through validate(), once. Errors: errc::invalid_spec (paradigm specs, unknown
/// paradigm) or errc::invalid_loop (fsm documents, see load_loop()), with every diagnostic
/// in error::details. Validation warnings are appended to `warnings` if given. To change
/// the loop before its validation, use draft_paradigm() and validate_loop(loop_draft).
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_paradigm(const json& spec,
                                                  diagnostics* warnings) {
  auto paradigm = detail::spec_paradigm(spec);
  if (!paradigm) return unexpected(std::move(paradigm.error()));
  if (*paradigm == "fsm") return load_loop(spec, warnings);  // keeps `paradigm` as provenance
  auto draft = draft_paradigm(spec);
  if (!draft) return unexpected(std::move(draft.error()));
  return detail::finish_paradigm(std::move(*draft), warnings);
}

/// compile_paradigm() of JSON text; syntax errors and duplicate keys are errc::parse_error.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_paradigm_text(std::string_view json_text,
                                                       diagnostics* warnings) {
  auto document = parse_json_text(json_text);
  if (!document) return unexpected(document.error());
  return compile_paradigm(*document, warnings);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

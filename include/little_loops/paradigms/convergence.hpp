// little_loops — the convergence paradigm: drive a measured value toward a target
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/paradigms/common.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

LITTLE_LOOPS_INLINE std::optional<json> read_convergence_number(const json& field, const std::string& path,
                                                   diagnostics& out);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `toward` / `tolerance`: a finite number (a string holding one is accepted and converted).
LITTLE_LOOPS_INLINE std::optional<json> read_convergence_number(const json& field, const std::string& path,
                                                   diagnostics& out) {
  if (field.is_string()) {
    const auto& text = field.get_ref<const std::string&>();
    const json parsed = detail::parse_json_or_discarded(text);
    if (!parsed.is_discarded() && parsed.is_number() && std::isfinite(parsed.get<double>()))
      return parsed;
    report(out, path, "wrong-type",
           fmt::format("expected a number, got string {}", quote_excerpt(text)));
    return std::nullopt;
  }
  if (!read_number(field, path, out)) return std::nullopt;
  return field;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE loop_draft draft_convergence(const json& spec);

}  // namespace detail

LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_convergence(const json& spec, diagnostics* warnings = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Compiles a convergence spec:
/// ```yaml
/// paradigm: convergence
/// name: reduce-lint-errors                        # required
/// check: "ruff check src/ | grep -c error"        # required; prints the value
/// toward: 0                                       # required; the target value
/// using: "/ll:check-code fix"                     # required; the fix action
/// tolerance: 0                                    # optional, >= 0, default 0
/// direction: minimize                             # optional, minimize | maximize
/// description, max_iterations, backoff, timeout, context, scope, llm, on_handoff
/// ```
/// into `measure` (runs the check, captures it as `current_value`, convergence evaluator on
/// its output: target → `done`, progress → `apply`, stall → `stalled`, a terminal marked
/// `failure: true` (the value stopped improving short of the target: a run that made no
/// progress must not look green in CI, design §3.15; the original ended it in `done`);
/// `error` unrouted, so it ends the run as an error), `apply` (next → `measure`), `done`
/// (terminal) and `stalled`. As in the original, the context gets `metric_cmd`,
/// `target` and `tolerance` (user context keys are kept; these three are reserved), `measure`'s
/// action is `${context.metric_cmd}` (so the check is data: a `${VAR}` in it reaches the
/// shell as written, `--context metric_cmd=…` overrides it, and a `/slash` check is still run
/// as a prompt, decided from the rendered text) and the evaluator reads `${context.target}` /
/// `${context.tolerance}`. The previous value is the
/// evaluator's own per-state memory (the original's `${prev.output}` would have read the
/// fix's output).
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_convergence(const json& spec, diagnostics* warnings) {
  return detail::finish_paradigm(detail::draft_convergence(spec), warnings);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// compile_convergence() before validation: the compiled loop, the spec's findings and origins.
LITTLE_LOOPS_INLINE loop_draft draft_convergence(const json& spec) {
  diagnostics out;
  fsm_loop loop;
  if (!spec.is_object()) {
    report_type(out, "", "a convergence spec (a JSON object)", spec);
    return paradigm_draft("convergence", std::move(loop), std::move(out));
  }
  require_paradigm_fields(spec, "Convergence", {"name", "check", "toward", "using"}, out);
  std::optional<std::string> name, check, fix;
  std::optional<json> toward;
  json tolerance = 0;
  convergence_direction direction = convergence_direction::minimize;
  const auto keys = paradigm_keys({"check", "toward", "using", "tolerance", "direction"});
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string path = member_path("", key);
    if (read_paradigm_common("convergence", key, field, loop, out)) continue;
    if (key == "name") {
      name = read_paradigm_text(field, path, out);
    } else if (key == "check") {
      check = read_paradigm_text(field, path, out);
    } else if (key == "using") {
      fix = read_paradigm_text(field, path, out);
    } else if (key == "toward") {
      toward = read_convergence_number(field, path, out);
    } else if (key == "tolerance") {
      if (auto v = read_convergence_number(field, path, out)) {
        if (v->get<double>() < 0)
          report(out, path, "out-of-range", "tolerance must not be negative");
        else
          tolerance = std::move(*v);
      }
    } else if (key == "direction") {
      if (auto v = parse_enum<convergence_direction>(field, path, out)) direction = *v;
    } else {
      report_unknown_key(out, "", key, keys);
    }
  }
  for (const char* reserved : {"metric_cmd", "target", "tolerance"})
    if (loop.context.is_object() && loop.context.contains(reserved))
      report(out, member_path("context", reserved), "reserved-key",
             fmt::format("context key \"{}\" is set by the convergence paradigm", reserved));
  if (has_errors(out) || !name || !check || !fix || !toward)
    return paradigm_draft("convergence", std::move(loop), std::move(out));

  loop.name = std::move(*name);
  loop.paradigm = "convergence";
  loop.initial = "measure";
  loop.context["metric_cmd"] = *check;
  loop.context["target"] = *toward;
  loop.context["tolerance"] = tolerance;
  state_config measure;
  measure.action = "${context.metric_cmd}";
  measure.capture = "current_value";
  evaluate_config converge;
  converge.type = evaluator_type::convergence;
  converge.target = "${context.target}";
  converge.tolerance = "${context.tolerance}";
  converge.direction = direction;
  measure.evaluate = std::move(converge);
  route_config route;
  route.routes["target"] = "done";
  route.routes["progress"] = "apply";
  route.routes["stall"] = "stalled";
  measure.route = std::move(route);

  state_config apply;
  apply.action = std::move(*fix);
  apply.next = "measure";

  paradigm_origins origins;
  origins.add("context.metric_cmd", "check");
  origins.add("context.target", "toward");
  origins.add("context.tolerance", "tolerance");
  origins.add_state_field("apply", "action", "using");

  loop.states["measure"] = std::move(measure);
  loop.states["apply"] = std::move(apply);
  loop.states["done"] = paradigm_terminal();
  state_config stalled = paradigm_terminal();
  stalled.failure = true;
  loop.states["stalled"] = std::move(stalled);
  return paradigm_draft("convergence", std::move(loop), std::move(out), std::move(origins));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

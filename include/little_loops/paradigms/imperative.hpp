// little_loops — the imperative paradigm: run steps in order until a check passes
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/paradigms/common.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {
LITTLE_LOOPS_INLINE loop_draft draft_imperative(const json& spec);
}  // namespace detail

LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_imperative(const json& spec, diagnostics* warnings = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Compiles an imperative spec:
/// ```yaml
/// paradigm: imperative
/// name: fix-all-types                 # required
/// steps: ["/ll:check-code types", "/ll:manage-issue bug fix"]   # required, at least one
/// until:                              # required
///   check: "mypy src/"                # required
///   passes: true                      # optional; read as in the original: see below
///   evaluator: {type: output_contains, pattern: Success}   # optional, any evaluate object
/// description, max_iterations, backoff, timeout, context, scope, llm, on_handoff
/// ```
/// into `step_0` … `step_<n-1>` (next → the following step, the last → `check_done`),
/// `check_done` (success → `done`, failure → `step_0`; `error` unrouted, so it ends the run
/// as an error) and `done` (terminal). The evaluator is parsed by parse_evaluate_config()
/// with paths below `until.evaluator`; `null` or `{}` mean none. `passes` must be a boolean
/// but does not change the routes: seed 001 and the original never read it, so a spec means
/// the same everywhere; `passes: false` gets the warning `passes-ignored` (to end when a
/// check fails, give the evaluator `negate: true` or invert the check, e.g. `! cmd`).
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_imperative(const json& spec, diagnostics* warnings) {
  return detail::finish_paradigm(detail::draft_imperative(spec), warnings);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// compile_imperative() before validation: the compiled loop, the spec's findings and origins.
LITTLE_LOOPS_INLINE loop_draft draft_imperative(const json& spec) {
  diagnostics out;
  fsm_loop loop;
  if (!spec.is_object()) {
    report_type(out, "", "an imperative spec (a JSON object)", spec);
    return paradigm_draft("imperative", std::move(loop), std::move(out));
  }
  require_paradigm_fields(spec, "Imperative", {"name", "steps", "until"}, out);
  std::optional<std::string> name;
  std::vector<std::string> steps;
  bool steps_ok = false;
  std::optional<std::string> until_check;
  std::optional<evaluate_config> evaluator;
  const auto keys = paradigm_keys({"steps", "until"});
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string path = member_path("", key);
    if (read_paradigm_common("imperative", key, field, loop, out)) continue;
    if (key == "name") {
      name = read_paradigm_text(field, path, out);
    } else if (key == "steps") {
      if (!field.is_array()) {
        report_type(out, path, "an array of step actions", field);
      } else if (field.empty()) {
        report(out, path, "empty-value", "Imperative paradigm 'steps' requires at least one step");
      } else {
        steps_ok = true;
        for (std::size_t i = 0; i < field.size(); ++i) {
          if (auto v = read_paradigm_text(field[i], paradigm_index_path(path, i), out))
            steps.push_back(std::move(*v));
          else
            steps_ok = false;
        }
      }
    } else if (key == "until") {
      if (!expect_object(field, path, out)) continue;
      if (!field.contains("check"))
        report(out, path, "missing-field", "Imperative paradigm 'until' requires 'check' field");
      static constexpr std::array<std::string_view, 3> until_keys{"check", "passes", "evaluator"};
      for (auto u = field.begin(); u != field.end(); ++u) {
        const std::string until_path = member_path(path, u.key());
        if (u.key() == "check") {
          until_check = read_paradigm_text(u.value(), until_path, out);
        } else if (u.key() == "passes") {
          if (auto v = read_bool(u.value(), until_path, out); v && !*v)
            report(out, until_path, "passes-ignored",
                   "'passes: false' has no effect (as in the original): the loop ends when the "
                   "check succeeds; to end when it fails, invert the check ('! cmd') or the "
                   "evaluator (negate: true)",
                   severity::warning);
        } else if (u.key() == "evaluator") {
          read_paradigm_evaluator(u.value(), until_path, evaluator, out);
        } else {
          report_unknown_key(out, path, u.key(), until_keys);
        }
      }
    } else {
      report_unknown_key(out, "", key, keys);
    }
  }
  if (has_errors(out) || !name || !steps_ok || !until_check)
    return paradigm_draft("imperative", std::move(loop), std::move(out));

  loop.name = std::move(*name);
  loop.paradigm = "imperative";
  loop.initial = "step_0";
  paradigm_origins origins;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::string step_name = fmt::format("step_{}", i);
    origins.add(member_path("states", step_name), paradigm_index_path("steps", i));
    origins.add_state_field(step_name, "action", paradigm_index_path("steps", i));
    state_config step;
    step.action = std::move(steps[i]);
    step.next = i + 1 < steps.size() ? fmt::format("step_{}", i + 1) : std::string("check_done");
    append_new_key(loop.states, std::move(step_name), std::move(step));  // unique
  }
  state_config check;
  check.action = std::move(*until_check);
  check.evaluate = std::move(evaluator);
  check.on["success"] = "done";
  check.on["failure"] = "step_0";
  origins.add("states.check_done", "until");
  origins.add_state_field("check_done", "action", "until.check");
  origins.add_state_field("check_done", "evaluate", "until.evaluator");
  loop.states["check_done"] = std::move(check);
  loop.states["done"] = paradigm_terminal();
  return paradigm_draft("imperative", std::move(loop), std::move(out), std::move(origins));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

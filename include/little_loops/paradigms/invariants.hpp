// little_loops — the invariants paradigm: a chain of check/fix pairs that must all hold
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/paradigms/common.hpp>

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

struct invariant_constraint {
  std::string name;
  std::string check;
  std::string fix;
  std::optional<evaluate_config> evaluator;
};

LITTLE_LOOPS_INLINE std::optional<invariant_constraint> read_constraint(const json& entry, std::size_t index,
                                                           const std::string& path,
                                                           diagnostics& out);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::optional<invariant_constraint> read_constraint(const json& entry, std::size_t index,
                                                           const std::string& path,
                                                           diagnostics& out) {
  if (!entry.is_object()) {
    report_type(out, path, "a constraint object with name, check and fix", entry);
    return std::nullopt;
  }
  // One diagnostic per missing field, in the original's words: a missing name names the
  // constraint by its index, a missing check or fix by its name (by its index when it has
  // none).
  std::string label = std::to_string(index);
  if (auto it = entry.find("name"); it != entry.end() && it->is_string())
    label = "'" + paradigm_excerpt(it->get_ref<const std::string&>()) + "'";
  bool ok = true;
  for (const char* field : {"name", "check", "fix"}) {
    if (entry.contains(field)) continue;
    report(out, path, "missing-field",
           fmt::format("Constraint {} requires '{}' field",
                       std::string_view(field) == "name" ? std::to_string(index) : label, field));
    ok = false;
  }
  invariant_constraint c;
  static constexpr std::array<std::string_view, 4> keys{"name", "check", "fix", "evaluator"};
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    const std::string field_path = member_path(path, it.key());
    std::optional<std::string> text;
    if (it.key() == "name" || it.key() == "check" || it.key() == "fix") {
      text = read_paradigm_text(it.value(), field_path, out);
      if (!text) {
        ok = false;
        continue;
      }
    }
    if (it.key() == "name") {
      c.name = std::move(*text);
    } else if (it.key() == "check") {
      c.check = std::move(*text);
    } else if (it.key() == "fix") {
      c.fix = std::move(*text);
    } else if (it.key() == "evaluator") {
      if (!read_paradigm_evaluator(it.value(), field_path, c.evaluator, out)) ok = false;
    } else {
      report_unknown_key(out, path, it.key(), keys);
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return c;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE loop_draft draft_invariants(const json& spec);

}  // namespace detail

LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_invariants(const json& spec, diagnostics* warnings = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Compiles an invariants spec:
/// ```yaml
/// paradigm: invariants
/// name: code-quality-guardian            # required
/// constraints:                           # required, at least one
///   - name: tests                        # each: name, check, fix required
///     check: pytest
///     fix: "/ll:manage-issue bug fix"
///     evaluator: {type: output_contains, pattern: passed}   # optional, any evaluate object
/// maintain: true                         # optional: restart from the first check
/// description, max_iterations, backoff, timeout, context, scope, llm, on_handoff
/// ```
/// into, per constraint in order, `check_<name>` (success → the next check or `all_valid`,
/// failure → `fix_<name>`; `error` unrouted, so it ends the run as an error) and
/// `fix_<name>` (next → `check_<name>`), then `all_valid` (terminal; with maintain its
/// `on_maintain` is the first check). Each constraint's evaluator is parsed by
/// parse_evaluate_config() with paths such as `constraints[0].evaluator.operator`.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> compile_invariants(const json& spec, diagnostics* warnings) {
  return detail::finish_paradigm(detail::draft_invariants(spec), warnings);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// compile_invariants() before validation: the compiled loop, the spec's findings and origins.
LITTLE_LOOPS_INLINE loop_draft draft_invariants(const json& spec) {
  diagnostics out;
  fsm_loop loop;
  if (!spec.is_object()) {
    report_type(out, "", "an invariants spec (a JSON object)", spec);
    return paradigm_draft("invariants", std::move(loop), std::move(out));
  }
  require_paradigm_fields(spec, "Invariants", {"name", "constraints"}, out);
  std::optional<std::string> name;
  std::vector<invariant_constraint> constraints;
  bool constraints_ok = false;
  const auto keys = paradigm_keys({"constraints", "maintain"});
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string path = member_path("", key);
    if (read_paradigm_common("invariants", key, field, loop, out)) continue;
    if (key == "name") {
      name = read_paradigm_text(field, path, out);
    } else if (key == "maintain") {
      if (auto v = read_bool(field, path, out)) loop.maintain = *v;
    } else if (key == "constraints") {
      if (!field.is_array()) {
        report_type(out, path, "an array of constraints", field);
        continue;
      }
      if (field.empty()) {
        report(out, path, "empty-value",
               "Invariants paradigm 'constraints' requires at least one constraint");
        continue;
      }
      constraints_ok = true;
      std::unordered_map<std::string, std::size_t> index_of_name;  // name → first constraint
      for (std::size_t i = 0; i < field.size(); ++i) {
        const std::string item_path = paradigm_index_path(path, i);
        auto c = read_constraint(field[i], i, item_path, out);
        if (!c) {
          constraints_ok = false;
          continue;
        }
        if (const auto [first, fresh] = index_of_name.try_emplace(c->name, i); !fresh)
          report(out, member_path(item_path, "name"), "duplicate-name",
                 fmt::format("duplicate constraint name {} (constraints[{}] has it too)",
                             quote_excerpt(c->name), first->second));
        constraints.push_back(std::move(*c));
      }
    } else {
      report_unknown_key(out, "", key, keys);
    }
  }
  if (has_errors(out) || !name || !constraints_ok)
    return paradigm_draft("invariants", std::move(loop), std::move(out));

  loop.name = std::move(*name);
  loop.paradigm = "invariants";
  const std::string first_check = "check_" + constraints.front().name;
  loop.initial = first_check;
  paradigm_origins origins;
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    auto& c = constraints[i];
    const std::string check_name = "check_" + c.name;
    const std::string fix_name = "fix_" + c.name;
    const std::string spec_path = paradigm_index_path("constraints", i);
    origins.add(member_path("states", check_name), spec_path);
    origins.add_state_field(check_name, "action", member_path(spec_path, "check"));
    origins.add_state_field(check_name, "evaluate", member_path(spec_path, "evaluator"));
    origins.add(member_path("states", fix_name), spec_path);
    origins.add_state_field(fix_name, "action", member_path(spec_path, "fix"));
    state_config check;
    check.action = std::move(c.check);
    check.evaluate = std::move(c.evaluator);
    // Targets are templates (design §3.3): a name is escaped so that a `${` in it is text.
    check.on["success"] = i + 1 < constraints.size()
                              ? escape_template("check_" + constraints[i + 1].name)
                              : std::string("all_valid");
    check.on["failure"] = escape_template(fix_name);
    state_config fix;
    fix.action = std::move(c.fix);
    fix.next = escape_template(check_name);
    // Unique names (duplicates were refused above): appended, not looked up.
    append_new_key(loop.states, check_name, std::move(check));
    append_new_key(loop.states, fix_name, std::move(fix));
  }
  state_config all_valid = paradigm_terminal();
  if (loop.maintain) all_valid.on_maintain = escape_template(first_check);
  loop.states["all_valid"] = std::move(all_valid);
  return paradigm_draft("invariants", std::move(loop), std::move(out), std::move(origins));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

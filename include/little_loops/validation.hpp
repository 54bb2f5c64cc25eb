// little_loops — structural rules and lints for loops: every finding is a diagnostic
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/paradigm_origins.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions check loops
#  include <little_loops/detail/host_rules.hpp>
#  include <little_loops/detail/numbers.hpp>
#  include <little_loops/detail/strings.hpp>
#  include <little_loops/detail/validation_rules.hpp>
#  include <little_loops/evaluators/output_contains.hpp>
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>


LITTLE_LOOPS_NAMESPACE_BEGIN

/// Checks a parsed loop and returns every finding, errors and warnings, in document order.
/// A loop with no error-level diagnostic is valid: load_loop() / load_loop_text() refuse any
/// other. Building an executor from an in-memory loop (compile_loop(), make_executor()) is
/// more lenient: `no-terminal` and `unknown-state` do not stop it, since a loop without a
/// terminal ends by a limit and an unknown target only fails, as the run's error, if taken
/// (compiled_loop::compile_blocking()). Rules and their stable codes:
///
/// | code | level | rule |
/// |---|---|---|
/// | `no-states` | error | `states` is empty |
/// | `unknown-initial` | error | `initial` names no state |
/// | `no-terminal` | error | no state has `terminal: true` |
/// | `unknown-state` | error | a target (next, route, `_`, `_error`, on_*, on_maintain, on_max_iterations) names no state; `$current` and `${…}` targets are exempt |
/// | `evaluator-missing-field` | error | output_numeric: operator+target; output_json: path+operator+target; output_contains: pattern; convergence: target |
/// | `evaluator-target` | error | numeric evaluators need a number or template target/tolerance |
/// | `negative-tolerance` | error | numeric tolerance < 0 |
/// | `min-confidence-range` | error | min_confidence outside [0, 1] |
/// | `no-transition` | error | non-terminal state without next, route or on_* |
/// | `max-iterations-range` | error | max_iterations ≤ 0 |
/// | `timeout-range` | error | loop timeout ≤ 0, state timeout < 0 (0 = the runner's default), either > max_duration_seconds |
/// | `backoff-range` | error | backoff < 0 or > max_duration_seconds |
/// | `llm-max-tokens-range` / `llm-timeout-range` | error | llm.max_tokens ≤ 0 / llm.timeout ≤ 0 |
/// | `route-conflict` | warning | shorthands and a route table in one state |
/// | `next-with-routing` | warning | `next` with route or on_* other than on_error |
/// | `terminal-action` | warning | a terminal state's action never runs |
/// | `next-with-evaluate` | warning | a `next:` state is never evaluated (its exit code picks on_error or next) |
/// | `terminal-transitions` | warning | a terminal state's transitions are never used |
/// | `failure-not-terminal` | warning | `failure: true` on a non-terminal state |
/// | `empty-action` | warning | `action: ""`: the state runs no action, as in the seed |
/// | `action-nul` | error | an action holding a NUL byte (`\u0000`), which no program can be given |
/// | `capture-without-action` | warning | `capture` on a state without an action (or an empty one) |
/// | `unused-state-field` | warning | `timeout` / `action_type` on a state that runs no action (none, empty, or terminal); `evaluate` on a terminal or a sub-loop state; `on_maintain` without `maintain: true`; `output` on a state that is not terminal |
/// | `subloop-action` | error | `loop` and `action` on one state |
/// | `subloop-terminal` | error | `loop` on a terminal state |
/// | `with-without-loop` | error | `with` or `context_passthrough` on a state without `loop` |
/// | `with-and-passthrough` | error | `with` and `context_passthrough` on one state |
/// | `unused-evaluator-field` | warning | an evaluator field its type does not read |
/// | `llm-disabled` | warning | llm_structured while `llm.enabled: false` |
/// | `suspicious-verdict` | warning | on_<verdict>/route key close to a built-in verdict |
/// | `impossible-verdict` | error | a routed verdict the state's evaluator never gives, close to one it gives |
/// | `unrouted-verdict` | warning | a verdict the state's evaluator gives that has no route |
/// | `pattern-not-regex` | warning | an output_contains pattern searched for as plain text: invalid for Python's re, or using a feature RE2 lacks (lookaround, backreferences) |
/// | `unreachable-state` | warning | not reachable from `initial` (or on_max_iterations) |
/// | `max-retries-range` | error | max_retries < 1 |
/// | `retry-pairing` | error | max_retries without on_retry_exhausted (or the reverse); retryable_exit_codes without on_error |
/// | `learning-targets` | error | a learning state without `targets` or `targets_csv` |
/// | `learning-routes` | error | a learning state without `on_yes`, or without both `on_blocked` and `on_no` |
/// | `learning-without-type` | error | `learning:` on a state that is not `type: learning` |
/// | `throttle-order` | error | `throttle:` with normal_max ≥ warn_max or warn_max ≥ hard_max |
/// | `classify-no-default` | warning | a classify state's route table has no `_` |
/// | `twin-shorthands` | warning | on_yes beside on_success, or on_no beside on_failure (twins) |
/// | `unknown-visibility` | warning | visibility not public, internal or example |
/// | `input-key-unguarded` | warning | input_key other than `input` without required_inputs |
/// | `unknown-tamper-guard` | warning | tamper_guard not revert, fail or allow (the guard is off) |
/// | `unknown-prepatch-check` | warning | prepatch_check not fail, warn or allow (the guard is off) |
/// | `unused-state-field` (host keys) | warning | `agent`, `pruning_profile` or `session_mode` on a state that runs no prompt action |
/// | `pruning-profile-catalog` | warning | a `/ll:` skill action under a profile with `suppress_catalog: true` |
/// | `pruning-profile-missing` | warning | a `/ll:` skill action under no pruning profile |
/// | `session-mode-evaluator` | warning | an llm_structured state with session_mode `continue` |
/// | `params-without-mcp` | error | `params` on a state whose action_type is not `mcp_tool` |
///
/// A lint flag of the reference set to true (`capture_reachability_ok`, `partial_route_ok`,
/// `unsafe_context_interpolation_ok`, `terminal_action_ok`, `tamper_guard_ok`,
/// `prepatch_check_ok`, `pruning_profile_ok`, `session_mode_ok`) drops the warning of the same
/// meaning (detail::lint_flag_codes); errors stay.
///
/// With `keep`, every template that parses is kept there, so compiling the loop does not parse
/// it again (see template_table).
LITTLE_LOOPS_INLINE diagnostics validate(const fsm_loop& loop, template_table* keep = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE diagnostics validate(const fsm_loop& loop, template_table* keep) {
  diagnostics out;
  const detail::state_index index = detail::index_states(loop);
  detail::check_loop_shape(loop, index, out);
  detail::state_name_hints hint(loop);
  for (const auto& [name, state] : loop.states)
    detail::check_state(name, state, loop, index, hint, out);
  detail::check_test_guards(loop.guards, "", out);
  for (const auto& [name, state] : loop.states)
    detail::check_test_guards(state.guards, detail::member_path("states", name), out);
  detail::check_loop_settings(loop, index, out);
  detail::check_host_settings(loop, out);
  detail::check_reachability(loop, index, out);

  // ---- template rules (interpolation.hpp) ----------------------------------------------
  validate_templates(loop, out, keep);
  // ---------------------------------------------------------------------------------------
  detail::apply_lint_flags(loop, out);

  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

LITTLE_LOOPS_INLINE void validate_read(const fsm_loop& loop, diagnostics& found,
                                       template_table* keep = nullptr);
LITTLE_LOOPS_INLINE void read_and_validate(const json& doc, fsm_loop& loop, diagnostics& found);
LITTLE_LOOPS_INLINE expected<fsm_loop, error> loaded_loop(fsm_loop&& loop, diagnostics&& found,
                                                          diagnostics* warnings);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Validates `loop`, read by read_loop() with its findings in `found`: every finding of
/// both, as the original's validator reports a loop's problems together. When the parse
/// found errors, the loop holds only what could be read, so the validator's findings are
/// kept only where they cannot stem from what is missing: errors, not warnings (an
/// unreadable route makes its target look unreachable); outside every state or top-level
/// key with a parse error (an unreadable `evaluate` changes which verdicts its routes may
/// name), except routes to a state that does not exist; none about the document or its
/// `states` as a whole (an unreadable `terminal` is not "no terminal state"). A parse error
/// on the document or on `states` itself keeps none.
LITTLE_LOOPS_INLINE void validate_read(const fsm_loop& loop, diagnostics& found, template_table* keep) {
  diagnostics checked = validate(loop, keep);
  if (count_errors(found) == 0) {
    for (auto& d : checked) found.push_back(std::move(d));
    return;
  }
  // The state or top-level key a path belongs to ("" for the document): the longest prefix
  // of `path` that is a state's path, found by hash in one pass over `path` (state names
  // may hold dots; a quadratic search would let a hostile document stall the load).
  std::unordered_set<std::uint64_t> state_hashes;
  state_hashes.reserve(loop.states.size());
  for (const auto& entry : loop.states) state_hashes.insert(fnv1a_64(member_path("states", entry.first)));
  constexpr std::string_view states_prefix = "states.";
  auto container = [&](const std::string& path) -> std::string {
    std::size_t best = 0;
    if (path.size() > states_prefix.size() && path.compare(0, states_prefix.size(), states_prefix) == 0) {
      std::uint64_t h = fnv1a_offset;
      for (std::size_t i = 0; i <= path.size(); ++i) {
        const bool boundary = i == path.size() || path[i] == '.' || path[i] == '[';
        if (boundary && i > states_prefix.size() && state_hashes.count(h) != 0) best = i;
        if (i < path.size()) h = fnv1a_step(h, path[i]);
      }
    }
    if (best != 0) return path.substr(0, best);
    return path.substr(0, path.find_first_of(".["));
  };
  std::unordered_set<std::string> unreadable;
  for (const auto& d : found) {
    if (d.level != severity::error) continue;
    std::string c = container(d.path);
    if (c.empty() || c == "states") return;
    unreadable.insert(std::move(c));
  }
  for (auto& d : checked) {
    if (d.level != severity::error || d.path.empty() || d.path == "states") continue;
    // A route to a state that does not exist is one wherever it is: targets are read as
    // written and every state is kept, even one that could not be read.
    if (d.code == "unknown-state" || unreadable.count(container(d.path)) == 0) found.push_back(std::move(d));
  }
}
LITTLE_LOOPS_INLINE void read_and_validate(const json& doc, fsm_loop& loop, diagnostics& found) {
  read_loop(doc, loop, found);
  validate_read(loop, found);
}

/// The result of read_and_validate(): errc::invalid_loop (invalid_loop_error(); error::path
/// is the path of the error when there is one) with every finding when there is an error;
/// else the loop, its warnings appended to `*warnings` when given.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> loaded_loop(fsm_loop&& loop, diagnostics&& found,
                                             diagnostics* warnings) {
  if (has_errors(found)) {
    error e = invalid_loop_error(std::move(found));
    if (count_errors(e.details) == 1)
      for (const auto& d : e.details)
        if (d.level == severity::error) e.path = d.path;
    return unexpected(std::move(e));
  }
  if (warnings)
    for (auto& d : found) warnings->push_back(std::move(d));
  return expected<fsm_loop, error>(std::move(loop));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

class loop_draft;

/// @brief A loop validate() found no error in, with the templates it parsed: the input of
/// compiled_loop::compile(validated_loop), which neither validates nor parses again.
class validated_loop {
 public:
  /// The loop definition.
  [[nodiscard]] const fsm_loop& loop() const noexcept { return loop_; }
  /// The warnings validate() reported (for a paradigm spec's draft, at the spec's paths and
  /// joined by the spec's own).
  [[nodiscard]] const diagnostics& warnings() const noexcept { return warnings_; }
  /// The loop definition, moved out (the kept templates are dropped with the rest).
  [[nodiscard]] fsm_loop release() && { return std::move(loop_); }

 private:
  friend expected<validated_loop, error> validate_loop(fsm_loop loop);
  friend expected<validated_loop, error> validate_loop(loop_draft draft);
  friend class compiled_loop;
  fsm_loop loop_;
  diagnostics warnings_;
  template_table templates_;
};

namespace detail {
struct loop_draft_access;
}  // namespace detail

/// @brief A loop read from its document (a loop document read strictly, or a paradigm spec
/// compiled) and not validated yet: the stage where a host changes it (ll-loop's
/// `--max-iterations`, `--context`, `--no-llm`) before validate_loop() judges it, once.
/// What the reader found rides along, so validation reports it with its own findings.
/// Made by read_loop_draft() and draft_paradigm().
class loop_draft {
 public:
  /// The loop as read; a host's changes go here.
  [[nodiscard]] fsm_loop& loop() noexcept { return loop_; }
  /// The loop as read.
  [[nodiscard]] const fsm_loop& loop() const noexcept { return loop_; }
  /// The reader's findings so far (errors refuse the loop in validate_loop()).
  [[nodiscard]] const diagnostics& findings() const noexcept { return found_; }

 private:
  friend struct detail::loop_draft_access;
  friend expected<validated_loop, error> validate_loop(loop_draft draft);
  fsm_loop loop_;
  diagnostics found_;
  std::string spec_title_;             // "" for a loop document; "goal", ... for a spec
  detail::paradigm_origins origins_;   // compiled path → spec path (a spec's)
};

namespace detail {
/// Makes loop_drafts: the reader's (a loop document) and the paradigm compilers' (a spec).
struct loop_draft_access {
  static loop_draft document(fsm_loop loop, diagnostics found);
  static loop_draft spec(std::string_view title, fsm_loop loop, diagnostics found,
                         paradigm_origins origins);
};
}  // namespace detail

/// @brief validate() as a step of the load pipeline: the validated loop, or errc::invalid_loop
/// with every finding (as load_loop() reports it) when there is an error-level one.
LITTLE_LOOPS_INLINE expected<validated_loop, error> validate_loop(fsm_loop loop);

/// @brief The one validation of a draft, with the reader's findings: a loop document's as
/// load_loop() reports them (errc::invalid_loop), a paradigm spec's at the spec's paths
/// (errc::invalid_spec; a spec the compiler refused is not validated). The templates
/// validation parsed are kept for compiled_loop::compile(validated_loop).
LITTLE_LOOPS_INLINE expected<validated_loop, error> validate_loop(loop_draft draft);

/// parse_loop() as the first step of the load pipeline: the loop as read, with the reader's
/// findings, for validate_loop(loop_draft) (see load_loop(), the two together).
LITTLE_LOOPS_INLINE loop_draft read_loop_draft(const json& doc);

/// parse_loop() followed by validate(). Any error-level finding gives errc::invalid_loop
/// with every diagnostic (warnings included) in error::details — the validator's findings
/// too when the parse found errors, except those restating them (see
/// detail::read_and_validate); on success the warnings are appended to `*warnings` when it
/// is given.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> load_loop(const json& doc, diagnostics* warnings = nullptr);

/// parse_loop_text() followed by validate(); see load_loop().
LITTLE_LOOPS_INLINE expected<fsm_loop, error> load_loop_text(std::string_view json_text,
                                                diagnostics* warnings = nullptr);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
namespace detail {
LITTLE_LOOPS_INLINE loop_draft loop_draft_access::document(fsm_loop loop, diagnostics found) {
  loop_draft d;
  d.loop_ = std::move(loop);
  d.found_ = std::move(found);
  return d;
}

LITTLE_LOOPS_INLINE loop_draft loop_draft_access::spec(std::string_view title, fsm_loop loop,
                                                       diagnostics found, paradigm_origins origins) {
  loop_draft d = document(std::move(loop), std::move(found));
  d.spec_title_ = title;
  d.origins_ = std::move(origins);
  return d;
}
}  // namespace detail

LITTLE_LOOPS_INLINE expected<validated_loop, error> validate_loop(fsm_loop loop) {
  validated_loop out;
  diagnostics found = validate(loop, &out.templates_);
  auto checked = detail::loaded_loop(std::move(loop), std::move(found), &out.warnings_);
  if (!checked) return unexpected(std::move(checked.error()));
  out.loop_ = std::move(*checked);
  return out;
}

LITTLE_LOOPS_INLINE expected<validated_loop, error> validate_loop(loop_draft draft) {
  validated_loop out;
  diagnostics found = std::move(draft.found_);
  if (draft.spec_title_.empty()) {
    detail::validate_read(draft.loop_, found, &out.templates_);
    auto checked = detail::loaded_loop(std::move(draft.loop_), std::move(found), &out.warnings_);
    if (!checked) return unexpected(std::move(checked.error()));
    out.loop_ = std::move(*checked);
    return out;
  }
  if (!has_errors(found))
    detail::add_spec_findings(validate(draft.loop_, &out.templates_), draft.origins_, found);
  if (has_errors(found)) return unexpected(detail::invalid_spec_error(draft.spec_title_, std::move(found)));
  out.warnings_ = std::move(found);
  out.loop_ = std::move(draft.loop_);
  return out;
}

LITTLE_LOOPS_INLINE loop_draft read_loop_draft(const json& doc) {
  diagnostics found;
  fsm_loop loop;
  detail::read_loop(doc, loop, found);
  return detail::loop_draft_access::document(std::move(loop), std::move(found));
}

LITTLE_LOOPS_INLINE expected<fsm_loop, error> load_loop(const json& doc, diagnostics* warnings) {
  diagnostics found;
  fsm_loop loop;
  detail::read_and_validate(doc, loop, found);
  return detail::loaded_loop(std::move(loop), std::move(found), warnings);
}

LITTLE_LOOPS_INLINE expected<fsm_loop, error> load_loop_text(std::string_view json_text,
                                                diagnostics* warnings) {
  diagnostics found;
  auto doc = detail::scan_json_text(json_text, found);
  if (!doc) return unexpected(std::move(doc.error()));
  fsm_loop loop;
  detail::read_and_validate(*doc, loop, found);
  return detail::loaded_loop(std::move(loop), std::move(found), warnings);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

// little_loops — structural rules and lints for loops: every finding is a diagnostic
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators/output_contains.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

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

/// Durations (`timeout`, `backoff`, `llm.timeout`) above this many seconds are rejected, so
/// converting them to clock durations can never overflow (about 31 years).
inline constexpr double max_duration_seconds = 1e9;

namespace detail {

/// Verdicts the built-in evaluators produce (seed 000, design §3.2) plus the common judge
/// verdicts; used to flag likely typos in `on_<verdict>` and route keys.
inline constexpr std::array<std::string_view, 10> well_known_verdicts{
    "success", "failure", "error", "target", "progress", "stall",
    "yes",     "no",      "partial", "blocked"};

/// One transition target of a state and the document path that names it.
struct state_reference {
  std::string path;
  const std::string* target;
  bool literal = false;  ///< a state name as written, never a template (on_maintain)
};

/// Every target a state names, in document order: next, route entries, `_`, `_error`,
/// on_<verdict> shorthands, on_maintain.
inline std::vector<state_reference> state_references(const state_config& state,
                                                     const std::string& state_path) {
  std::vector<state_reference> refs;
  if (state.next) refs.push_back({join_path(state_path, "next"), &*state.next});
  if (state.route) {
    const std::string route_path = join_path(state_path, "route");
    for (const auto& [verdict, target] : state.route->routes)
      refs.push_back({member_path(route_path, verdict), &target});
    if (state.route->default_target)
      refs.push_back({join_path(route_path, "_"), &*state.route->default_target});
    if (state.route->error_target)
      refs.push_back({join_path(route_path, "_error"), &*state.route->error_target});
  }
  for (const auto& [verdict, target] : state.on)
    refs.push_back({member_path(state_path, "on_" + verdict), &target});
  if (state.on_maintain)
    // Seed 002: `state.on_maintain or initial`, a name, not interpolated (as on_max_iterations).
    refs.push_back({join_path(state_path, "on_maintain"), &*state.on_maintain, true});
  return refs;
}

inline bool has_route_entries(const state_config& state) noexcept {
  return state.route &&
         (!state.route->routes.empty() || state.route->default_target || state.route->error_target);
}

/// The state a route target names when it is static: its text, with `$${` escapes undone
/// (`$${x}` names the state `${x}`, as the executor resolves it); nullopt when it is resolved
/// at run time (`$current`, a template with placeholders, or one that does not compile, which
/// is reported where the loop is compiled).
inline std::optional<std::string> static_target_name(const std::string& target) {
  if (target == "$current") return std::nullopt;
  if (target.find("${") == std::string::npos) return target;
  auto tpl = compile_template(target);
  if (!tpl || !tpl->is_literal()) return std::nullopt;
  return std::string(tpl->literal());
}

inline void check_evaluator(const evaluate_config& config, const std::string& path,
                            const fsm_loop& loop, diagnostics& out) {
  const std::string type_name{to_string(config.type)};
  auto require = [&](bool present, std::string_view field) {
    if (!present)
      report(out, path, "evaluator-missing-field",
             fmt::format("Evaluator type '{}' requires '{}' field", type_name, field));
  };
  // Which optional fields each type reads; anything else set is dead configuration.
  bool uses_operator = false, uses_target = false, uses_tolerance = false,
       uses_pattern = false, uses_path = false, uses_llm = false, uses_previous = false,
       uses_direction = false, uses_source = true;
  switch (config.type) {
    case evaluator_type::exit_code:
      uses_source = false;
      break;
    case evaluator_type::output_numeric:
      require(config.op.has_value(), "operator");
      require(config.target.has_value(), "target");
      uses_operator = uses_target = true;
      break;
    case evaluator_type::output_json:
      require(config.path.has_value(), "path");
      require(config.op.has_value(), "operator");
      require(config.target.has_value(), "target");
      uses_path = uses_operator = uses_target = true;
      break;
    case evaluator_type::output_contains:
      require(config.pattern.has_value(), "pattern");
      uses_pattern = true;
      break;
    case evaluator_type::convergence:
      require(config.target.has_value(), "target");
      uses_target = uses_tolerance = uses_previous = uses_direction = true;
      break;
    case evaluator_type::llm_structured:
      uses_llm = true;
      break;
  }

  // Numeric targets: output_numeric and convergence compare numbers.
  if (config.target && (config.type == evaluator_type::output_numeric ||
                        config.type == evaluator_type::convergence)) {
    const json& target = *config.target;
    const bool ok = target.is_number() ||
                    (target.is_string() &&
                     (target.get_ref<const std::string&>().find("${") != std::string::npos ||
                      // the run-time grammar (Python's float()): what validates will parse
                      parse_number(target.get_ref<const std::string&>()).has_value()));
    if (!ok)
      report(out, join_path(path, "target"), "evaluator-target",
             fmt::format("Evaluator type '{}' compares numbers: target must be a number or a "
                         "template string, got {}",
                         type_name, describe_value(target)));
  }
  // Range checks only where the type reads the field (as the original); elsewhere the field
  // is reported as unused below.
  if (config.type == evaluator_type::convergence && config.tolerance &&
      config.tolerance->is_number() && config.tolerance->get<double>() < 0)
    report(out, join_path(path, "tolerance"), "negative-tolerance",
           "Tolerance cannot be negative");
  if (config.type == evaluator_type::convergence && config.tolerance &&
      config.tolerance->is_string()) {
    const auto& text = config.tolerance->get_ref<const std::string&>();
    if (text.find("${") == std::string::npos) {
      if (const auto n = detail::parse_number(text); !n)
        report(out, join_path(path, "tolerance"), "evaluator-target",
               fmt::format("tolerance must be a number or a template string, got {}",
                           quote_excerpt(text)));
      else if (*n < 0)  // as for a number: "-1" is as negative as -1
        report(out, join_path(path, "tolerance"), "negative-tolerance",
               "Tolerance cannot be negative");
    }
  }
  // A pattern that is not run as a regex is searched for as plain text: say so, and whether
  // the original would have done the same (Python's re rejects it too) or run it as a regex
  // (a feature RE2 lacks). Interpolated patterns are only known at run time.
  if (config.type == evaluator_type::output_contains && config.pattern &&
      config.pattern->find("${") == std::string::npos) {
    const pattern_matcher matcher(*config.pattern);
    if (matcher.match_mode() == pattern_matcher::mode::substring_fallback) {
      if (matcher.rejected_by_python())
        report(out, join_path(path, "pattern"), "pattern-not-regex",
               fmt::format("pattern {} is not a valid regular expression ({}): it is searched "
                           "for as plain text, as the original does",
                           quote_excerpt(*config.pattern), matcher.regex_error()),
               severity::warning);
      else
        report(out, join_path(path, "pattern"), "pattern-not-regex",
               fmt::format("pattern {} uses a regular-expression feature RE2 does not support "
                           "({}; lookaround, backreferences, \\N{{...}} and (?x) are not): it "
                           "is searched for as plain text, where the original's re would run "
                           "it as a regex",
                           quote_excerpt(*config.pattern), matcher.regex_error()),
               severity::warning);
    }
  }
  if (config.type == evaluator_type::llm_structured &&
      !(config.min_confidence >= 0.0 && config.min_confidence <= 1.0))
    report(out, join_path(path, "min_confidence"), "min-confidence-range",
           "min_confidence must be between 0 and 1");
  if (config.type == evaluator_type::llm_structured && !loop.llm.enabled)
    report(out, path, "llm-disabled",
           "llm_structured evaluator while llm.enabled is false: the verdict is always 'error'",
           severity::warning);

  auto unused = [&](bool set, bool used, std::string_view field) {
    if (set && !used)
      report(out, join_path(path, field), "unused-evaluator-field",
             fmt::format("'{}' is not used by evaluator type '{}'", field, type_name),
             severity::warning);
  };
  unused(config.op.has_value(), uses_operator, "operator");
  unused(config.target.has_value(), uses_target, "target");
  unused(config.tolerance.has_value(), uses_tolerance, "tolerance");
  unused(config.pattern.has_value(), uses_pattern, "pattern");
  unused(config.negate, uses_pattern, "negate");
  unused(config.path.has_value(), uses_path, "path");
  unused(config.prompt.has_value(), uses_llm, "prompt");
  unused(config.schema.has_value(), uses_llm, "schema");
  unused(config.min_confidence != 0.5, uses_llm, "min_confidence");
  unused(config.uncertain_suffix, uses_llm, "uncertain_suffix");
  unused(config.source.has_value(), uses_source, "source");
  unused(config.previous.has_value(), uses_previous, "previous");
  unused(config.direction != convergence_direction::minimize, uses_direction, "direction");
}

inline void check_duration(std::optional<double> value, const std::string& path,
                           std::string_view label, std::string_view code, diagnostics& out) {
  if (!value) return;
  if (!(*value > 0))
    report(out, path, code, fmt::format("{} must be > 0, got {}", label, *value));
  else if (*value > max_duration_seconds)
    report(out, path, code,
           fmt::format("{} must be at most {} seconds, got {}", label, max_duration_seconds,
                       *value));
}

inline void check_verdict_spelling(std::string_view verdict, const std::string& path,
                                   diagnostics& out) {
  for (const auto known : well_known_verdicts)
    if (known == verdict) return;
  const auto close = closest_match(verdict, well_known_verdicts);
  if (!close) return;
  report(out, path, "suspicious-verdict",
         fmt::format("no built-in evaluator produces the verdict {} (did you mean \"{}\"?)",
                     quote_excerpt(verdict), *close),
         severity::warning);
}

}  // namespace detail

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
/// | `capture-without-action` | warning | `capture` on a state without an action (or an empty one) |
/// | `unused-state-field` | warning | `timeout` / `action_type` on a state that runs no action (none, empty, or terminal); `evaluate` on a terminal; `on_maintain` without `maintain: true` |
/// | `unused-evaluator-field` | warning | an evaluator field its type does not read |
/// | `llm-disabled` | warning | llm_structured while `llm.enabled: false` |
/// | `suspicious-verdict` | warning | on_<verdict>/route key close to a built-in verdict |
/// | `pattern-not-regex` | warning | an output_contains pattern searched for as plain text: invalid for Python's re, or using a feature RE2 lacks (lookaround, backreferences) |
/// | `unreachable-state` | warning | not reachable from `initial` (or on_max_iterations) |
inline diagnostics validate(const fsm_loop& loop) {
  using detail::report;
  diagnostics out;

  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(loop.states.size());
  std::size_t position = 0;
  for (const auto& entry : loop.states) index.emplace(entry.first, position++);
  const auto exists = [&](const std::string& name) { return index.count(name) != 0; };

  if (loop.states.empty())
    report(out, "states", "no-states", "No states defined. A loop needs at least one state");

  if (!exists(loop.initial))
    report(out, "initial", "unknown-initial",
           fmt::format("Initial state '{}' not found in states",
                       detail::sanitize_utf8(loop.initial)));

  bool any_terminal = false;
  for (const auto& entry : loop.states) any_terminal = any_terminal || entry.second.terminal;
  if (!any_terminal)
    report(out, "states", "no-terminal",
           "No terminal state defined. At least one state must have 'terminal: true'");

  // "Did you mean" for targets that name no state: the names are gathered once, and only
  // the first `state_hints_left` such targets get a hint (each is a pass over every name).
  std::vector<std::string_view> state_names;
  std::size_t state_hints_left = 64;
  auto state_hint = [&](const std::string& target) -> std::string {
    if (state_hints_left == 0) return {};
    --state_hints_left;
    if (state_names.empty()) {
      state_names.reserve(loop.states.size());
      for (const auto& s : loop.states) state_names.push_back(s.first);
    }
    return detail::did_you_mean(target, state_names);
  };

  for (const auto& [name, state] : loop.states) {
    const std::string path = detail::member_path("states", name);

    for (const auto& ref : detail::state_references(state, path)) {
      const auto named = ref.literal ? std::optional<std::string>(*ref.target)
                                     : detail::static_target_name(*ref.target);
      if (!named || exists(*named)) continue;
      report(out, ref.path, "unknown-state",
             fmt::format("References unknown state '{}'{}", detail::sanitize_utf8(*ref.target),
                         state_hint(*ref.target)));
    }

    // A state timeout of 0 means the runner's default (seed 002: `state.timeout or 120`).
    if (!(state.timeout && *state.timeout == 0))
      detail::check_duration(state.timeout, detail::join_path(path, "timeout"), "timeout",
                             "timeout-range", out);

    if (state.evaluate)
      detail::check_evaluator(*state.evaluate, detail::join_path(path, "evaluate"), loop, out);

    const bool has_shorthand = !state.on.empty();
    const bool has_route = detail::has_route_entries(state);
    if (has_shorthand && has_route)
      report(out, path, "route-conflict",
             state.route->default_target
                 ? "Both shorthand routing (on_<verdict>) and a route table with a '_' default "
                   "are defined: the route table answers every verdict, so the shorthands are "
                   "never used"
                 : "Both shorthand routing (on_<verdict>) and a route table are defined. Route "
                   "table will take precedence; shorthands only apply to verdicts it does not "
                   "route",
             severity::warning);
    if (!has_shorthand && !has_route && !state.next && !state.terminal)
      report(out, path, "no-transition",
             "State has no transition defined. Add routing, 'next', or mark as 'terminal: true'");

    if (state.next && !state.terminal) {
      bool shadowed = has_route;
      for (const auto& entry : state.on) shadowed = shadowed || entry.first != "error";
      if (shadowed)
        report(out, detail::join_path(path, "next"), "next-with-routing",
               "'next' is unconditional: the route table and on_<verdict> shorthands of this "
               "state are never used (only on_error applies, when the action fails)",
               severity::warning);
    }
    if (state.next && state.evaluate && !state.terminal)
      report(out, detail::join_path(path, "evaluate"), "next-with-evaluate",
             "'next' is unconditional: the state is never evaluated (a failed action goes to "
             "on_error when there is one, else to 'next'); use routing (on_success, ...) for "
             "the evaluator to decide",
             severity::warning);
    if (state.terminal && state.action)
      report(out, detail::join_path(path, "action"), "terminal-action",
             "Terminal state has an action, but terminal actions never run: the loop ends when "
             "it enters a terminal state",
             severity::warning);
    if (state.terminal && (state.next || has_shorthand || has_route))
      report(out, path, "terminal-transitions",
             "Terminal state has transitions (next/route/on_<verdict>) that are never used",
             severity::warning);
    if (state.failure && !state.terminal)
      report(out, detail::join_path(path, "failure"), "failure-not-terminal",
             "'failure: true' only has an effect on terminal states", severity::warning);
    if (state.action && state.action->empty() && !state.terminal)
      report(out, detail::join_path(path, "action"), "empty-action",
             "'action' is empty: the state runs no action (as if it had none)",
             severity::warning);
    if (state.capture && (!state.action || state.action->empty()))
      report(out, detail::join_path(path, "capture"), "capture-without-action",
             "'capture' on a state without an action captures nothing", severity::warning);
    // Fields of the action, of the evaluation and of the maintain restart that nothing reads
    // here (design §3.1: every accepted field has a consumer, or the user is told).
    const bool runs_action = state.action && !state.action->empty() && !state.terminal;
    if (!runs_action) {
      const char* why = state.terminal ? "a terminal state runs no action"
                                       : "this state has no action";
      if (state.timeout)
        report(out, detail::join_path(path, "timeout"), "unused-state-field",
               fmt::format("'timeout' limits the state's action, and {}: it is never used", why),
               severity::warning);
      if (state.action_type)
        report(out, detail::join_path(path, "action_type"), "unused-state-field",
               fmt::format("'action_type' says how to run the state's action, and {}: it is "
                           "never used",
                           why),
               severity::warning);
    }
    if (state.terminal && state.evaluate)
      report(out, detail::join_path(path, "evaluate"), "unused-state-field",
             "'evaluate' on a terminal state is never used: the loop ends (or, with 'maintain: "
             "true', restarts) when it enters a terminal state",
             severity::warning);
    if (state.on_maintain && !loop.maintain)
      report(out, detail::join_path(path, "on_maintain"), "unused-state-field",
             "'on_maintain' is used only in a loop with 'maintain: true': it is never used",
             severity::warning);

    for (const auto& entry : state.on)
      detail::check_verdict_spelling(entry.first, detail::join_path(path, "on_" + entry.first),
                                     out);
    if (state.route)
      for (const auto& entry : state.route->routes)
        detail::check_verdict_spelling(
            entry.first, detail::join_path(detail::join_path(path, "route"), entry.first), out);
  }

  if (loop.max_iterations <= 0)
    report(out, "max_iterations", "max-iterations-range",
           fmt::format("max_iterations must be > 0, got {}", loop.max_iterations));
  if (loop.backoff) {
    if (*loop.backoff < 0 || !(*loop.backoff == *loop.backoff))
      report(out, "backoff", "backoff-range",
             fmt::format("backoff must be >= 0, got {}", *loop.backoff));
    else if (*loop.backoff > max_duration_seconds)
      report(out, "backoff", "backoff-range",
             fmt::format("backoff must be at most {} seconds, got {}", max_duration_seconds,
                         *loop.backoff));
  }
  detail::check_duration(loop.timeout, "timeout", "timeout", "timeout-range", out);
  if (loop.llm.max_tokens <= 0)
    report(out, "llm.max_tokens", "llm-max-tokens-range",
           fmt::format("llm.max_tokens must be > 0, got {}", loop.llm.max_tokens));
  detail::check_duration(loop.llm.timeout, "llm.timeout", "llm.timeout", "llm-timeout-range",
                         out);

  if (loop.on_max_iterations && !exists(*loop.on_max_iterations))
    report(out, "on_max_iterations", "unknown-state",
           fmt::format("on_max_iterations references unknown state '{}' (must be a declared "
                       "state)",
                       detail::sanitize_utf8(*loop.on_max_iterations)));

  // Unreachable states: breadth-first from initial (and on_max_iterations, which the
  // executor enters when the cap is hit). A reachable state with an interpolated target
  // could go anywhere, so then nothing is reported. An unknown initial reaches nothing: as
  // in the original, every state (but on_max_iterations' and what it reaches) is then
  // reported too, besides the unknown-initial error.
  {
    std::vector<const state_config*> states;
    states.reserve(loop.states.size());
    for (const auto& entry : loop.states) states.push_back(&entry.second);
    std::vector<char> seen(states.size(), 0);
    std::vector<std::size_t> queue;
    if (exists(loop.initial)) {
      queue.push_back(index.at(loop.initial));
      seen[queue.back()] = 1;
    }
    if (loop.on_max_iterations && exists(*loop.on_max_iterations)) {
      const std::size_t extra = index.at(*loop.on_max_iterations);
      if (!seen[extra]) {
        seen[extra] = 1;
        queue.push_back(extra);
      }
    }
    bool dynamic = false;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      for (const auto& ref : detail::state_references(*states[queue[head]], std::string{})) {
        if (*ref.target == "$current" && !ref.literal) continue;
        const auto named = ref.literal ? std::optional<std::string>(*ref.target)
                                       : detail::static_target_name(*ref.target);
        if (!named) {
          dynamic = true;
          continue;
        }
        const auto found = index.find(*named);
        if (found == index.end() || seen[found->second]) continue;
        seen[found->second] = 1;
        queue.push_back(found->second);
      }
    }
    if (!dynamic) {
      std::size_t i = 0;
      for (const auto& entry : loop.states) {
        if (!seen[i++])
          report(out, detail::member_path("states", entry.first), "unreachable-state",
                 "State is not reachable from initial state", severity::warning);
      }
    }
  }

  // ---- template rules (interpolation.hpp, issue 3) -------------------------------------
  validate_templates(loop, out);
  // ---------------------------------------------------------------------------------------

  return out;
}

namespace detail {

/// Validates `loop`, read by read_loop() with its findings in `found`: every finding of
/// both, as the original's validator reports a loop's problems together. When the parse
/// found errors, the loop holds only what could be read, so the validator's findings are
/// kept only where they cannot stem from what is missing: errors, not warnings (an
/// unreadable route makes its target look unreachable); outside every state or top-level
/// key with a parse error (an unreadable `evaluate` changes which verdicts its routes may
/// name), except routes to a state that does not exist; none about the document or its
/// `states` as a whole (an unreadable `terminal` is not "no terminal state"). A parse error
/// on the document or on `states` itself keeps none.
inline void validate_read(const fsm_loop& loop, diagnostics& found) {
  diagnostics checked = validate(loop);
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
inline void read_and_validate(const json& doc, fsm_loop& loop, diagnostics& found) {
  read_loop(doc, loop, found);
  validate_read(loop, found);
}

/// The result of read_and_validate(): errc::invalid_loop (invalid_loop_error(); error::path
/// is the path of the error when there is one) with every finding when there is an error;
/// else the loop, its warnings appended to `*warnings` when given.
inline expected<fsm_loop, error> loaded_loop(fsm_loop&& loop, diagnostics&& found,
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

}  // namespace detail

/// parse_loop() followed by validate(). Any error-level finding gives errc::invalid_loop
/// with every diagnostic (warnings included) in error::details — the validator's findings
/// too when the parse found errors, except those restating them (see
/// detail::read_and_validate); on success the warnings are appended to `*warnings` when it
/// is given.
inline expected<fsm_loop, error> load_loop(const json& doc, diagnostics* warnings = nullptr) {
  diagnostics found;
  fsm_loop loop;
  detail::read_and_validate(doc, loop, found);
  return detail::loaded_loop(std::move(loop), std::move(found), warnings);
}

/// parse_loop_text() followed by validate(); see load_loop().
inline expected<fsm_loop, error> load_loop_text(std::string_view json_text,
                                                diagnostics* warnings = nullptr) {
  diagnostics found;
  auto doc = detail::scan_json_text(json_text, found);
  if (!doc) return unexpected(std::move(doc.error()));
  fsm_loop loop;
  detail::read_and_validate(*doc, loop, found);
  return detail::loaded_loop(std::move(loop), std::move(found), warnings);
}

LITTLE_LOOPS_NAMESPACE_END

// little_loops — the rules validate() checks: the loop's shape, each state and evaluator
// SPDX-License-Identifier: MIT
#pragma once

// Part of validation.hpp (included there after max_duration_seconds). Each rule appends
// its diagnostics to `out`; validate() runs them in the order it reports.

#include <little_loops/config.hpp>
#include <little_loops/detail/foreign_keys.hpp>
#include <little_loops/detail/resilience_rules.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/state_plugin_rules.hpp>
#include <little_loops/detail/state_verdicts.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/detail/subloop_rules.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators/output_contains.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_NAMESPACE_BEGIN
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
  if (state.on_retry_exhausted)
    refs.push_back({join_path(state_path, "on_retry_exhausted"), &*state.on_retry_exhausted, true});
  for (const auto& [cls, target] : state.resilience.catches)
    refs.push_back({join_path(join_path(state_path, "catch"), cls), &target, true});
  if (state.resilience.on_rate_limit_exhausted)
    refs.push_back({join_path(state_path, "on_rate_limit_exhausted"),
                    &*state.resilience.on_rate_limit_exhausted, true});
  if (state.on_throttle_hard)  // a name, as the reference takes it (not interpolated)
    refs.push_back({join_path(state_path, "on_throttle_hard"), &*state.on_throttle_hard, true});
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

/// A verdict routed by `state` that its evaluator can never give but that is close to one it
/// gives (`on_sucess` on an exit_code state) is an error with a did-you-mean
/// (`impossible-verdict`): the run would end in "No valid transition". Other unknown verdicts
/// close to a well-known one are a warning (`suspicious-verdict`).
inline void check_verdict_spelling(const state_config& state, std::string_view verdict,
                                   const std::string& path, diagnostics& out) {
  if (const auto produced = producible_verdicts(state)) {
    std::vector<std::string_view> known = *produced;
    for (const auto v : *produced)
      if (!twin_verdict(v).empty()) known.push_back(twin_verdict(v));
    if (state.loop) known.insert(known.end(), {"error", "timeout"});  // routed when given
    if (names_contain(known, verdict)) return;
    if (const auto close = closest_match(verdict, known)) {
      report(out, path, "impossible-verdict",
             fmt::format("{} can never produce the verdict {} (did you mean \"{}\"?)",
                         verdict_source(state), quote_excerpt(verdict), *close));
      return;
    }
  }
  for (const auto known : well_known_verdicts)
    if (known == verdict) return;
  const auto close = closest_match(verdict, well_known_verdicts);
  if (!close) return;
  report(out, path, "suspicious-verdict",
         fmt::format("no built-in evaluator produces the verdict {} (did you mean \"{}\"?)",
                     quote_excerpt(verdict), *close),
         severity::warning);
}

/// Which optional fields an evaluator type reads; anything else set is dead configuration.
struct evaluator_uses {
  bool op = false, target = false, tolerance = false, pattern = false, path = false,
       llm = false, previous = false, direction = false, source = true, line = false, key = false, error_patterns = false;
};

/// Reports the fields `config`'s type requires and are missing (`evaluator-missing-field`);
/// returns the fields the type reads.
inline evaluator_uses check_required_fields(const evaluate_config& config,
                                            const std::string& path,
                                            const std::string& type_name, diagnostics& out) {
  auto require = [&](bool present, std::string_view field) {
    if (!present)
      report(out, path, "evaluator-missing-field",
             fmt::format("Evaluator type '{}' requires '{}' field", type_name, field));
  };
  evaluator_uses uses;
  switch (config.type) {
    case evaluator_type::exit_code:
      uses.source = false;
      break;
    case evaluator_type::output_numeric:
      require(config.op.has_value(), "operator");
      require(config.target.has_value(), "target");
      uses.op = uses.target = uses.key = true;
      break;
    case evaluator_type::output_json:
      require(config.path.has_value(), "path");
      require(config.op.has_value(), "operator");
      require(config.target.has_value(), "target");
      uses.path = uses.op = uses.target = true;
      break;
    case evaluator_type::output_contains:
      require(config.pattern.has_value(), "pattern");
      uses.pattern = uses.error_patterns = true;
      break;
    case evaluator_type::convergence:
      require(config.target.has_value(), "target");
      uses.target = uses.tolerance = uses.previous = uses.direction = true;
      break;
    case evaluator_type::llm_structured:
      uses.llm = true;
      break;
    case evaluator_type::classify:
      uses.line = true;
      break;
    case evaluator_type::harbor_scorer:
    case evaluator_type::mcp_result:
      break;
    case evaluator_type::diff_stall:
    case evaluator_type::score_stall:
    case evaluator_type::open_question_stall:
    case evaluator_type::action_stall:
      uses.source = false;
      break;
  }
  return uses;
}

/// output_numeric and convergence compare numbers: their target is a number or a string
/// that is a template or a number (`evaluator-target`).
inline void check_numeric_target(const evaluate_config& config, const std::string& path,
                                 const std::string& type_name, diagnostics& out) {
  if (!config.target || (config.type != evaluator_type::output_numeric &&
                         config.type != evaluator_type::convergence))
    return;
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

/// A convergence tolerance is not negative, as a number or as a string that is not a
/// template. Range checks are made only where the type reads the field (as the original);
/// elsewhere the field is reported as unused.
inline void check_tolerance(const evaluate_config& config, const std::string& path,
                            diagnostics& out) {
  if (config.type != evaluator_type::convergence || !config.tolerance) return;
  if (config.tolerance->is_number() && config.tolerance->get<double>() < 0)
    report(out, join_path(path, "tolerance"), "negative-tolerance",
           "Tolerance cannot be negative");
  if (!config.tolerance->is_string()) return;
  const auto& text = config.tolerance->get_ref<const std::string&>();
  if (text.find("${") != std::string::npos) return;
  if (const auto n = parse_number(text); !n)
    report(out, join_path(path, "tolerance"), "evaluator-target",
           fmt::format("tolerance must be a number or a template string, got {}",
                       quote_excerpt(text)));
  else if (*n < 0)  // as for a number: "-1" is as negative as -1
    report(out, join_path(path, "tolerance"), "negative-tolerance",
           "Tolerance cannot be negative");
}

/// A pattern that is not run as a regex is searched for as plain text: says so, and whether
/// the original would have done the same (Python's re rejects it too) or run it as a regex
/// (a feature RE2 lacks). Interpolated patterns are only known at run time.
inline void check_pattern(const evaluate_config& config, const std::string& path,
                          diagnostics& out) {
  if (config.type != evaluator_type::output_contains || !config.pattern ||
      config.pattern->find("${") != std::string::npos)
    return;
  const pattern_matcher matcher(*config.pattern);
  if (matcher.match_mode() != pattern_matcher::mode::substring_fallback) return;
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

/// llm_structured: min_confidence in [0, 1], and the loop's LLM enabled.
inline void check_llm_judge(const evaluate_config& config, const std::string& path,
                            const fsm_loop& loop, diagnostics& out) {
  if (config.type != evaluator_type::llm_structured) return;
  if (!(config.min_confidence >= 0.0 && config.min_confidence <= 1.0))
    report(out, join_path(path, "min_confidence"), "min-confidence-range",
           "min_confidence must be between 0 and 1");
  if (!loop.llm.enabled)
    report(out, path, "llm-disabled",
           "llm_structured evaluator while llm.enabled is false: the verdict is always 'error'",
           severity::warning);
}

/// Warns about each field set that the evaluator's type does not read.
inline void report_unused_fields(const evaluate_config& config, const evaluator_uses& uses,
                                 const std::string& path, const std::string& type_name,
                                 diagnostics& out) {
  auto unused = [&](bool set, bool used, std::string_view field) {
    if (set && !used)
      report(out, join_path(path, field), "unused-evaluator-field",
             fmt::format("'{}' is not used by evaluator type '{}'", field, type_name),
             severity::warning);
  };
  unused(config.op.has_value(), uses.op, "operator");
  unused(config.target.has_value(), uses.target, "target");
  unused(config.tolerance.has_value(), uses.tolerance, "tolerance");
  unused(config.pattern.has_value(), uses.pattern, "pattern");
  unused(config.negate, uses.pattern, "negate");
  unused(config.path.has_value(), uses.path, "path");
  unused(config.prompt.has_value(), uses.llm, "prompt");
  unused(config.schema.has_value(), uses.llm, "schema");
  unused(config.min_confidence != 0.5, uses.llm, "min_confidence");
  unused(config.uncertain_suffix, uses.llm, "uncertain_suffix");
  unused(config.source.has_value(), uses.source, "source");
  unused(config.previous.has_value(), uses.previous, "previous");
  unused(config.direction != convergence_direction::minimize, uses.direction, "direction");
  unused(config.line.has_value(), uses.line, "line");
  unused(config.key.has_value(), uses.key, "key");
  unused(!config.error_patterns.empty(), uses.error_patterns, "error_patterns");
}

/// The rules of one `evaluate:` at `path`, in order: required fields, numeric target,
/// tolerance, pattern, LLM judge settings, unused fields.
inline void check_evaluator(const evaluate_config& config, const std::string& path,
                            const fsm_loop& loop, diagnostics& out) {
  const std::string type_name{to_string(config.type)};
  const evaluator_uses uses = check_required_fields(config, path, type_name, out);
  check_numeric_target(config, path, type_name, out);
  check_tolerance(config, path, out);
  check_pattern(config, path, out);
  check_llm_judge(config, path, loop, out);
  report_unused_fields(config, uses, path, type_name, out);
}

/// Position of each state in document order, by name.
using state_index = std::unordered_map<std::string_view, std::size_t>;

inline state_index index_states(const fsm_loop& loop) {
  state_index index;
  index.reserve(loop.states.size());
  std::size_t position = 0;
  for (const auto& entry : loop.states) index.emplace(entry.first, position++);
  return index;
}

/// "Did you mean" for targets that name no state: the names are gathered once, and only
/// the first `hints_left` such targets get a hint (each is a pass over every name).
class state_name_hints {
 public:
  explicit state_name_hints(const fsm_loop& loop) : loop_(loop) {}

  std::string operator()(const std::string& target) {
    if (hints_left_ == 0) return {};
    --hints_left_;
    if (names_.empty()) {
      names_.reserve(loop_.states.size());
      for (const auto& s : loop_.states) names_.push_back(s.first);
    }
    return did_you_mean(target, names_);
  }

 private:
  const fsm_loop& loop_;
  std::vector<std::string_view> names_;
  std::size_t hints_left_ = 64;
};

/// `no-states`, `unknown-initial`, `no-terminal`.
inline void check_loop_shape(const fsm_loop& loop, const state_index& index, diagnostics& out) {
  if (loop.states.empty())
    report(out, "states", "no-states", "No states defined. A loop needs at least one state");
  if (index.count(loop.initial) == 0)
    report(out, "initial", "unknown-initial",
           fmt::format("Initial state '{}' not found in states", sanitize_utf8(loop.initial)));
  bool any_terminal = false;
  for (const auto& entry : loop.states) any_terminal = any_terminal || entry.second.terminal;
  if (!any_terminal)
    report(out, "states", "no-terminal",
           "No terminal state defined. At least one state must have 'terminal: true'");
}

/// `unknown-state` for each static target of `state` that names no state.
inline void check_targets(const state_config& state, const std::string& path,
                          const state_index& index, state_name_hints& hint, diagnostics& out) {
  for (const auto& ref : state_references(state, path)) {
    const auto named = ref.literal ? std::optional<std::string>(*ref.target)
                                   : static_target_name(*ref.target);
    if (!named || index.count(*named) != 0) continue;
    report(out, ref.path, "unknown-state",
           fmt::format("References unknown state '{}'{}", sanitize_utf8(*ref.target),
                       hint(*ref.target)));
  }
}

/// How a state leaves: `route-conflict`, `no-transition`, `next-with-routing`,
/// `next-with-evaluate`, `terminal-action`, `terminal-transitions`.
inline void check_transitions(const state_config& state, const std::string& path,
                              diagnostics& out) {
  const bool has_shorthand = !state.on.empty();
  const bool has_route = has_route_entries(state);
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
      report(out, join_path(path, "next"), "next-with-routing",
             "'next' is unconditional: the route table and on_<verdict> shorthands of this "
             "state are never used (only on_error applies, when the action fails)",
             severity::warning);
  }
  if (state.next && state.evaluate && !state.terminal)
    report(out, join_path(path, "evaluate"), "next-with-evaluate",
           "'next' is unconditional: the state is never evaluated (a failed action goes to "
           "on_error when there is one, else to 'next'); use routing (on_success, ...) for "
           "the evaluator to decide",
           severity::warning);
  if (state.terminal && state.action)
    report(out, join_path(path, "action"), "terminal-action",
           "Terminal state has an action, but terminal actions never run: the loop ends when "
           "it enters a terminal state",
           severity::warning);
  if (state.terminal && (state.next || has_shorthand || has_route))
    report(out, path, "terminal-transitions",
           "Terminal state has transitions (next/route/on_<verdict>) that are never used",
           severity::warning);
}

/// `failure-not-terminal`, `empty-action`, `capture-without-action`, `action-nul`.
inline void check_action_fields(const state_config& state, const std::string& path,
                                diagnostics& out) {
  // A program gets its arguments as C strings: the runner refuses a NUL (it would cut the
  // action short), so a loop whose action holds one can never run it.
  if (state.action && !state.terminal)
    if (const auto nul = state.action->find('\0'); nul != std::string::npos)
      report(out, join_path(path, "action"), "action-nul",
             fmt::format("'action' holds a NUL byte (\\u0000, at byte {}): a program cannot be given it", nul));
  if (state.failure && !state.terminal)
    report(out, join_path(path, "failure"), "failure-not-terminal",
           "'failure: true' only has an effect on terminal states", severity::warning);
  if (state.action && state.action->empty() && !state.terminal)
    report(out, join_path(path, "action"), "empty-action",
           "'action' is empty: the state runs no action (as if it had none)", severity::warning);
  if (state.capture && (!state.action || state.action->empty()) && !state.loop)
    report(out, join_path(path, "capture"), "capture-without-action",
           "'capture' on a state without an action captures nothing", severity::warning);
}

/// `unused-state-field`: fields of the action, of the evaluation and of the maintain restart
/// that nothing reads here (design §3.1: every accepted field has a consumer, or the user is
/// told).
inline void check_unused_state_fields(const state_config& state, const std::string& path,
                                      const fsm_loop& loop, diagnostics& out) {
  const bool runs_action = state.action && !state.action->empty() && !state.terminal;
  if (!runs_action) {
    const char* why = state.terminal ? "a terminal state runs no action"
                                     : "this state has no action";
    if (state.timeout && !state.loop)  // a sub-loop state's timeout bounds its child
      report(out, join_path(path, "timeout"), "unused-state-field",
             fmt::format("'timeout' limits the state's action, and {}: it is never used", why),
             severity::warning);
    if (state.action_type)
      report(out, join_path(path, "action_type"), "unused-state-field",
             fmt::format("'action_type' says how to run the state's action, and {}: it is "
                         "never used",
                         why),
             severity::warning);
  }
  if (state.terminal && state.evaluate)
    report(out, join_path(path, "evaluate"), "unused-state-field",
           "'evaluate' on a terminal state is never used: the loop ends (or, with 'maintain: "
           "true', restarts) when it enters a terminal state",
           severity::warning);
  if (state.on_maintain && !loop.maintain)
    report(out, join_path(path, "on_maintain"), "unused-state-field",
           "'on_maintain' is used only in a loop with 'maintain: true': it is never used",
           severity::warning);
}

/// `retry-pairing`, `max-retries-range`: `max_retries` (≥ 1) and `on_retry_exhausted` go
/// together; `retryable_exit_codes` needs `on_error`. `classify-no-default`: a classify
/// state whose route table has no `_`. `twin-shorthands`: on_yes beside on_success (or on_no
/// beside on_failure).
inline void check_retry_fields(const state_config& state, const std::string& path,
                               diagnostics& out) {
  if (state.max_retries && *state.max_retries < 1)
    report(out, join_path(path, "max_retries"), "max-retries-range",
           fmt::format("'max_retries' must be >= 1, got {}", *state.max_retries));
  if (state.max_retries && !state.on_retry_exhausted)
    report(out, join_path(path, "max_retries"), "retry-pairing",
           "'max_retries' requires 'on_retry_exhausted' to also be set");
  if (state.on_retry_exhausted && !state.max_retries)
    report(out, join_path(path, "on_retry_exhausted"), "retry-pairing",
           "'on_retry_exhausted' requires 'max_retries' to also be set");
  if (!state.retryable_exit_codes.empty() && state.on.count("error") == 0)
    report(out, join_path(path, "retryable_exit_codes"), "retry-pairing",
           "'retryable_exit_codes' requires 'on_error' to also be set");
  for (const auto& [verdict, twin] : {std::pair{"yes", "success"}, std::pair{"no", "failure"}})
    if (state.on.count(verdict) != 0 && state.on.count(twin) != 0)
      report(out, join_path(path, std::string("on_") + twin), "twin-shorthands",
             fmt::format("on_{} and on_{} route twin verdicts: each verdict takes its own, the "
                         "other only as a fallback",
                         verdict, twin),
             severity::warning);
  if (state.evaluate && state.evaluate->type == evaluator_type::classify && state.route &&
      !state.route->default_target)
    report(out, join_path(path, "route"), "classify-no-default",
           "classify routes on a free token: without a '_' route, an unexpected or empty token "
           "has no transition",
           severity::warning);
}

/// A warning per verdict that the state's evaluator can give but that finds no route
/// (`unrouted-verdict`): the run would end there with "No valid transition". Only for a
/// state that routes by verdict (a state with no routing at all is `no-transition`).
inline void check_unrouted_verdicts(const state_config& state, const std::string& path,
                                    diagnostics& out) {
  if (state.terminal || state.next || (state.on.empty() && !has_route_entries(state))) return;
  const auto unrouted = unrouted_verdicts(state);
  if (!unrouted) return;
  for (const auto verdict : *unrouted)
    report(out, path, "unrouted-verdict",
           fmt::format("{} can give the verdict \"{}\", which has no route here: the run would "
                       "stop with \"No valid transition\"; add on_{}{}",
                       verdict_source(state), verdict,
                       verdict, verdict == "error" ? " (or route._error)" : ""),
           severity::warning);
}

/// The rules of one state, in the order their diagnostics are reported.
inline void check_state(const std::string& name, const state_config& state, const fsm_loop& loop,
                        const state_index& index, state_name_hints& hint, diagnostics& out) {
  const std::string path = member_path("states", name);
  check_targets(state, path, index, hint, out);
  // A state timeout of 0 means the runner's default (seed 002: `state.timeout or 120`).
  if (!(state.timeout && *state.timeout == 0))
    check_duration(state.timeout, join_path(path, "timeout"), "timeout", "timeout-range", out);
  if (state.evaluate) check_evaluator(*state.evaluate, join_path(path, "evaluate"), loop, out);
  check_transitions(state, path, out);
  check_action_fields(state, path, out);
  check_unused_state_fields(state, path, loop, out);
  check_retry_fields(state, path, out);
  check_subloop_fields(state, path, out);
  check_rate_limit_pairing(state, path, out);
  check_state_plugins(state, path, out);
  if (state.evaluate) check_stall_fields(*state.evaluate, join_path(path, "evaluate"), out);
  for (const auto& entry : state.on)
    check_verdict_spelling(state, entry.first, join_path(path, "on_" + entry.first), out);
  if (state.route)
    for (const auto& entry : state.route->routes)
      check_verdict_spelling(state, entry.first, join_path(join_path(path, "route"), entry.first), out);
  // (A paradigm's states are compiled, not written: its spec has no place for a route.)
  if (!loop.maintain && !loop.paradigm) check_unrouted_verdicts(state, path, out);
}

/// `visibility` (warning: counts as public), `input-key-unguarded` (an `input_key` other
/// than `input` without `required_inputs`).
inline void check_loop_metadata(const fsm_loop& loop, diagnostics& out) {
  if (loop.visibility && *loop.visibility != "public" && *loop.visibility != "internal" &&
      *loop.visibility != "example")
    report(out, "visibility", "unknown-visibility",
           fmt::format("visibility {} is not one of public, internal, example: the loop counts "
                       "as public{}",
                       quote_excerpt(*loop.visibility),
                       did_you_mean(*loop.visibility,
                                    std::array<std::string_view, 3>{"public", "internal", "example"})),
           severity::warning);
  if (loop.input_key != "input" && loop.required_inputs.empty())
    report(out, "input_key", "input-key-unguarded",
           fmt::format("Loop sets input_key: '{}' but does not declare required_inputs: a run "
                       "without input leaves ${{context.{}}} unset",
                       sanitize_utf8(loop.input_key), sanitize_utf8(loop.input_key)),
           severity::warning);
}

/// Warnings silenced by the reference's lint-suppression flags (flag → our code of the same
/// meaning). A flag never silences an error.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 9> lint_flag_codes{{
    {"capture_reachability_ok", "template-unknown-capture"},
    {"pruning_profile_ok", "pruning-profile-catalog"},
    {"pruning_profile_ok", "pruning-profile-missing"},
    {"session_mode_ok", "session-mode-evaluator"},
    {"partial_route_ok", "classify-no-default"},
    {"unsafe_context_interpolation_ok", "template-unquoted-context"},
    {"terminal_action_ok", "terminal-action"},
    {"tamper_guard_ok", "unknown-tamper-guard"},
    {"prepatch_check_ok", "unknown-prepatch-check"},
}};

/// Drops the warnings that a lint flag set to true in `loop` silences.
inline void apply_lint_flags(const fsm_loop& loop, diagnostics& out) {
  if (loop.lint_flags.empty()) return;
  auto silenced = [&](const diagnostic& d) {
    if (d.level != severity::warning) return false;
    for (const auto& [flag, code] : lint_flag_codes) {
      if (d.code != code) continue;
      const auto it = loop.lint_flags.find(std::string(flag));
      if (it != loop.lint_flags.end() && it->second) return true;
    }
    return false;
  };
  out.erase(std::remove_if(out.begin(), out.end(), silenced), out.end());
}

/// `max-iterations-range`, `backoff-range`, `timeout-range`, `llm-max-tokens-range`,
/// `llm-timeout-range`, and on_max_iterations naming no state (`unknown-state`).
inline void check_loop_settings(const fsm_loop& loop, const state_index& index,
                                diagnostics& out) {
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
  check_duration(loop.timeout, "timeout", "timeout", "timeout-range", out);
  check_duration(loop.default_timeout, "default_timeout", "default_timeout", "timeout-range", out);
  if (loop.llm.max_tokens <= 0)
    report(out, "llm.max_tokens", "llm-max-tokens-range",
           fmt::format("llm.max_tokens must be > 0, got {}", loop.llm.max_tokens));
  check_duration(loop.llm.timeout, "llm.timeout", "llm.timeout", "llm-timeout-range", out);
  if (loop.max_passes && *loop.max_passes <= 0)
    report(out, "max_iterations", "max-iterations-range",
           fmt::format("max_iterations must be > 0, got {}", *loop.max_passes));
  if (loop.on_max_passes && index.count(*loop.on_max_passes) == 0)
    report(out, "on_max_iterations", "unknown-state",
           fmt::format("on_max_iterations references unknown state '{}' (must be a declared "
                       "state)",
                       sanitize_utf8(*loop.on_max_passes)));
  check_loop_metadata(loop, out);
  check_circuit(loop, index, out);
  if (loop.on_max_iterations && index.count(*loop.on_max_iterations) == 0)
    report(out, "on_max_iterations", "unknown-state",
           fmt::format("on_max_iterations references unknown state '{}' (must be a declared "
                       "state)",
                       sanitize_utf8(*loop.on_max_iterations)));
}

/// Which states are reachable, breadth-first from initial (and on_max_iterations, which the
/// executor enters when the cap is hit), by position; std::nullopt when a reachable state
/// has an interpolated target, which could go anywhere.
inline std::optional<std::vector<char>> reachable_states(const fsm_loop& loop,
                                                         const state_index& index) {
  std::vector<const state_config*> states;
  states.reserve(loop.states.size());
  for (const auto& entry : loop.states) states.push_back(&entry.second);
  std::vector<char> seen(states.size(), 0);
  std::vector<std::size_t> queue;
  auto enter = [&](const std::string& name) {
    const auto found = index.find(name);
    if (found == index.end() || seen[found->second]) return;
    seen[found->second] = 1;
    queue.push_back(found->second);
  };
  enter(loop.initial);
  if (loop.on_max_iterations) enter(*loop.on_max_iterations);
  if (loop.on_max_passes) enter(*loop.on_max_passes);
  if (const auto& rf = loop.resilience.repeated_failure; rf && rf->on_repeated_failure != "abort")
    enter(rf->on_repeated_failure);  // the circuit enters it
  bool dynamic = false;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    for (const auto& ref : state_references(*states[queue[head]], std::string{})) {
      if (*ref.target == "$current" && !ref.literal) continue;
      const auto named = ref.literal ? std::optional<std::string>(*ref.target)
                                     : static_target_name(*ref.target);
      if (named)
        enter(*named);
      else
        dynamic = true;
    }
  }
  if (dynamic) return std::nullopt;
  return seen;
}

/// `unreachable-state` for each state not reachable from initial (see reachable_states). An
/// unknown initial reaches nothing: as in the original, every state (but on_max_iterations'
/// and what it reaches) is then reported too, besides the unknown-initial error.
inline void check_reachability(const fsm_loop& loop, const state_index& index,
                               diagnostics& out) {
  const auto seen = reachable_states(loop, index);
  if (!seen) return;
  std::size_t i = 0;
  for (const auto& entry : loop.states) {
    if (!(*seen)[i++])
      report(out, member_path("states", entry.first), "unreachable-state",
             "State is not reachable from initial state", severity::warning);
  }
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

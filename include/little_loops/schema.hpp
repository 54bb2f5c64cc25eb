// little_loops — loop schema value types and their strict JSON (de)serialisation
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/guards.hpp>
#include <little_loops/host_settings.hpp>
#include <little_loops/json.hpp>
#include <little_loops/learning.hpp>
#include <little_loops/resilience.hpp>
#include <little_loops/throttle.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/schema_enums.hpp>
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions read and write these sections
#  include <little_loops/detail/guard_fields.hpp>
#  include <little_loops/detail/host_fields.hpp>
#  include <little_loops/detail/resilience_fields.hpp>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
#include <little_loops/detail/strings.hpp>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The insertion-ordered map of the schema types (verdict → target, name → state). It is
/// nlohmann's ordered_map (a vector of `pair<const Key, Value>` with a map interface) made
/// copy-assignable: the base's element type has no copy assignment, so a plain
/// ordered_map member would make `state = other_state` ill-formed.
template <class Key, class Value>
class ordered_table : public ordered_map<Key, Value> {
 public:
  using base_type = ordered_map<Key, Value>;
  using value_type = typename base_type::value_type;

  ordered_table() = default;
  ordered_table(std::initializer_list<value_type> init) : base_type(init) {}
  template <class It>
  ordered_table(It first, It last) : base_type(first, last) {}
  ordered_table(const base_type& other) : base_type(other) {}  // NOLINT: implicit by design
  ordered_table(base_type&& other) noexcept : base_type(std::move(other)) {}
  ordered_table(const ordered_table&) = default;
  ordered_table(ordered_table&&) noexcept = default;
  ~ordered_table() = default;

  ordered_table& operator=(ordered_table&& other) noexcept = default;
  ordered_table& operator=(const ordered_table& other) {
    if (this != &other) {
      base_type copy(other);
      static_cast<base_type&>(*this) = std::move(copy);  // vector move: no element assignment
    }
    return *this;
  }
};

/// Which evaluator turns an action result into a verdict (seed 000, design §3.9–3.10).
enum class evaluator_type {
  exit_code,        ///< 0 → success, 1 → failure, other → error
  output_numeric,   ///< parse stdout as a number and compare with `target`
  output_json,      ///< extract `path` from stdout JSON and compare with `target`
  output_contains,  ///< regex/substring `pattern` in stdout, optionally negated
  convergence,      ///< compare a value with `target` and the previous value
  llm_structured,   ///< ask an LLM judge (host-supplied backend)
  classify,         ///< one line of the output (`line:`), trimmed, is the verdict
  diff_stall,           ///< `yes` while `git diff --stat` changes (resilience.hpp)
  score_stall,          ///< `yes` while a score history improves by more than epsilon
  open_question_stall,  ///< `yes` while an open-question count history decreases
  action_stall,         ///< `yes` until tracked values repeat max_repeat times
  harbor_scorer,        ///< a benchmark scorer: exit code, then a float score (`yes`/`no`)
  mcp_result,           ///< an MCP tool call's exit code and response envelope
};

/// Which rules a loop follows (design §6.1): `seed`, the January 2026 engine's, or
/// `current`, today's little-loops (`yes`/`no` verdicts, an unrouted `no` taking the error
/// route, the blind-evaluator rule, failure terminals by name, `max_steps` with full
/// passes). Declared with `dialect:`; dialect_of() infers it when absent.
enum class loop_dialect { seed, current };

/// Comparison operators of output_numeric / output_json (`operator:` in documents).
enum class comparison_op { eq, ne, lt, le, gt, ge };

/// Direction of improvement for convergence.
enum class convergence_direction { minimize, maximize };

/// How an action's text is run (`action_type:` in documents).
enum class action_kind {
  shell,          ///< a shell command
  prompt,         ///< an LLM prompt
  slash_command,  ///< a slash command for an agent CLI
  mcp_tool,       ///< an MCP tool call: the action names `server/tool`, `params:` its arguments
};

/// True when `text`, an action without `action_type:`, is a slash command: its first word is
/// `/name` or `/namespace:name` (letters, digits, `_`, `-`, `.`; no second `/`), so `/ll:fix
/// src` is one and `/usr/bin/true` is a shell command (design §3.17). The executor asks again
/// of the rendered text of a templated action.
constexpr bool is_slash_command_text(std::string_view text) noexcept {
  const auto word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
  };
  if (text.size() < 2 || text[0] != '/' || !word_char(text[1]) || text[1] == '.') return false;
  bool colon = false;
  std::size_t i = 2;
  for (; i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r'; ++i) {
    if (text[i] == ':' && !colon && word_char(text[i - 1])) colon = true;
    else if (!word_char(text[i])) return false;
  }
  return text[i - 1] != ':';
}

/// What the host does on a `CONTEXT_HANDOFF:` signal (`on_handoff:` in documents). The
/// executor ends the run as `handoff` with a snapshot either way (execution_result carries
/// the policy); the host acts on it, as the original's: `pause` keeps the run resumable
/// (journal status `awaiting_continuation`); `spawn` does too and starts a detached agent
/// session told to resume it (ll-loop: the prompt command with `Continue loop execution.
/// Run: ll-loop resume NAME`); `terminate` ends the run there, not resumable (journal
/// status `terminated`, no snapshot kept; journal_status_for(), run_journaled()).
enum class handoff_policy { pause, spawn, terminate };

/// Evaluator configuration of a state (`evaluate:`). Every string field may hold `${...}`
/// templates; `target` and `tolerance` may be numbers or template strings.
struct evaluate_config {
  evaluator_type type = evaluator_type::exit_code;
  std::optional<comparison_op> op;          ///< `operator`
  std::optional<json> target;               ///< number, string (template) or any JSON value
  std::optional<json> tolerance;            ///< number or template string (convergence)
  std::optional<std::string> pattern;       ///< output_contains
  bool negate = false;                      ///< output_contains
  std::optional<std::string> path;          ///< output_json
  std::optional<std::string> prompt;        ///< llm_structured
  std::optional<json> schema;               ///< llm_structured response schema (an object)
  double min_confidence = 0.5;              ///< llm_structured, in [0, 1]
  bool uncertain_suffix = false;            ///< llm_structured: `<verdict>_uncertain`
  std::optional<std::string> source;        ///< replaces the action output as input
  std::optional<std::string> previous;      ///< convergence: template of the previous value
  convergence_direction direction = convergence_direction::minimize;
  /// classify: which non-blank line is the token: `"first"`, `"last"` (the default) or an
  /// integer index, negative from the end.
  std::optional<json> line;
  /// output_numeric: read the number after the last `KEY =` in the output.
  std::optional<std::string> key;
  /// output_contains: substrings that make a non-matching output `error` instead.
  std::vector<std::string> error_patterns;
  stall_config stall;  ///< the stall evaluators' fields

  friend bool operator==(const evaluate_config&, const evaluate_config&) = default;
};

/// Verdict → target routing table of a state (`route:`). `_` is the default route and
/// `_error` the route for the `error` verdict.
struct route_config {
  ordered_table<std::string, std::string> routes;  ///< verdict → target, in document order
  std::optional<std::string> default_target;     ///< `_`
  std::optional<std::string> error_target;       ///< `_error`

  friend bool operator==(const route_config&, const route_config&) = default;
};

/// One state of a loop.
struct state_config {
  std::optional<std::string> action;           ///< command or prompt text (template)
  std::optional<action_kind> action_type;      ///< absent: slash_command when the action starts with `/`, else shell
  std::optional<evaluate_config> evaluate;     ///< default evaluator when absent
  std::optional<route_config> route;
  ordered_table<std::string, std::string> on;  ///< `on_<verdict>: target` shorthands
  std::optional<std::string> next;             ///< unconditional transition (happy path)
  bool terminal = false;
  bool failure = false;                        ///< a terminal that means "failed"
  std::optional<std::string> capture;          ///< store the action result as captured.<name>
  std::optional<double> timeout;               ///< action timeout in seconds
  std::optional<std::string> on_maintain;      ///< where maintain mode goes from here
  std::optional<std::string> description;      ///< metadata, shown by `show`
  /// Direct self re-entries allowed before the state is redirected to `on_retry_exhausted`.
  std::optional<int> max_retries;
  std::optional<std::string> on_retry_exhausted;  ///< where an exhausted retry streak goes
  /// Exit codes worth retrying through `on_error`; another non-zero exit goes to
  /// `on_retry_exhausted` (or `on_error` when that is unset). A timeout counts as 124.
  std::vector<int> retryable_exit_codes;
  /// A sub-loop state (design §6.5): the child loop it runs, by name. A name holding `${…}`
  /// is a template, resolved when the state runs.
  std::optional<std::string> loop;
  /// `with:` of a sub-loop state: values of the child's parameters (strings are templates,
  /// rendered when the state runs).
  ordered_table<std::string, json> with;
  /// The child starts from the parent's context and captures (its own `context:` wins).
  bool context_passthrough = false;
  /// `worktree:` of a sub-loop state: a branch-name template; the child's actions run in a
  /// scratch git worktree the host attaches to that existing branch (rendered empty: none).
  std::optional<std::string> worktree{};
  /// `output:` of a terminal state: values (strings are templates) rendered when a run ends
  /// there; a parent reads them as `${captured.<state>.output.<key>}`.
  ordered_table<std::string, json> output;
  state_resilience resilience;  ///< retry:, catch:, backoff, the rate-limit keys
  /// `type:` — `learning` (the only type): a learning state, exempt from the throttle's stop.
  std::optional<std::string> type;
  std::optional<throttle_config> throttle;     ///< per-visit action throttle (throttle.hpp)
  std::optional<std::string> on_throttle_hard;  ///< where the throttle's hard limit goes
  std::optional<learning_config> learning;      ///< `learning:` of a `type: learning` state
  test_guards guards;           ///< tamper_guard, prepatch_check (override the loop's)
  state_host_settings host;     ///< agent:, pruning_profile:, session_mode:, params:

  friend bool operator==(const state_config&, const state_config&) = default;
};

/// LLM judge settings of a loop (`llm:`).
struct llm_config {
  bool enabled = true;
  std::string model = "sonnet";
  int max_tokens = 256;
  double timeout = 1800;  ///< seconds

  friend bool operator==(const llm_config&, const llm_config&) = default;
};

/// A loop: named states, where to start, limits and shared data.
struct fsm_loop {
  std::string name;
  std::optional<std::string> description;
  std::string initial;
  ordered_table<std::string, state_config> states;  ///< in document order
  json context = detail::empty_json_object();       ///< user variables, `${context.*}`
  /// Paths the loop works on (`${context.KEY}` allowed): a host does not run two loops
  /// whose scopes overlap at once; empty means the whole working directory (journal.hpp:
  /// resolve_scope(), loop_journal::claim_scope(); ll-loop run/resume, `--queue`).
  std::vector<std::string> scope;
  int max_iterations = 50;                         ///< state executions allowed
  std::optional<double> backoff;                   ///< seconds between steps
  std::optional<double> timeout;                   ///< loop deadline in seconds
  std::optional<double> default_timeout;           ///< action timeout of states without one
  bool maintain = false;                           ///< restart after a terminal
  llm_config llm;
  handoff_policy on_handoff = handoff_policy::pause;
  std::optional<std::string> on_max_iterations;    ///< state run once when the cap is hit
  /// The paradigm the loop was compiled from (`goal`, `convergence`, `invariants`,
  /// `imperative`; `fsm` when a document says so). Provenance only: it changes nothing in
  /// how the loop runs. A document with both `paradigm` and `initial` is a loop.
  std::optional<std::string> paradigm;
  std::optional<loop_dialect> dialect;             ///< as declared; dialect_of() infers
  /// The step cap was written `max_steps` (the current dialect's spelling): kept so that a
  /// loop written back infers the same dialect.
  bool max_steps_spelling = false;
  /// Current dialect with both `max_steps` and `max_iterations`: `max_iterations` caps full
  /// passes (maintain restarts at a terminal) and `max_iterations` above holds `max_steps`.
  std::optional<int> max_passes;
  std::optional<std::string> on_max_passes;        ///< state run once when max_passes is hit
  std::string category;                            ///< metadata (`list`, `show`)
  std::optional<std::string> visibility;           ///< metadata: public, internal, example
  std::vector<std::string> labels;                 ///< metadata
  std::string input_key = "input";                 ///< context key of the positional input
  std::vector<std::string> required_inputs;        ///< context keys a run must be given
  bool singleton = false;                          ///< one running instance per loop name
  /// The reference's lint-suppression flags (`*_ok`, `artifact_versioning`), as written.
  ordered_table<std::string, bool> lint_flags;
  loop_resilience resilience;  ///< max_edge_revisits, circuit
  test_guards guards;          ///< tamper_guard, prepatch_check: every state's default
  loop_host_settings host;     ///< pruning_profile:, session_mode: (the states' defaults)

  friend bool operator==(const fsm_loop&, const fsm_loop&) = default;
};

// ---------------------------------------------------------------------------------------
// Enum names
// ---------------------------------------------------------------------------------------

/// `"exit_code"`, `"output_numeric"`, … — the document spelling.
constexpr std::string_view to_string(evaluator_type v) noexcept { return detail::enum_name(v); }
/// `"eq"`, `"ne"`, `"lt"`, `"le"`, `"gt"`, `"ge"`.
constexpr std::string_view to_string(comparison_op v) noexcept { return detail::enum_name(v); }
/// `"minimize"` / `"maximize"`.
constexpr std::string_view to_string(convergence_direction v) noexcept {
  return detail::enum_name(v);
}
/// `"shell"`, `"prompt"`, `"slash_command"`, `"mcp_tool"`.
constexpr std::string_view to_string(action_kind v) noexcept { return detail::enum_name(v); }
/// `"pause"`, `"spawn"`, `"terminate"`.
constexpr std::string_view to_string(handoff_policy v) noexcept { return detail::enum_name(v); }
/// `"seed"` / `"current"`.
constexpr std::string_view to_string(loop_dialect v) noexcept { return detail::enum_name(v); }

/// The enumerator spelled `text` (exact, case-sensitive), or std::nullopt.
/// `Enum` is one of evaluator_type, comparison_op, convergence_direction, action_kind,
/// handoff_policy.
template <class Enum>
constexpr std::optional<Enum> enum_from_string(std::string_view text) noexcept {
  const auto& names = detail::enum_info<Enum>::names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return static_cast<Enum>(i);
  return std::nullopt;
}

/// `"output_json"` → evaluator_type::output_json; std::nullopt for unknown names.
constexpr std::optional<evaluator_type> parse_evaluator_type(std::string_view text) noexcept {
  return enum_from_string<evaluator_type>(text);
}
/// `"ge"` → comparison_op::ge; std::nullopt for unknown names.
constexpr std::optional<comparison_op> parse_comparison_op(std::string_view text) noexcept {
  return enum_from_string<comparison_op>(text);
}
/// `"maximize"` → convergence_direction::maximize; std::nullopt for unknown names.
constexpr std::optional<convergence_direction> parse_convergence_direction(
    std::string_view text) noexcept {
  return enum_from_string<convergence_direction>(text);
}
/// `"prompt"` → action_kind::prompt; std::nullopt for unknown names.
constexpr std::optional<action_kind> parse_action_kind(std::string_view text) noexcept {
  return enum_from_string<action_kind>(text);
}
/// `"spawn"` → handoff_policy::spawn; std::nullopt for unknown names.
constexpr std::optional<handoff_policy> parse_handoff_policy(std::string_view text) noexcept {
  return enum_from_string<handoff_policy>(text);
}

/// JSON form of the schema enums: their document spelling.
inline void to_json(json& j, evaluator_type v) { j = std::string(to_string(v)); }
inline void to_json(json& j, comparison_op v) { j = std::string(to_string(v)); }
inline void to_json(json& j, convergence_direction v) { j = std::string(to_string(v)); }
inline void to_json(json& j, action_kind v) { j = std::string(to_string(v)); }
inline void to_json(json& j, handoff_policy v) { j = std::string(to_string(v)); }
inline void to_json(json& j, loop_dialect v) { j = std::string(to_string(v)); }

// ---------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------

/// Values nested deeper than this inside `context`, `schema` or `target` are rejected
/// (`too-deep`), so nothing downstream (copies, dumps, comparisons) recurses unboundedly.
inline constexpr std::size_t max_value_depth = 256;

/// JSON text nested deeper than this is rejected before a document is built (`too-deep`,
/// errc::parse_error): nlohmann copies nested values recursively while building ordered
/// objects, so unbounded depth would exhaust the stack.
inline constexpr std::size_t max_document_depth = 512;

/// Reads a schema enum from `value` (a string), reporting `null-value`, `wrong-type` or
/// `unknown-value` (with "did you mean" and the valid names) at `path` on failure.
template <class Enum>
std::optional<Enum> parse_enum(const json& value, const std::string& path, diagnostics& out) {
  const auto text = detail::read_string(value, path, out);
  if (!text) return std::nullopt;
  if (auto parsed = enum_from_string<Enum>(*text)) return parsed;
  detail::report(out, path, "unknown-value", detail::unknown_enum_message<Enum>(*text));
  return std::nullopt;
}

/// Durations (`timeout`, `backoff`, `llm.timeout`) above this many seconds are rejected, so
/// converting them to clock durations can never overflow (about 31 years).
inline constexpr double max_duration_seconds = 1e9;

/// The twin of a verdict, which routes alike after the verdict's own key (design §6.2):
/// `success`↔`yes`, `failure`↔`no`; empty for any other verdict.
constexpr std::string_view twin_verdict(std::string_view verdict) noexcept {
  if (verdict == "success") return "yes";
  if (verdict == "yes") return "success";
  if (verdict == "failure") return "no";
  if (verdict == "no") return "failure";
  return {};
}

/// The stall evaluators (`diff_stall`, `score_stall`, `open_question_stall`,
/// `action_stall`): the executor judges them from the run's memory (design §6.6).
constexpr bool is_stall_evaluator(evaluator_type type) noexcept {
  return type == evaluator_type::diff_stall || type == evaluator_type::score_stall ||
         type == evaluator_type::open_question_stall || type == evaluator_type::action_stall;
}

/// True for a judge's abstention: `cannot_judge` or `cannot_judge_<suffix>` (design §6.3).
constexpr bool is_abstention_verdict(std::string_view verdict) noexcept {
  return verdict == "cannot_judge" || verdict.starts_with("cannot_judge_");
}

/// True when the state's action runs as an LLM prompt: `action_type: prompt|slash_command`,
/// or no `action_type` and an action that is a slash command as written
/// (is_slash_command_text; a templated action is decided again once rendered).
inline bool runs_prompt_action(const state_config& state) noexcept {
  if (state.action_type)
    return *state.action_type == action_kind::prompt || *state.action_type == action_kind::slash_command;
  return state.action && is_slash_command_text(*state.action);
}

LITTLE_LOOPS_INLINE loop_dialect dialect_of(const fsm_loop& loop);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The loop's dialect: as declared, else `current` when it writes `max_steps`, or a state
/// has `on_yes`/`on_no` or a route key `yes`/`no`, else `seed` (design §6.1).
LITTLE_LOOPS_INLINE loop_dialect dialect_of(const fsm_loop& loop) {
  if (loop.dialect) return *loop.dialect;
  if (loop.max_steps_spelling) return loop_dialect::current;
  for (const auto& [name, state] : loop.states) {
    if (state.on.count("yes") != 0 || state.on.count("no") != 0) return loop_dialect::current;
    if (state.route && (state.route->routes.count("yes") != 0 || state.route->routes.count("no") != 0))
      return loop_dialect::current;
  }
  return loop_dialect::seed;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// The document parser and the loop reader behind the entry points below, defined in
// detail/json_document.hpp and detail/loop_reader.hpp (included at the end of this header:
// they build the types above and use the limits and parse_enum).
namespace detail {
LITTLE_LOOPS_INLINE expected<json, error> scan_json_text(std::string_view text, diagnostics& duplicates);
LITTLE_LOOPS_INLINE std::optional<evaluate_config> read_evaluate(const json& value, const std::string& path,
                                                    diagnostics& out);
LITTLE_LOOPS_INLINE void read_loop(const json& doc, fsm_loop& loop, diagnostics& out);
LITTLE_LOOPS_INLINE error invalid_loop_error(diagnostics found);
LITTLE_LOOPS_INLINE void write_state_plugins(json& j, const state_config& s);  // state_plugin_fields.hpp
}  // namespace detail

LITTLE_LOOPS_INLINE std::optional<evaluate_config> parse_evaluate_config(const json& value,
                                                            const std::string& path,
                                                            diagnostics& out);
LITTLE_LOOPS_INLINE expected<json, error> parse_json_text(std::string_view text);
LITTLE_LOOPS_INLINE expected<fsm_loop, error> parse_loop(const json& doc);
LITTLE_LOOPS_INLINE expected<fsm_loop, error> parse_loop_text(std::string_view json_text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Parses an `evaluate:` object strictly. `path` is the object's own path (e.g.
/// `states.fix.evaluate`); findings are appended to `out` with paths below it. Returns
/// std::nullopt when an error was reported. Field requirements per type (e.g. operator and
/// target for output_numeric) are checked by validate(), not here.
LITTLE_LOOPS_INLINE std::optional<evaluate_config> parse_evaluate_config(const json& value,
                                                            const std::string& path,
                                                            diagnostics& out) {
  return detail::read_evaluate(value, path, out);
}

/// Parses JSON text without exceptions. Syntax errors give errc::parse_error with the
/// line, column and byte offset in the message (and one `parse-error` diagnostic);
/// duplicate object keys give errc::parse_error with a `duplicate-key` diagnostic each.
LITTLE_LOOPS_INLINE expected<json, error> parse_json_text(std::string_view text) {
  diagnostics duplicates;
  auto doc = detail::scan_json_text(text, duplicates);
  if (!doc) return doc;
  if (!duplicates.empty()) {
    std::string message = "invalid JSON: duplicate key at " + duplicates.front().path;
    return unexpected(error{errc::parse_error, std::move(message), {}, std::move(duplicates)});
  }
  return doc;
}

/// Parses a loop document strictly. Every unknown key, wrong type, unknown enum value,
/// missing required key (`name`, `initial`, `states`, evaluate `type`) and ill-formed
/// string becomes a diagnostic; if there is any, the result is errc::invalid_loop with all
/// of them in error::details. Structural rules (dangling targets, terminals, …) are
/// validate()'s job.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> parse_loop(const json& doc) {
  diagnostics found;
  fsm_loop loop;
  detail::read_loop(doc, loop, found);
  if (detail::count_errors(found) != 0) return unexpected(detail::invalid_loop_error(std::move(found)));
  return loop;
}

/// Parses JSON text into a loop. Syntax errors are errc::parse_error (line, column and
/// byte offset in the message); duplicate keys (`duplicate-key`) are reported with the
/// other findings of parse_loop() as errc::invalid_loop.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> parse_loop_text(std::string_view json_text) {
  diagnostics found;
  auto doc = detail::scan_json_text(json_text, found);
  if (!doc) return unexpected(std::move(doc.error()));
  fsm_loop loop;
  detail::read_loop(*doc, loop, found);
  if (detail::count_errors(found) != 0)
    return unexpected(detail::invalid_loop_error(std::move(found)));
  return loop;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// ---------------------------------------------------------------------------------------
// Serialisation (ADL to_json): defaults are omitted, so documents round-trip.
// ---------------------------------------------------------------------------------------

LITTLE_LOOPS_INLINE void to_json(json& j, const evaluate_config& c);
LITTLE_LOOPS_INLINE void to_json(json& j, const route_config& r);
LITTLE_LOOPS_INLINE void to_json(json& j, const state_config& s);
LITTLE_LOOPS_INLINE void to_json(json& j, const llm_config& l);
LITTLE_LOOPS_INLINE void to_json(json& j, const fsm_loop& loop);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `{"type": …, "operator": …, …}` with only non-default fields.
LITTLE_LOOPS_INLINE void to_json(json& j, const evaluate_config& c) {
  j = json::object();
  j["type"] = std::string(to_string(c.type));
  if (c.op) j["operator"] = std::string(to_string(*c.op));
  if (c.target) j["target"] = *c.target;
  if (c.tolerance) j["tolerance"] = *c.tolerance;
  if (c.pattern) j["pattern"] = *c.pattern;
  if (c.negate) j["negate"] = true;
  if (c.path) j["path"] = *c.path;
  if (c.prompt) j["prompt"] = *c.prompt;
  if (c.schema) j["schema"] = *c.schema;
  if (c.min_confidence != 0.5) j["min_confidence"] = detail::number_json(c.min_confidence);
  if (c.uncertain_suffix) j["uncertain_suffix"] = true;
  if (c.source) j["source"] = *c.source;
  if (c.previous) j["previous"] = *c.previous;
  if (c.direction != convergence_direction::minimize) j["direction"] = std::string(to_string(c.direction));
  if (c.line) j["line"] = *c.line;
  if (c.key) j["key"] = *c.key;
  if (!c.error_patterns.empty()) j["error_patterns"] = c.error_patterns;
  detail::write_stall_fields(j, c.stall);
}

/// The verdict routes in order, then `_` and `_error`.
LITTLE_LOOPS_INLINE void to_json(json& j, const route_config& r) {
  j = json::object();
  // Keys of an ordered_table are unique: appended without a search (O(n), not O(n²)).
  for (const auto& [verdict, target] : r.routes)
    detail::append_new_key(j.get_ref<json::object_t&>(), verdict, target);
  if (r.default_target) j["_"] = *r.default_target;
  if (r.error_target) j["_error"] = *r.error_target;
}

/// action, action_type, evaluate, route, on_* shorthands, next, terminal, failure, capture,
/// timeout, on_maintain, the retry keys, loop, with, context_passthrough, output — each only
/// when set.
LITTLE_LOOPS_INLINE void to_json(json& j, const state_config& s) {
  j = json::object();
  if (s.action) j["action"] = *s.action;
  if (s.action_type) j["action_type"] = std::string(to_string(*s.action_type));
  if (s.evaluate) to_json(j["evaluate"], *s.evaluate);
  if (s.route) to_json(j["route"], *s.route);
  for (const auto& [verdict, target] : s.on)  // unique, and none is a key written above
    detail::append_new_key(j.get_ref<json::object_t&>(), "on_" + verdict, target);
  if (s.next) j["next"] = *s.next;
  if (s.terminal) j["terminal"] = true;
  if (s.failure) j["failure"] = true;
  if (s.capture) j["capture"] = *s.capture;
  if (s.timeout) j["timeout"] = detail::number_json(*s.timeout);
  if (s.on_maintain) j["on_maintain"] = *s.on_maintain;
  if (s.description) j["description"] = *s.description;
  if (s.max_retries) j["max_retries"] = *s.max_retries;
  if (s.on_retry_exhausted) j["on_retry_exhausted"] = *s.on_retry_exhausted;
  if (!s.retryable_exit_codes.empty()) j["retryable_exit_codes"] = s.retryable_exit_codes;
  if (s.loop) j["loop"] = *s.loop;
  const auto table = [](const ordered_table<std::string, json>& t) {
    json out = json::object();
    for (const auto& [key, value] : t) detail::append_new_key(out.get_ref<json::object_t&>(), key, value);
    return out;
  };
  if (!s.with.empty()) j["with"] = table(s.with);
  if (s.context_passthrough) j["context_passthrough"] = true;
  if (s.worktree) j["worktree"] = *s.worktree;
  if (!s.output.empty()) j["output"] = table(s.output);
  detail::write_state_resilience(j, s.resilience);
  detail::write_state_plugins(j, s);
  detail::write_test_guards(j, s.guards);
  detail::write_state_host(j, s.host);
}

/// Only the fields that differ from the defaults (an empty object when all are default).
LITTLE_LOOPS_INLINE void to_json(json& j, const llm_config& l) {
  const llm_config defaults;
  j = json::object();
  if (l.enabled != defaults.enabled) j["enabled"] = l.enabled;
  if (l.model != defaults.model) j["model"] = l.model;
  if (l.max_tokens != defaults.max_tokens) j["max_tokens"] = l.max_tokens;
  if (l.timeout != defaults.timeout) j["timeout"] = detail::number_json(l.timeout);
}

/// name, paradigm, description, initial, states, context, scope, max_iterations (or
/// max_steps), backoff, timeout, maintain, llm, on_handoff, on_max_iterations, dialect,
/// metadata, inputs and lint flags — defaults omitted.
LITTLE_LOOPS_INLINE void to_json(json& j, const fsm_loop& loop) {
  j = json::object();
  j["name"] = loop.name;
  if (loop.paradigm) j["paradigm"] = *loop.paradigm;
  if (loop.description) j["description"] = *loop.description;
  j["initial"] = loop.initial;
  json& states = j["states"];
  states = json::object();
  for (const auto& [name, state] : loop.states) {  // names are unique: map keys
    json state_json;
    to_json(state_json, state);
    detail::append_new_key(states.get_ref<json::object_t&>(), name, std::move(state_json));
  }
  if (!(loop.context.is_object() && loop.context.empty())) j["context"] = loop.context;
  if (!loop.scope.empty()) j["scope"] = loop.scope;
  if (loop.dialect) j["dialect"] = std::string(to_string(*loop.dialect));
  if (loop.max_steps_spelling) {
    j["max_steps"] = loop.max_iterations;
    if (loop.max_passes) j["max_iterations"] = *loop.max_passes;
  } else if (loop.max_iterations != 50) {
    j["max_iterations"] = loop.max_iterations;
  }
  if (loop.backoff) j["backoff"] = detail::number_json(*loop.backoff);
  if (loop.timeout) j["timeout"] = detail::number_json(*loop.timeout);
  if (loop.default_timeout) j["default_timeout"] = detail::number_json(*loop.default_timeout);
  if (loop.maintain) j["maintain"] = true;
  json llm;
  to_json(llm, loop.llm);
  if (!llm.empty()) j["llm"] = std::move(llm);
  if (loop.on_handoff != handoff_policy::pause) j["on_handoff"] = std::string(to_string(loop.on_handoff));
  if (loop.on_max_iterations) j[loop.max_steps_spelling ? "on_max_steps" : "on_max_iterations"] = *loop.on_max_iterations;
  if (loop.on_max_passes) j["on_max_iterations"] = *loop.on_max_passes;
  if (!loop.category.empty()) j["category"] = loop.category;
  if (loop.visibility) j["visibility"] = *loop.visibility;
  if (!loop.labels.empty()) j["labels"] = loop.labels;
  if (loop.input_key != "input") j["input_key"] = loop.input_key;
  if (!loop.required_inputs.empty()) j["required_inputs"] = loop.required_inputs;
  if (loop.singleton) j["singleton"] = true;
  for (const auto& [flag, on] : loop.lint_flags) j[flag] = on;
  detail::write_loop_resilience(j, loop.resilience);
  detail::write_test_guards(j, loop.guards);
  detail::write_loop_host(j, loop.host);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions parse documents
#  include <little_loops/detail/json_document.hpp>
#  include <little_loops/detail/loop_reader.hpp>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

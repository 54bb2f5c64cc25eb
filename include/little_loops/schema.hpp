// little_loops — loop schema value types and their strict JSON (de)serialisation
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/strings.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
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
};

/// Comparison operators of output_numeric / output_json (`operator:` in documents).
enum class comparison_op { eq, ne, lt, le, gt, ge };

/// Direction of improvement for convergence.
enum class convergence_direction { minimize, maximize };

/// How an action's text is run (`action_type:` in documents).
enum class action_kind {
  shell,          ///< a shell command
  prompt,         ///< an LLM prompt
  slash_command,  ///< a slash command for an agent CLI
};

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
  json context = json::object();                   ///< user variables, `${context.*}`
  /// Paths the loop works on (`${context.KEY}` allowed): a host does not run two loops
  /// whose scopes overlap at once; empty means the whole working directory (journal.hpp:
  /// resolve_scope(), loop_journal::claim_scope(); ll-loop run/resume, `--queue`).
  std::vector<std::string> scope;
  int max_iterations = 50;                         ///< state executions allowed
  std::optional<double> backoff;                   ///< seconds between steps
  std::optional<double> timeout;                   ///< loop deadline in seconds
  bool maintain = false;                           ///< restart after a terminal
  llm_config llm;
  handoff_policy on_handoff = handoff_policy::pause;
  std::optional<std::string> on_max_iterations;    ///< state run once when the cap is hit
  /// The paradigm the loop was compiled from (`goal`, `convergence`, `invariants`,
  /// `imperative`; `fsm` when a document says so). Provenance only: it changes nothing in
  /// how the loop runs. A document with both `paradigm` and `initial` is a loop.
  std::optional<std::string> paradigm;

  friend bool operator==(const fsm_loop&, const fsm_loop&) = default;
};


// ---------------------------------------------------------------------------------------
// Enum names
// ---------------------------------------------------------------------------------------

namespace detail {

/// Names (in enumerator order) and the word used in messages, per schema enum.
template <class Enum>
struct enum_info;

template <>
struct enum_info<evaluator_type> {
  static constexpr std::array<std::string_view, 6> names{
      "exit_code", "output_numeric", "output_json", "output_contains", "convergence",
      "llm_structured"};
  static constexpr std::string_view what = "evaluator type";
};
template <>
struct enum_info<comparison_op> {
  static constexpr std::array<std::string_view, 6> names{"eq", "ne", "lt", "le", "gt", "ge"};
  static constexpr std::string_view what = "operator";
};
template <>
struct enum_info<convergence_direction> {
  static constexpr std::array<std::string_view, 2> names{"minimize", "maximize"};
  static constexpr std::string_view what = "direction";
};
template <>
struct enum_info<action_kind> {
  static constexpr std::array<std::string_view, 3> names{"shell", "prompt", "slash_command"};
  static constexpr std::string_view what = "action_type";
};
template <>
struct enum_info<handoff_policy> {
  static constexpr std::array<std::string_view, 3> names{"pause", "spawn", "terminate"};
  static constexpr std::string_view what = "on_handoff";
};

template <class Enum>
constexpr std::string_view enum_name(Enum value) noexcept {
  const auto index = static_cast<std::size_t>(value);
  const auto& names = enum_info<Enum>::names;
  return index < names.size() ? names[index] : std::string_view{"<invalid>"};
}

}  // namespace detail

/// `"exit_code"`, `"output_numeric"`, … — the document spelling.
constexpr std::string_view to_string(evaluator_type v) noexcept { return detail::enum_name(v); }
/// `"eq"`, `"ne"`, `"lt"`, `"le"`, `"gt"`, `"ge"`.
constexpr std::string_view to_string(comparison_op v) noexcept { return detail::enum_name(v); }
/// `"minimize"` / `"maximize"`.
constexpr std::string_view to_string(convergence_direction v) noexcept {
  return detail::enum_name(v);
}
/// `"shell"`, `"prompt"`, `"slash_command"`.
constexpr std::string_view to_string(action_kind v) noexcept { return detail::enum_name(v); }
/// `"pause"`, `"spawn"`, `"terminate"`.
constexpr std::string_view to_string(handoff_policy v) noexcept { return detail::enum_name(v); }

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

// ---------------------------------------------------------------------------------------
// Strict reading helpers (shared with the paradigm compilers)
// ---------------------------------------------------------------------------------------

/// Values nested deeper than this inside `context`, `schema` or `target` are rejected
/// (`too-deep`), so nothing downstream (copies, dumps, comparisons) recurses unboundedly.
inline constexpr std::size_t max_value_depth = 256;

/// JSON text nested deeper than this is rejected before a document is built (`too-deep`,
/// errc::parse_error): nlohmann copies nested values recursively while building ordered
/// objects, so unbounded depth would exhaust the stack.
inline constexpr std::size_t max_document_depth = 512;

namespace detail {

/// `object`, `array`, `string`, `integer`, `number`, `boolean`, `null`, `binary`.
inline std::string_view json_kind(const json& value) noexcept {
  switch (value.type()) {
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::boolean: return "boolean";
    case json::value_t::null: return "null";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "discarded";
  }
  return "unknown";
}

/// `an array`, `string "abc"`, `integer 5` — how a found value is described in messages.
inline std::string describe_value(const json& value) {
  switch (value.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::null: return "null";
    case json::value_t::string:
      return "string " + quote_excerpt(value.get_ref<const std::string&>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
    case json::value_t::boolean:
      return std::string(json_kind(value)) + " " + value.dump();
    default: return std::string(json_kind(value));
  }
}

inline void report(diagnostics& out, std::string path, std::string_view code,
                   std::string message, severity level = severity::error) {
  out.push_back(diagnostic{level, std::move(path), std::move(message), std::string(code)});
}

inline std::size_t count_errors(const diagnostics& list) noexcept {
  std::size_t n = 0;
  for (const auto& d : list)
    if (d.level == severity::error) ++n;
  return n;
}

/// Reports a value of the wrong JSON type: `null-value` for null, else `wrong-type`.
inline void report_type(diagnostics& out, const std::string& path, std::string_view expected,
                        const json& found) {
  if (found.is_null())
    report(out, path, "null-value", fmt::format("expected {}, got null", expected));
  else
    report(out, path, "wrong-type", fmt::format("expected {}, got {}", expected,
                                                 describe_value(found)));
}

/// The path of member `key` under `base`, with ill-formed UTF-8 in the key replaced.
inline std::string member_path(std::string_view base, std::string_view key) {
  return join_path(base, sanitize_utf8(key));
}

/// Reports `key` under `base` as unknown, with a "did you mean" among `candidates` and an
/// optional extra hint.
template <class Range>
void report_unknown_key(diagnostics& out, std::string_view base, std::string_view key,
                        const Range& candidates, std::string_view extra = {}) {
  std::string message = "unknown key " + quote_excerpt(key);
  message += did_you_mean(key, candidates);
  if (!extra.empty()) {
    message += "; ";
    message += extra;
  }
  report(out, member_path(base, key), "unknown-key", std::move(message));
}

inline std::optional<std::string> read_string(const json& value, const std::string& path,
                                              diagnostics& out) {
  if (!value.is_string()) {
    report_type(out, path, "a string", value);
    return std::nullopt;
  }
  const auto& text = value.get_ref<const std::string&>();
  if (!is_valid_utf8(text)) {
    report(out, path, "invalid-utf8", "string is not valid UTF-8");
    return std::nullopt;
  }
  return text;
}

inline std::optional<bool> read_bool(const json& value, const std::string& path,
                                     diagnostics& out) {
  if (!value.is_boolean()) {
    report_type(out, path, "a boolean (true or false)", value);
    return std::nullopt;
  }
  return value.get<bool>();
}

/// A finite number (integer or floating point).
inline std::optional<double> read_number(const json& value, const std::string& path,
                                         diagnostics& out) {
  if (!value.is_number()) {
    report_type(out, path, "a number", value);
    return std::nullopt;
  }
  const double number = value.get<double>();
  if (!std::isfinite(number)) {
    report(out, path, "out-of-range", "number is not finite");
    return std::nullopt;
  }
  return number;
}

/// An integer that fits an `int`. A floating-point value that is a whole number (`10.0`, as
/// JSON Schema's `integer` and Python take it) is that integer; `10.5` is a wrong type.
inline std::optional<int> read_int(const json& value, const std::string& path,
                                   diagnostics& out) {
  const auto out_of_range = [&](const std::string& text, bool negative) {
    report(out, path, "out-of-range",
           negative ? fmt::format("integer {} is too small (min {})", text, INT_MIN)
                    : fmt::format("integer {} is too large (max {})", text, INT_MAX));
  };
  if (value.is_number_unsigned()) {
    const auto n = value.get<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(INT_MAX)) {
      out_of_range(std::to_string(n), false);
      return std::nullopt;
    }
    return static_cast<int>(n);
  }
  if (value.is_number_integer()) {
    const auto n = value.get<std::int64_t>();
    if (n > INT_MAX || n < INT_MIN) {
      out_of_range(std::to_string(n), n < 0);
      return std::nullopt;
    }
    return static_cast<int>(n);
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (!std::isfinite(d)) {
      report(out, path, "out-of-range", "number is not finite");
      return std::nullopt;
    }
    if (std::floor(d) == d) {
      if (d > INT_MAX || d < INT_MIN) {
        out_of_range(value.dump(), d < 0);
        return std::nullopt;
      }
      return static_cast<int>(d);
    }
  }
  report_type(out, path, "an integer", value);
  return std::nullopt;
}

/// null, boolean or number: nothing to check inside.
inline bool is_plain_scalar(const json& value) noexcept {
  return value.is_null() || value.is_boolean() || value.is_number();
}

/// Checks an arbitrary JSON value kept verbatim (context, schema, target): nesting depth at
/// most max_value_depth, every string and key well-formed UTF-8 and every number finite (a
/// YAML `.inf`, `.nan` or `1e400`: JSON, and so a compiled loop or a journal, has no way to
/// write it). Iterative (no recursion). Returns false after reporting.
inline bool check_value_tree(const json& root, const std::string& path, diagnostics& out) {
  struct frame {
    const json* value;
    std::size_t depth;
    std::string path;
  };
  const std::size_t errors_before = count_errors(out);
  std::vector<frame> stack;
  stack.push_back(frame{&root, 0, path});
  while (!stack.empty()) {
    frame current = std::move(stack.back());
    stack.pop_back();
    const json& value = *current.value;
    if (value.is_string()) {
      if (!is_valid_utf8(value.get_ref<const std::string&>()))
        report(out, current.path, "invalid-utf8", "string is not valid UTF-8");
      continue;
    }
    if (value.is_number_float()) {
      if (!std::isfinite(value.get<double>()))
        report(out, current.path, "out-of-range",
               "number is not finite (JSON has no infinity or NaN: write a finite number, or a "
               "string)");
      continue;
    }
    if (value.is_binary()) {
      report(out, current.path, "wrong-type", "binary values cannot be used in a loop");
      continue;
    }
    if (!value.is_structured() || value.empty()) continue;
    if (current.depth >= max_value_depth) {
      report(out, current.path, "too-deep",
             fmt::format("value is nested deeper than {} levels", max_value_depth));
      return false;
    }
    if (value.is_object()) {
      for (auto it = value.crbegin(); it != value.crend(); ++it) {
        // reverse iteration + stack = document order
        const std::string& key = it.key();
        if (!is_valid_utf8(key)) report(out, member_path(current.path, key), "invalid-utf8",
                                        "key is not valid UTF-8");
        if (is_plain_scalar(it.value()) && !it.value().is_number_float()) continue;
        stack.push_back(frame{&it.value(), current.depth + 1, member_path(current.path, key)});
      }
    } else {
      for (std::size_t i = value.size(); i-- > 0;) {
        const json& element = value[i];
        if (is_plain_scalar(element) && !element.is_number_float()) continue;
        stack.push_back(frame{&element, current.depth + 1, index_path(current.path, i)});
      }
    }
  }
  return count_errors(out) == errors_before;
}

/// `true` when `value` is a JSON object, else reports it.
inline bool expect_object(const json& value, const std::string& path, diagnostics& out) {
  if (value.is_object()) return true;
  report_type(out, path, "an object", value);
  return false;
}

/// JSON for a double: an integer when the value is integral (so `30` stays `30`).
inline json number_json(double value) {
  if (std::isfinite(value) && std::floor(value) == value && std::fabs(value) < 9007199254740992.0)
    return json(static_cast<std::int64_t>(value));
  return json(value);
}

inline constexpr std::array<std::string_view, 14> evaluate_keys{
    "type",   "operator", "target",         "tolerance",        "pattern",
    "negate", "path",     "prompt",         "schema",           "min_confidence",
    "uncertain_suffix",   "source",         "previous",         "direction"};

inline constexpr std::array<std::string_view, 13> state_keys{
    "action",  "action_type", "evaluate",    "route",      "next",       "terminal",
    "failure", "capture",     "timeout",     "on_maintain", "on_success", "on_failure",
    "on_error"};

inline constexpr std::array<std::string_view, 14> loop_keys{
    "name",    "description",    "initial", "states", "context",    "scope",
    "max_iterations", "backoff", "timeout", "maintain", "llm",     "on_handoff",
    "on_max_iterations", "paradigm"};

inline constexpr std::array<std::string_view, 4> llm_keys{"enabled", "model", "max_tokens",
                                                           "timeout"};

inline constexpr std::array<std::string_view, 2> route_reserved_keys{"_", "_error"};

}  // namespace detail

namespace detail {

/// The message for an unknown enum value. Operator, direction and evaluator type use the
/// original's sentences (`Invalid operator 'x'. Must be one of: eq, ge, gt, le, lt, ne`,
/// `Invalid direction 'x'. Must be 'minimize' or 'maximize'`, `Unknown evaluator type 'x'.
/// Must be one of: …`, names sorted as it sorts them); the others say `unknown <what> "x";
/// expected one of: …`. Each ends with a "did you mean" when a name is close.
template <class Enum>
std::string unknown_enum_message(std::string_view text) {
  const auto& names = enum_info<Enum>::names;
  const std::string hint = did_you_mean(text, names);
  const std::string quoted = quote_excerpt(text);
  const std::string_view bare = std::string_view(quoted).substr(1, quoted.size() - 2);
  auto sorted_names = [&] {
    std::vector<std::string_view> v(names.begin(), names.end());
    std::sort(v.begin(), v.end());
    return join_names(v);
  };
  if constexpr (std::is_same_v<Enum, comparison_op>)
    return fmt::format("Invalid operator '{}'. Must be one of: {}{}", bare, sorted_names(), hint);
  else if constexpr (std::is_same_v<Enum, convergence_direction>)
    return fmt::format("Invalid direction '{}'. Must be 'minimize' or 'maximize'{}", bare, hint);
  else if constexpr (std::is_same_v<Enum, evaluator_type>)
    return fmt::format("Unknown evaluator type '{}'. Must be one of: {}{}", bare, sorted_names(),
                       hint);
  else
    return fmt::format("unknown {} {}{}; expected one of: {}", enum_info<Enum>::what, quoted,
                       hint, join_names(names));
}

}  // namespace detail

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

// ---------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------

/// Parses an `evaluate:` object strictly. `path` is the object's own path (e.g.
/// `states.fix.evaluate`); findings are appended to `out` with paths below it. Returns
/// std::nullopt when an error was reported. Field requirements per type (e.g. operator and
/// target for output_numeric) are checked by validate(), not here.
inline std::optional<evaluate_config> parse_evaluate_config(const json& value,
                                                            const std::string& path,
                                                            diagnostics& out) {
  const std::size_t errors_before = detail::count_errors(out);
  if (!detail::expect_object(value, path, out)) return std::nullopt;
  evaluate_config config;
  bool has_type = false;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string field_path = detail::member_path(path, key);
    if (key == "type") {
      has_type = true;
      if (auto v = parse_enum<evaluator_type>(field, field_path, out)) config.type = *v;
    } else if (key == "operator") {
      if (auto v = parse_enum<comparison_op>(field, field_path, out)) config.op = *v;
    } else if (key == "target") {
      if (field.is_null()) {
        detail::report_type(out, field_path, "a number, string or JSON value", field);
      } else if (detail::check_value_tree(field, field_path, out)) {
        config.target = field;
      }
    } else if (key == "tolerance") {
      if (field.is_string()) {
        if (auto v = detail::read_string(field, field_path, out)) config.tolerance = json(*v);
      } else if (field.is_number()) {
        if (auto v = detail::read_number(field, field_path, out)) config.tolerance = field;
      } else {
        detail::report_type(out, field_path, "a number or a template string", field);
      }
    } else if (key == "pattern") {
      if (auto v = detail::read_string(field, field_path, out)) config.pattern = std::move(*v);
    } else if (key == "negate") {
      if (auto v = detail::read_bool(field, field_path, out)) config.negate = *v;
    } else if (key == "path") {
      if (auto v = detail::read_string(field, field_path, out)) config.path = std::move(*v);
    } else if (key == "prompt") {
      if (auto v = detail::read_string(field, field_path, out)) config.prompt = std::move(*v);
    } else if (key == "schema") {
      if (detail::expect_object(field, field_path, out) &&
          detail::check_value_tree(field, field_path, out))
        config.schema = field;
    } else if (key == "min_confidence") {
      if (auto v = detail::read_number(field, field_path, out)) config.min_confidence = *v;
    } else if (key == "uncertain_suffix") {
      if (auto v = detail::read_bool(field, field_path, out)) config.uncertain_suffix = *v;
    } else if (key == "source") {
      if (auto v = detail::read_string(field, field_path, out)) config.source = std::move(*v);
    } else if (key == "previous") {
      if (auto v = detail::read_string(field, field_path, out)) config.previous = std::move(*v);
    } else if (key == "direction") {
      if (auto v = parse_enum<convergence_direction>(field, field_path, out))
        config.direction = *v;
    } else {
      detail::report_unknown_key(out, path, key, detail::evaluate_keys);
    }
  }
  if (!has_type)
    detail::report(out, path, "missing-field",
                   fmt::format("missing required key \"type\" (one of: {})",
                               detail::join_names(detail::enum_info<evaluator_type>::names)));
  if (detail::count_errors(out) != errors_before) return std::nullopt;
  return config;
}

namespace detail {

inline std::optional<route_config> parse_route(const json& value, const std::string& path,
                                               diagnostics& out) {
  if (!expect_object(value, path, out)) return std::nullopt;
  route_config route;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    const std::string key_path = member_path(path, key);
    if (!is_valid_utf8(key)) {
      report(out, key_path, "invalid-utf8", "key is not valid UTF-8");
      continue;
    }
    auto target = read_string(it.value(), key_path, out);
    if (key == "_") {
      if (target) route.default_target = std::move(*target);
    } else if (key == "_error") {
      if (target) route.error_target = std::move(*target);
    } else if (key.empty()) {
      report(out, key_path, "invalid-key", "a route verdict must not be empty");
    } else if (key.front() == '_') {
      report_unknown_key(out, path, key, route_reserved_keys,
                         "keys starting with '_' are reserved: \"_\" is the default route and "
                         "\"_error\" the route for the error verdict");
    } else if (target) {
      append_new_key(route.routes, key, std::move(*target));  // JSON keys are unique
    }
  }
  return route;
}

/// Reads a state. What could not be read is left out of the result and reported: the loop
/// is then invalid, and the validator looks only at what was read (see read_and_validate).
inline state_config parse_state(const json& value, const std::string& path, diagnostics& out) {
  state_config state;
  if (!expect_object(value, path, out)) return state;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string field_path = member_path(path, key);
    if (key == "action") {
      if (auto v = read_string(field, field_path, out)) state.action = std::move(*v);
    } else if (key == "action_type") {
      if (auto v = parse_enum<action_kind>(field, field_path, out)) state.action_type = *v;
    } else if (key == "evaluate") {
      if (auto v = parse_evaluate_config(field, field_path, out)) state.evaluate = std::move(*v);
    } else if (key == "route") {
      if (auto v = parse_route(field, field_path, out)) state.route = std::move(*v);
    } else if (key == "next") {
      if (auto v = read_string(field, field_path, out)) state.next = std::move(*v);
    } else if (key == "terminal") {
      if (auto v = read_bool(field, field_path, out)) state.terminal = *v;
    } else if (key == "failure") {
      if (auto v = read_bool(field, field_path, out)) state.failure = *v;
    } else if (key == "capture") {
      if (auto v = read_string(field, field_path, out)) {
        if (v->empty())
          report(out, field_path, "empty-value",
                 "a capture name must not be empty (it is the name in ${captured.<name>})");
        else
          state.capture = std::move(*v);
      }
    } else if (key == "timeout") {
      if (auto v = read_number(field, field_path, out)) state.timeout = *v;
    } else if (key == "on_maintain") {
      if (auto v = read_string(field, field_path, out)) state.on_maintain = std::move(*v);
    } else if (key.size() > 3 && key.compare(0, 3, "on_") == 0) {
      if (!is_valid_utf8(key)) {
        report(out, field_path, "invalid-utf8", "key is not valid UTF-8");
      } else if (auto v = read_string(field, field_path, out)) {
        append_new_key(state.on, key.substr(3), std::move(*v));  // JSON keys are unique
      }
    } else if (key == "on_") {
      report(out, field_path, "invalid-key",
             "shorthand routing needs a verdict after \"on_\", e.g. \"on_success\"");
    } else {
      report_unknown_key(out, path, key, state_keys);
    }
  }
  return state;
}

inline llm_config parse_llm(const json& value, const std::string& path, diagnostics& out) {
  llm_config llm;
  if (!expect_object(value, path, out)) return llm;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string field_path = member_path(path, key);
    if (key == "enabled") {
      if (auto v = read_bool(field, field_path, out)) llm.enabled = *v;
    } else if (key == "model") {
      if (auto v = read_string(field, field_path, out)) llm.model = std::move(*v);
    } else if (key == "max_tokens") {
      if (auto v = read_int(field, field_path, out)) llm.max_tokens = *v;
    } else if (key == "timeout") {
      if (auto v = read_number(field, field_path, out)) llm.timeout = *v;
    } else {
      report_unknown_key(out, path, key, llm_keys);
    }
  }
  return llm;
}

/// Reads a loop document into `loop`, appending every finding to `out`.
inline void read_loop(const json& doc, fsm_loop& loop, diagnostics& out) {
  if (!doc.is_object()) {
    report_type(out, "", "a loop document (a JSON object)", doc);
    return;
  }
  bool has_name = false;
  bool has_initial = false;
  bool has_states = false;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const json& field = it.value();
    const std::string field_path = member_path("", key);
    if (key == "name") {
      has_name = true;
      if (auto v = read_string(field, field_path, out)) loop.name = std::move(*v);
    } else if (key == "description") {
      if (auto v = read_string(field, field_path, out)) loop.description = std::move(*v);
    } else if (key == "initial") {
      has_initial = true;
      if (auto v = read_string(field, field_path, out)) loop.initial = std::move(*v);
    } else if (key == "states") {
      has_states = true;
      if (!expect_object(field, field_path, out)) continue;
      for (auto s = field.begin(); s != field.end(); ++s) {
        const std::string& state_name = s.key();
        const std::string state_path = member_path(field_path, state_name);
        if (state_name.empty()) {
          report(out, state_path, "invalid-key", "a state name must not be empty");
          continue;
        }
        if (!is_valid_utf8(state_name)) {
          report(out, state_path, "invalid-utf8", "state name is not valid UTF-8");
          continue;
        }
        // names are unique (JSON keys); a state with errors is kept with what could be read
        detail::append_new_key(loop.states, state_name, parse_state(s.value(), state_path, out));
      }
    } else if (key == "context") {
      if (expect_object(field, field_path, out) && check_value_tree(field, field_path, out))
        loop.context = field;
    } else if (key == "scope") {
      if (!field.is_array()) {
        report_type(out, field_path, "an array of strings", field);
        continue;
      }
      for (std::size_t i = 0; i < field.size(); ++i)
        if (auto v = read_string(field[i], index_path(field_path, i), out))
          loop.scope.push_back(std::move(*v));
    } else if (key == "max_iterations") {
      if (auto v = read_int(field, field_path, out)) loop.max_iterations = *v;
    } else if (key == "backoff") {
      if (auto v = read_number(field, field_path, out)) loop.backoff = *v;
    } else if (key == "timeout") {
      if (auto v = read_number(field, field_path, out)) loop.timeout = *v;
    } else if (key == "maintain") {
      if (auto v = read_bool(field, field_path, out)) loop.maintain = *v;
    } else if (key == "llm") {
      loop.llm = parse_llm(field, field_path, out);
    } else if (key == "on_handoff") {
      if (auto v = parse_enum<handoff_policy>(field, field_path, out)) loop.on_handoff = *v;
    } else if (key == "on_max_iterations") {
      if (auto v = read_string(field, field_path, out)) loop.on_max_iterations = std::move(*v);
    } else if (key == "paradigm") {
      // Provenance only: any string is kept, as the original's FSMLoop keeps it (a spec
      // naming an unknown paradigm, without `initial`, is refused by compile_paradigm).
      if (auto v = read_string(field, field_path, out)) loop.paradigm = std::move(*v);
    } else if (key == "max_steps") {
      report_unknown_key(out, "", key, std::array<std::string_view, 1>{"max_iterations"},
                         "use \"max_iterations\" (it counts state executions)");
    } else if (key == "on_max_steps") {
      report_unknown_key(out, "", key, std::array<std::string_view, 1>{"on_max_iterations"},
                         "use \"on_max_iterations\"");
    } else {
      report_unknown_key(out, "", key, loop_keys);
    }
  }
  // One diagnostic for the missing top-level keys, in the original's words ("missing
  // required fields: initial, states").
  std::vector<std::string_view> missing;
  if (!has_name) missing.emplace_back("name");
  if (!has_initial) missing.emplace_back("initial");
  if (!has_states) missing.emplace_back("states");
  if (!missing.empty()) {
    std::string message = "missing required fields: " + join_names(missing);
    if (!has_initial && loop.paradigm && *loop.paradigm != "fsm")
      message += " (a " + *loop.paradigm +
                 " paradigm spec is compiled with compile_paradigm, not parsed as a loop)";
    else if (!has_initial || !has_states)
      message += " (`initial` names the first state; `states` is an object of states)";
    report(out, "", "missing-field", std::move(message));
  }
}

inline error invalid_loop_error(diagnostics found) {
  const std::size_t errors = count_errors(found);
  std::string message = fmt::format("invalid loop document: {} error{}", errors,
                                    errors == 1 ? "" : "s");
  for (const auto& d : found) {
    if (d.level != severity::error) continue;
    message += fmt::format(" (first: {}{}{})", d.path, d.path.empty() ? "" : ": ", d.message);
    break;
  }
  return error{errc::invalid_loop, std::move(message), {}, std::move(found)};
}

/// The value types nlohmann's SAX interface names, for the two consumers below.
struct json_sax_types {
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;
};

/// SAX consumer that builds nothing: it records where a syntax error is and which object
/// keys repeat (JSON keeps only the last of duplicate keys, which would silently drop data).
/// Memory is linear in the nesting depth: paths are only built when a duplicate is found.
class document_scanner : public json_sax_types {
 public:
  diagnostics duplicates;
  std::optional<std::string> syntax_error;
  std::optional<std::string> too_deep_path;  ///< where max_document_depth was exceeded
  std::size_t error_byte = 0;

  bool null() { return element(); }
  bool boolean(bool) { return element(); }
  bool number_integer(number_integer_t) { return element(); }
  bool number_unsigned(number_unsigned_t) { return element(); }
  bool number_float(number_float_t, const string_t&) { return element(); }
  bool string(string_t&) { return element(); }
  bool binary(binary_t&) { return element(); }
  bool start_object(std::size_t) {
    element();
    if (frames_.size() >= max_document_depth) return refuse_depth();
    frames_.push_back(frame{true, 0, {}, {}});
    return true;
  }
  bool key(string_t& name) {
    frame& top = frames_.back();
    top.key = name;
    if (!top.keys.insert(name).second)
      report(duplicates, current_path(), "duplicate-key",
             "duplicate key " + quote_excerpt(name) +
                 ": JSON keeps only the last value; remove the other occurrence");
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    element();
    if (frames_.size() >= max_document_depth) return refuse_depth();
    frames_.push_back(frame{false, 0, {}, {}});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string&, const Exception& ex) {
    error_byte = position;
    syntax_error = sanitize_utf8(ex.what());  // "last read: '…'" quotes raw input bytes
    return false;
  }

 private:
  struct frame {
    bool is_object;
    std::size_t next_index;           // arrays: elements seen so far
    std::string key;                  // objects: the member being read
    std::unordered_set<std::string> keys;
  };
  std::vector<frame> frames_;

  bool refuse_depth() {
    too_deep_path = current_path();
    return false;  // stops the parse
  }
  // Called for every value: in an array, advances the element index.
  bool element() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().next_index;
    return true;
  }
  // The dotted path of the member or element being read.
  std::string current_path() const {
    std::string path;
    for (const auto& f : frames_) {
      if (f.is_object)
        path = member_path(path, f.key);
      else
        path = index_path(path, f.next_index - 1);
    }
    return path;
  }
};

}  // namespace detail

namespace detail {

/// Where the bracket opening nesting level `level` (1-based) is in `text`, as "line L,
/// column C (byte B)" (1-based, as nlohmann reports syntax errors). The text before it must
/// be valid JSON (the scanner stopped there).
inline std::string json_level_location(std::string_view text, std::size_t level) {
  std::size_t depth = 0, at = text.size();
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size() && at == text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth == level) at = i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  const std::string_view before = text.substr(0, at);
  const auto line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const auto line_start = before.rfind('\n');
  const std::size_t column = line_start == std::string_view::npos ? at + 1 : at - line_start;
  return fmt::format("line {}, column {} (byte {})", line, column, at + 1);
}

/// SAX consumer that builds the document of a text document_scanner has accepted. Keys are
/// appended without a search: nlohmann's own parser looks each key up in the ordered object
/// it builds, O(n²) for an object of n keys (a 40,000-key route table took 1.7 s). When the
/// text has repeated keys (`may_repeat`), a repeated key keeps its first place and its last
/// value, as json::parse does.
class document_builder : public json_sax_types {
 public:
  explicit document_builder(bool may_repeat) : may_repeat_(may_repeat) {}

  json root;

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(number_integer_t v) { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) { return put(json(v)); }
  bool string(string_t& v) { return put(json(std::move(v))); }
  bool binary(binary_t& v) { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) {
    open_.push_back(place(json::object()));
    return true;
  }
  bool key(string_t& name) {
    key_ = std::move(name);
    return true;
  }
  bool end_object() {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    open_.push_back(place(json::array()));
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) {
    return false;
  }

 private:
  bool put(json&& value) {
    place(std::move(value));
    return true;
  }
  // Stores `value` in the innermost open container (or as the root) and returns where it is:
  // values are only ever added to the innermost container, so the outer ones do not move.
  json* place(json&& value) {
    if (open_.empty()) {
      root = std::move(value);
      return &root;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      auto& items = parent.get_ref<json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    auto& members = parent.get_ref<json::object_t&>();
    if (may_repeat_) {
      if (const auto it = members.find(key_); it != members.end()) {
        it->second = std::move(value);
        return &it->second;
      }
    }
    append_new_key(members, std::move(key_), std::move(value));
    return &members.back().second;
  }

  bool may_repeat_;
  std::vector<json*> open_;
  string_t key_;
};

/// Parses `text`; syntax errors are returned as errc::parse_error, duplicate keys are
/// appended to `duplicates` (the document keeps the last value of each).
inline expected<json, error> scan_json_text(std::string_view text, diagnostics& duplicates) {
  document_scanner scanner;
  const bool ok = json::sax_parse(text.begin(), text.end(), &scanner,
                                  nlohmann::detail::input_format_t::json, true);
  if (scanner.too_deep_path) {
    std::string message =
        fmt::format("JSON nested deeper than {} levels at {}", max_document_depth,
                    json_level_location(text, max_document_depth + 1));
    diagnostics found{diagnostic{severity::error, *scanner.too_deep_path, message, "too-deep"}};
    return unexpected(error{errc::parse_error, std::move(message), *scanner.too_deep_path,
                            std::move(found)});
  }
  if (!ok || scanner.syntax_error) {
    std::string message = "invalid JSON";
    if (scanner.syntax_error) {
      // nlohmann's message: "[json.exception.parse_error.101] parse error at line L,
      // column C: <what>"; keep "line L, column C" and "<what>", add the byte offset.
      const std::string& what = *scanner.syntax_error;
      const auto at = what.find("at line ");
      const auto colon = at == std::string::npos ? at : what.find(": ", at);
      if (at != std::string::npos && colon != std::string::npos) {
        message = fmt::format("invalid JSON at {} (byte {}): {}", what.substr(at + 3, colon - at - 3),
                              scanner.error_byte, what.substr(colon + 2));
      } else {
        message = fmt::format("invalid JSON at byte {}: {}", scanner.error_byte, what);
      }
    }
    diagnostics found{diagnostic{severity::error, "", message, "parse-error"}};
    return unexpected(error{errc::parse_error, std::move(message), {}, std::move(found)});
  }
  document_builder builder(!scanner.duplicates.empty());
  if (!json::sax_parse(text.begin(), text.end(), &builder, nlohmann::detail::input_format_t::json, true))
    return unexpected(error{errc::parse_error, "invalid JSON", {},
                            diagnostics{diagnostic{severity::error, "", "invalid JSON",
                                                   "parse-error"}}});
  for (auto& d : scanner.duplicates) duplicates.push_back(std::move(d));
  // Explicit move: a copy of a deeply nested document would recurse once per level.
  return expected<json, error>(std::move(builder.root));
}

}  // namespace detail

/// Parses JSON text without exceptions. Syntax errors give errc::parse_error with the
/// line, column and byte offset in the message (and one `parse-error` diagnostic);
/// duplicate object keys give errc::parse_error with a `duplicate-key` diagnostic each.
inline expected<json, error> parse_json_text(std::string_view text) {
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
inline expected<fsm_loop, error> parse_loop(const json& doc) {
  diagnostics found;
  fsm_loop loop;
  detail::read_loop(doc, loop, found);
  if (detail::count_errors(found) != 0) return unexpected(detail::invalid_loop_error(std::move(found)));
  return loop;
}

/// Parses JSON text into a loop. Syntax errors are errc::parse_error (line, column and
/// byte offset in the message); duplicate keys (`duplicate-key`) are reported with the
/// other findings of parse_loop() as errc::invalid_loop.
inline expected<fsm_loop, error> parse_loop_text(std::string_view json_text) {
  diagnostics found;
  auto doc = detail::scan_json_text(json_text, found);
  if (!doc) return unexpected(std::move(doc.error()));
  fsm_loop loop;
  detail::read_loop(*doc, loop, found);
  if (detail::count_errors(found) != 0)
    return unexpected(detail::invalid_loop_error(std::move(found)));
  return loop;
}

// ---------------------------------------------------------------------------------------
// Serialisation (ADL to_json): defaults are omitted, so documents round-trip.
// ---------------------------------------------------------------------------------------

/// `{"type": …, "operator": …, …}` with only non-default fields.
inline void to_json(json& j, const evaluate_config& c) {
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
}

/// The verdict routes in order, then `_` and `_error`.
inline void to_json(json& j, const route_config& r) {
  j = json::object();
  // Keys of an ordered_table are unique: appended without a search (O(n), not O(n²)).
  for (const auto& [verdict, target] : r.routes)
    detail::append_new_key(j.get_ref<json::object_t&>(), verdict, target);
  if (r.default_target) j["_"] = *r.default_target;
  if (r.error_target) j["_error"] = *r.error_target;
}

/// action, action_type, evaluate, route, on_* shorthands, next, terminal, failure, capture,
/// timeout, on_maintain — each only when set.
inline void to_json(json& j, const state_config& s) {
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
}

/// Only the fields that differ from the defaults (an empty object when all are default).
inline void to_json(json& j, const llm_config& l) {
  const llm_config defaults;
  j = json::object();
  if (l.enabled != defaults.enabled) j["enabled"] = l.enabled;
  if (l.model != defaults.model) j["model"] = l.model;
  if (l.max_tokens != defaults.max_tokens) j["max_tokens"] = l.max_tokens;
  if (l.timeout != defaults.timeout) j["timeout"] = detail::number_json(l.timeout);
}

/// name, paradigm, description, initial, states, context, scope, max_iterations, backoff, timeout,
/// maintain, llm, on_handoff, on_max_iterations — defaults omitted.
inline void to_json(json& j, const fsm_loop& loop) {
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
  if (loop.max_iterations != 50) j["max_iterations"] = loop.max_iterations;
  if (loop.backoff) j["backoff"] = detail::number_json(*loop.backoff);
  if (loop.timeout) j["timeout"] = detail::number_json(*loop.timeout);
  if (loop.maintain) j["maintain"] = true;
  json llm;
  to_json(llm, loop.llm);
  if (!llm.empty()) j["llm"] = std::move(llm);
  if (loop.on_handoff != handoff_policy::pause) j["on_handoff"] = std::string(to_string(loop.on_handoff));
  if (loop.on_max_iterations) j["on_max_iterations"] = *loop.on_max_iterations;
}

LITTLE_LOOPS_NAMESPACE_END

// little_loops — runtime records: action requests/results, evaluations, captured and prev data
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS
#  include <fmt/format.h>
#endif

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// What the executor asks an ActionRunner to run.
struct action_request {
  std::string_view state;          ///< the state whose action this is
  std::string_view text;           ///< the interpolated action text
  action_kind kind = action_kind::shell;
  /// Per-action timeout (the state's `timeout:`), if any.
  std::optional<std::chrono::milliseconds> timeout;
  /// Absolute loop deadline (from the loop's `timeout:`), if any: the runner must stop the
  /// action at this point and report `timed_out`.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Cancellation: when stop is requested the runner stops the action and reports
  /// `cancelled`.
  std::stop_token stop;
  /// Prompt actions: the state's `agent:`, which the host hands its agent CLI (empty: none).
  std::string_view agent{};
  /// Prompt actions: the name of the enabled `pruning_profile:` the state runs under (empty:
  /// none); the host sets `LL_AUTOMATION=1` and `LL_AUTOMATION_PROFILE=<name>` for it.
  std::string_view automation_profile{};
  /// mcp_tool actions: the state's `params:`, rendered, as compact JSON text (`{}` when it has
  /// none); the host runs `mcp-call <text> <params>`.
  std::string_view params{};
  /// A query the executor makes on its own, not the state's action: a stall evaluator's
  /// (`git diff --stat …`, `cat` of a history file) or a test guard's (listing, hashing,
  /// restoring test files). A simulating host may answer it without a turn of its script.
  bool probe = false;
  /// The directory to run in (empty: the runner's own): a sub-loop's worktree.
  std::string_view working_dir{};
};

/// What an ActionRunner reports back.
struct action_result {
  std::string output;         ///< stdout
  std::string stderr_output;  ///< stderr (JSON key "stderr")
  int exit_code = 0;
  std::chrono::milliseconds duration{0};
  bool timed_out = false;     ///< stopped by a timeout or the loop deadline
  bool idle_timeout = false;  ///< stopped for producing no output (implies timed_out)
  bool cancelled = false;     ///< stopped because a stop was requested
  int signal = 0;             ///< non-zero: killed by this signal
  bool truncated = false;     ///< output was capped by the runner
  /// When `truncated`: the runner's cap per stream, in bytes (0: not known).
  std::size_t output_limit = 0;
  /// The program could not be started at all (not found: exit code 127, not executable:
  /// 126, as a shell reports them): no output of it exists to evaluate.
  bool not_started = false;

  /// True when the action did not run to a normal exit (timeout, signal, cancellation, or
  /// a program that could not be started).
  [[nodiscard]] bool abnormal() const noexcept {
    return timed_out || cancelled || signal != 0 || not_started;
  }
};

/// Where an action's output was cut, for messages: "output cut at 16 MiB" for an
/// action_result::output_limit of 16 << 20 (whole MiB or KiB when the limit is one, bytes
/// otherwise).
LITTLE_LOOPS_INLINE std::string output_cut_text(std::size_t n);

/// @brief An evaluation's details (a JSON object, seed 000), built only when someone reads
/// them.
///
/// In a running loop most details are never looked at: with a null event sink and no
/// template reading `${prev.details}`, `${result.details}` or `${prev.evaluation}`, building
/// a JSON object per step would be the executor's main cost. So the details have three forms:
///  - empty (the default, and a null JSON value): reads as `{}`; nothing allocated;
///  - the exit-code form (exit_code()): reads as `{"exit_code": N}`; nothing allocated;
///  - a JSON value given by an evaluator (normally an object), stored as given.
/// Reading: to_json() builds a copy; visit() lends a `const json&` (built only for the compact
/// forms); materialize() and operator[] turn the details into the stored form in place.
/// Equality compares what the details read as, whatever the forms.
class evaluation_details {
 public:
  /// Empty details: `{}`.
  evaluation_details() noexcept = default;
  /// Details given as JSON (an object; a null value means empty).
  evaluation_details(json value) noexcept;  // NOLINT: implicit, as a json member was
  /// Details written as a braced JSON literal, as with `json` (`{{"key", value}}`).
  evaluation_details(json::initializer_list_t init);
  /// Replace the details by `value`.
  evaluation_details& operator=(json value) noexcept;
  /// Replace the details by a braced JSON literal.
  evaluation_details& operator=(json::initializer_list_t init);

  /// `{"exit_code": code}` without allocating.
  [[nodiscard]] static evaluation_details exit_code(int code) noexcept {
    evaluation_details d;
    d.exit_code_ = code;
    d.has_exit_code_ = true;
    return d;
  }

  /// The JSON the details read as (a new value).
  [[nodiscard]] json to_json() const;

  /// Calls `f(const json&)` with the details, building them only for the compact forms, and
  /// returns what `f` returns. `f` must return a value, never a reference or view into its
  /// argument: for the exit-code form that JSON is a temporary that dies when visit() returns.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (value_) return std::forward<F>(f)(static_cast<const json&>(*value_));
    if (!has_exit_code_) return std::forward<F>(f)(empty_object());
    const json built = to_json();
    return std::forward<F>(f)(built);
  }

  /// The details as a stored JSON value (compact forms are built in place; empty details stay
  /// unallocated and are lent as a shared `{}`).
  const json& materialize();

  /// The details as JSON without storing them: the stored value, a shared `{}`, or the
  /// compact forms written into `scratch`, which allocates only while it has another shape
  /// (an event sink that keeps scratch across calls gets the exit-code form for free).
  const json& view(json& scratch) const;

  /// Member `key` of the details, inserted when missing (the details become a stored
  /// object first, as with `json::operator[]`).
  json& operator[](std::string_view key);

  /// `to_json().dump(indent)`.
  [[nodiscard]] std::string dump(int indent = -1) const;

  friend bool operator==(const evaluation_details& a, const evaluation_details& b);
  friend bool operator==(const evaluation_details& a, const json& b);

 private:
  static const json& empty_object();

  // Engaged: the stored form. Disengaged: empty or the exit-code form. (An optional rather
  // than a null json: moving and destroying compact details then never calls into json.)
  std::optional<json> value_;
  int exit_code_ = 0;
  bool has_exit_code_ = false;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::string output_cut_text(std::size_t n) {
  if (n == 0) return "output cut at the runner's output limit";
  if (n % (std::size_t{1} << 20) == 0) return fmt::format("output cut at {} MiB", n >> 20);
  if (n % (std::size_t{1} << 10) == 0) return fmt::format("output cut at {} KiB", n >> 10);
  return fmt::format("output cut at {} bytes", n);
}

LITTLE_LOOPS_INLINE evaluation_details::evaluation_details(json value) noexcept {
  if (!value.is_null()) value_.emplace(std::move(value));
}

LITTLE_LOOPS_INLINE evaluation_details::evaluation_details(json::initializer_list_t init)
    : evaluation_details(json(init)) {}

LITTLE_LOOPS_INLINE evaluation_details& evaluation_details::operator=(json value) noexcept {
  if (value.is_null())
    value_.reset();
  else
    value_ = std::move(value);
  has_exit_code_ = false;
  return *this;
}

LITTLE_LOOPS_INLINE evaluation_details& evaluation_details::operator=(
    json::initializer_list_t init) {
  return *this = json(init);
}

LITTLE_LOOPS_INLINE json evaluation_details::to_json() const {
  if (value_) return *value_;
  json j = json::object();
  if (has_exit_code_) j["exit_code"] = exit_code_;
  return j;
}

LITTLE_LOOPS_INLINE const json& evaluation_details::materialize() {
  if (!value_) {
    if (!has_exit_code_) return empty_object();
    value_.emplace(to_json());
    has_exit_code_ = false;
  }
  return *value_;
}

LITTLE_LOOPS_INLINE const json& evaluation_details::view(json& scratch) const {
  if (value_) return *value_;
  if (!has_exit_code_) return empty_object();
  if (!scratch.is_object() || scratch.size() != 1 || !scratch.contains("exit_code"))
    scratch = json::object({{"exit_code", exit_code_}});
  else
    scratch.front() = exit_code_;
  return scratch;
}

LITTLE_LOOPS_INLINE json& evaluation_details::operator[](std::string_view key) {
  if (!value_) {
    value_.emplace(to_json());
    has_exit_code_ = false;
  }
  return (*value_)[key];
}

LITTLE_LOOPS_INLINE std::string evaluation_details::dump(int indent) const {
  return visit([indent](const json& j) { return j.dump(indent); });
}

LITTLE_LOOPS_INLINE bool operator==(const evaluation_details& a, const evaluation_details& b) {
  if (!a.value_ && !b.value_)
    return a.has_exit_code_ == b.has_exit_code_ &&
           (!a.has_exit_code_ || a.exit_code_ == b.exit_code_);
  return a.visit([&b](const json& ja) { return b == ja; });
}

LITTLE_LOOPS_INLINE bool operator==(const evaluation_details& a, const json& b) {
  return a.visit([&b](const json& ja) { return ja == b; });
}

LITTLE_LOOPS_INLINE const json& evaluation_details::empty_object() {
  static const json empty = json::object();
  return empty;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// An evaluator's verdict and its evaluator-specific details (a JSON object, see
/// evaluation_details).
struct evaluation_result {
  std::string verdict;
  evaluation_details details;
};

/// `captured.<name>`: an action result saved by a state's `capture:` (design §3.6).
struct captured_record {
  std::string output;         ///< trailing CR/LF stripped
  std::string stderr_output;
  int exit_code = 0;
  std::int64_t duration_ms = 0;
  std::string verdict;
  std::string failure_type;   ///< "" (exit 0), transient, non_recoverable or real
  std::string timeout_kind;   ///< "wall", "idle", or "" when the action did not time out
  /// A sub-loop state's record (null otherwise): an object of the child's captures (with
  /// `with:` or `context_passthrough`), `terminated_by`, `final_state`, `failure_terminal`,
  /// `error` and the terminal's `output`, which `${captured.<state>.<key>}` reads first.
  json subloop{};

  friend bool operator==(const captured_record&, const captured_record&) = default;
};

/// All captured records of a run, in capture order.
using captured_map = ordered_map<std::string, captured_record>;

/// `prev`: the last executed state's data (design §3.6), updated after every state.
struct prev_record {
  std::string state;
  std::string output;
  std::string stderr_output;
  int exit_code = 0;
  std::string verdict;
  evaluation_details details;  ///< the evaluation's details (read as a JSON object)
  /// False when the state ran no action (none, or its text failed to interpolate): output,
  /// stderr and exit_code are then empty/0, and `${prev.evaluation}` has no scriptOutput.
  bool ran_action = true;
  /// False when the state was not evaluated (a `next:` state without `evaluate:`, a state
  /// with neither action nor `evaluate:`): `${prev.evaluation}` is then the last evaluation
  /// made before it (seed 004's `last_evaluator_output`), not a record of this state.
  bool evaluated = true;

  friend bool operator==(const prev_record&, const prev_record&) = default;
};

/// The namespaces a template variable can read (design §3.8).
enum class template_namespace { context, captured, prev, result, state, loop, env };

/// Host function that looks up an environment variable for `${env.NAME}`.
/// Returns std::nullopt when the variable is not set.
using env_lookup_fn = std::optional<std::string> (*)(std::string_view name, void* user);

/// Everything a template can read. All pointers are optional (null: namespace empty).
/// The executor builds one per step without copying the data.
/// The default size limit of a rendered template other than an action (16 MiB, as the
/// default cap on captured output): interpolation_context::size_limit,
/// executor_options::render_size_limit.
inline constexpr std::size_t default_render_size_limit = std::size_t{16} << 20;
/// The default size limit of a rendered action (128 KiB): the longest single argument Linux
/// passes to a program (MAX_ARG_STRLEN, 32 pages, its terminating NUL included), which is
/// how the process runner hands an action over. executor_options::action_size_limit.
inline constexpr std::size_t default_action_size_limit = (std::size_t{128} << 10) - 1;

struct interpolation_context {
  const json* context = nullptr;          ///< `${context.*}` (an object)
  const captured_map* captured = nullptr; ///< `${captured.<name>.<field>}`
  const prev_record* prev = nullptr;      ///< `${prev.*}`; null before the first state ran
  const evaluation_result* result = nullptr; ///< `${result.*}`: the current evaluation
  /// `${prev.evaluation}` when `prev` was not evaluated: the last state that was (null: none
  /// yet, and `${prev.evaluation}` is empty).
  const prev_record* last_evaluation = nullptr;
  std::string_view state_name;            ///< `${state.name}`
  std::int64_t iteration = 1;             ///< `${state.iteration}` (1-based, as the original's)
  std::string_view loop_name;             ///< `${loop.name}`
  std::string_view started_at;            ///< `${loop.started_at}` (ISO 8601)
  std::int64_t elapsed_ms = 0;            ///< `${loop.elapsed_ms}`, `${loop.elapsed}`
  std::int64_t max_iterations = 0;        ///< `${loop.max_iterations}` (seed 004 §7)
  env_lookup_fn env = nullptr;            ///< `${env.NAME}`; null → std::getenv
  void* env_user = nullptr;               ///< passed to `env`
  /// The most bytes one rendering may produce (render_to() refuses past it, checked as it
  /// renders, so a template that repeats a large value cannot exhaust memory).
  std::size_t size_limit = default_render_size_limit;
};

struct compiled_evaluator;  // defined in evaluators.hpp: templates and patterns compiled at load

/// What the executor hands an Evaluator for one state execution.
struct evaluation_request {
  std::string_view state;                         ///< the state being evaluated
  const evaluate_config* config = nullptr;        ///< null: the state has no `evaluate:`
  const compiled_evaluator* compiled = nullptr;   ///< library-compiled form of `config`
  action_kind kind = action_kind::shell;          ///< the action's kind (default choice)
  const action_result* action = nullptr;          ///< null: the state ran no action
  const interpolation_context* context = nullptr; ///< for templated fields
  const llm_config* llm = nullptr;                ///< the loop's LLM settings
  /// Convergence memory of this state (owned by the executor, kept in snapshots): the
  /// previous value seen, updated by the convergence evaluator.
  std::optional<double>* convergence_memory = nullptr;
  /// Time left before the loop's `timeout` (nullopt: the loop has none). The LLM judge is
  /// given at most this long instead of its `llm.timeout`, and is not asked once it is gone,
  /// so a hung judge cannot hold a run past its deadline.
  std::optional<std::chrono::milliseconds> time_left;
  /// The loop's dialect: in `current`, the deterministic evaluators say `yes`/`no` and a
  /// non-zero exit makes output_*, convergence and classify `error` (design §6.1).
  loop_dialect dialect = loop_dialect::seed;
};

LITTLE_LOOPS_NAMESPACE_END

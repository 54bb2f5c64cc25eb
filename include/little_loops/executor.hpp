// little_loops — fsm_executor: runs a compiled loop (run / step / stop / snapshot / resume)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/concepts.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/events.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/snapshot.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <exception>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

// ---------------------------------------------------------------------------------------------
// Clock

/// @brief The executor's source of time: monotonic time for elapsed/timeout/deadline, wall time
/// for event time stamps and `started_at`, and an interruptible sleep for `backoff`.
/// Inject a manual_clock in tests so nothing ever sleeps.
class executor_clock {
 public:
  virtual ~executor_clock() = default;
  /// Monotonic now.
  virtual std::chrono::steady_clock::time_point now() noexcept = 0;
  /// Wall-clock now (UTC).
  virtual event_time wall_now() noexcept = 0;
  /// Sleep for `d`, returning early when `stop` is requested.
  virtual void sleep_for(std::chrono::nanoseconds d, std::stop_token stop) = 0;
};

/// The real clock: std::chrono::steady_clock / system_clock and a stop-aware sleep.
class system_executor_clock final : public executor_clock {
 public:
  std::chrono::steady_clock::time_point now() noexcept override {
    return std::chrono::steady_clock::now();
  }
  event_time wall_now() noexcept override { return std::chrono::system_clock::now(); }
  void sleep_for(std::chrono::nanoseconds d, std::stop_token stop) override {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, d, [] { return false; });
  }
};

/// The process-wide system clock used when executor_options::clock is null.
inline executor_clock& default_executor_clock() noexcept {
  static system_executor_clock clock;
  return clock;
}

/// @brief A clock that only moves when told to: `advance()`, or `sleep_for` (which advances
/// instead of sleeping and records the request). Also `auto_advance` per `now()` call.
class manual_clock final : public executor_clock {
 public:
  /// Starts at steady epoch + 0 and wall time 2026-01-01T00:00:00Z.
  manual_clock() = default;

  std::chrono::steady_clock::time_point now() noexcept override {
    const auto t = steady_;
    steady_ += auto_advance;
    wall_ += std::chrono::duration_cast<event_time::duration>(auto_advance);
    return t;
  }
  event_time wall_now() noexcept override { return wall_; }
  void sleep_for(std::chrono::nanoseconds d, std::stop_token) override {
    sleeps.push_back(d);
    advance(d);
  }
  /// Move both clocks forward.
  void advance(std::chrono::nanoseconds d) noexcept {
    steady_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
    wall_ += std::chrono::duration_cast<event_time::duration>(d);
  }

  std::vector<std::chrono::nanoseconds> sleeps;    ///< every sleep_for request, in order
  std::chrono::nanoseconds auto_advance{0};        ///< added after every now() call

 private:
  std::chrono::steady_clock::time_point steady_{};
  event_time wall_{std::chrono::sys_days{std::chrono::year{2026} / 1 / 1}};
};

// ---------------------------------------------------------------------------------------------
// Options and results

/// What an output signal does (design §3.14).
enum class signal_kind {
  handoff,  ///< pause: the run ends as `handoff` with the payload and a resumable snapshot
  error,    ///< the run ends as `error` with the payload as the message
  stop,     ///< the state finishes routing, then the run ends as `cancelled`
};

/// `"handoff"` / `"error"` / `"stop"`.
inline std::string_view to_string(signal_kind k) noexcept {
  switch (k) {
    case signal_kind::handoff: return "handoff";
    case signal_kind::error: return "error";
    case signal_kind::stop: return "stop";
  }
  return "unknown";
}

/// A marker searched for in an action's stdout. The payload is the rest of the text after the
/// marker (leading whitespace, including newlines, skipped) up to the end of that line,
/// trimmed. With `payload_required` a marker without payload does not count.
struct output_signal {
  std::string marker;
  signal_kind kind = signal_kind::handoff;
  bool payload_required = true;
};

/// The default signals, checked in this order: `CONTEXT_HANDOFF:` (handoff), `FATAL_ERROR:`
/// (error), `LOOP_STOP:` (stop, payload optional).
inline std::vector<output_signal> default_output_signals() {
  return {output_signal{"CONTEXT_HANDOFF:", signal_kind::handoff, true},
          output_signal{"FATAL_ERROR:", signal_kind::error, true},
          output_signal{"LOOP_STOP:", signal_kind::stop, false}};
}

/// Host settings of an executor (the loop document holds the rest).
struct executor_options {
  /// Output signals, in priority order (empty: no signal detection).
  std::vector<output_signal> signals = default_output_signals();
  /// Time source; null → default_executor_clock(). Must outlive the executor.
  executor_clock* clock = nullptr;
  /// Per-action timeout used when a state has no `timeout:` (nullopt: the runner decides).
  std::optional<std::chrono::milliseconds> default_action_timeout;
  /// `${env.NAME}` lookup (null: std::getenv) and its user pointer.
  env_lookup_fn env = nullptr;
  void* env_user = nullptr;
  /// The most bytes a rendered action may have: past it the state's verdict is `error`
  /// (errc::template_too_large), found while rendering. The default is the argument limit
  /// of Linux's exec (default_action_size_limit); a runner that takes longer actions may
  /// raise it.
  std::size_t action_size_limit = default_action_size_limit;
  /// The most bytes any other rendered template (route targets, evaluator fields) may have.
  std::size_t render_size_limit = default_render_size_limit;
};

/// Why a run ended (design §3.12).
enum class termination {
  terminal,        ///< a terminal state was reached (see execution_result::failure)
  max_iterations,  ///< the `max_iterations` cap (after `on_max_iterations`, if any)
  timeout,         ///< the loop `timeout` passed
  cancelled,       ///< a stop was requested (request_stop, stop token, `LOOP_STOP:`)
  error,           ///< an unrouted error, a bad route target, or `FATAL_ERROR:`
  handoff,         ///< `CONTEXT_HANDOFF:`: paused with a resumable snapshot
};

/// `"terminal"`, `"max_iterations"`, `"timeout"`, `"cancelled"`, `"error"`, `"handoff"`.
inline std::string_view to_string(termination t) noexcept {
  switch (t) {
    case termination::terminal: return "terminal";
    case termination::max_iterations: return "max_iterations";
    case termination::timeout: return "timeout";
    case termination::cancelled: return "cancelled";
    case termination::error: return "error";
    case termination::handoff: return "handoff";
  }
  return "unknown";
}

/// The outcome of a run (seed 002's ExecutionResult plus design §3.12–§3.14).
struct execution_result {
  std::string final_state;                 ///< the state the run ended in
  std::int64_t iterations = 0;             ///< state executions (maintain restarts count)
  termination terminated_by = termination::error;
  bool failure = false;                    ///< ended in a terminal marked `failure: true`
  std::int64_t duration_ms = 0;            ///< total run time, across resumes
  captured_map captured;                   ///< `captured.*` at the end
  std::optional<little_loops::error> error;  ///< why the run failed (terminated_by error)
  std::optional<signal_kind> signal;       ///< the output signal that ended the run, if any
  std::string signal_payload;              ///< its payload (handoff: the continuation)
  handoff_policy on_handoff = handoff_policy::pause;  ///< the loop's `on_handoff`
  /// Where to go on from: set for every ending except `terminal` and `error` (an error ends
  /// the run after its state ran, with nowhere to go: resuming would run that state again).
  std::optional<little_loops::snapshot> snapshot;

  /// True when the run reached a terminal state that is not marked `failure`.
  [[nodiscard]] bool succeeded() const noexcept {
    return terminated_by == termination::terminal && !failure;
  }
};

/// JSON of a result: `{final_state, iterations, terminated_by, failure, duration_ms, captured,
/// [error, error_code], [signal, continuation, on_handoff, handoff, continuation_prompt],
/// [snapshot]}`. `error` and `error_code` are present only when the run has an error (as the
/// seed's `to_dict()` omits an `error` that is None); a handoff also has the original's
/// `handoff: true` and `continuation_prompt`.
inline json to_json(const execution_result& r) {
  json j = json::object();
  j["final_state"] = r.final_state;
  j["iterations"] = r.iterations;
  j["terminated_by"] = to_string(r.terminated_by);
  j["failure"] = r.failure;
  j["duration_ms"] = r.duration_ms;
  j["captured"] = detail::captured_to_json(r.captured);
  if (r.error) {
    j["error"] = r.error->message;
    j["error_code"] = error_id(r.error->code);
  }
  if (r.signal) {
    j["signal"] = to_string(*r.signal);
    if (*r.signal == signal_kind::handoff) {
      j["continuation"] = r.signal_payload;
      j["on_handoff"] = to_string(r.on_handoff);
      j["handoff"] = true;
      j["continuation_prompt"] = r.signal_payload;
    } else {
      j["signal_payload"] = r.signal_payload;
    }
  }
  if (r.snapshot) j["snapshot"] = to_json(*r.snapshot);
  return j;
}

namespace detail {

struct found_signal {
  signal_kind kind;
  std::string_view payload;
};

inline std::optional<found_signal> find_output_signal(std::string_view out,
                                                      const std::vector<output_signal>& signals) {
  constexpr std::string_view ws = " \t\r\n\f\v";
  if (out.empty()) return std::nullopt;  // markers are never empty
  for (const auto& sig : signals) {
    if (sig.marker.empty()) continue;
    std::size_t from = 0;
    while (true) {
      const auto pos = out.find(sig.marker, from);
      if (pos == std::string_view::npos) break;
      std::string_view rest = out.substr(pos + sig.marker.size());
      const auto b = rest.find_first_not_of(ws);
      std::string_view payload;
      if (b != std::string_view::npos) {
        rest.remove_prefix(b);
        payload = rest.substr(0, rest.find('\n'));
        const auto e = payload.find_last_not_of(ws);
        payload = payload.substr(0, e + 1);
      } else if (rest.find_first_not_of('\n') != std::string_view::npos) {
        // Only whitespace follows, but not only newlines (`MARKER: `, a CRLF line end): the
        // original's `MARKER\s*(.+)` still matches, with an empty (stripped) payload.
        return found_signal{sig.kind, payload};
      }
      if (!payload.empty() || !sig.payload_required) return found_signal{sig.kind, payload};
      from = pos + 1;
    }
  }
  return std::nullopt;
}

// Moves the text of `from` into `to` (whose old text is dropped) without allocating in steady
// state: short texts are copied into `to`'s buffer, long ones are swapped (O(1)); `from` is
// left with unspecified contents.
// GCC 12 at -O3 reports the copies in std::string::swap's short-string branches as out of
// bounds; they cannot run here (`from` is longer than the inline buffer) — false positives
// of -Warray-bounds / -Wstringop-overflow / -Wstringop-overread, silenced for this function.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Warray-bounds"
#  pragma GCC diagnostic ignored "-Wstringop-overflow"
#  pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
inline void take_text(std::string& to, std::string& from) {
  if (from.empty())
    to.clear();
  else if (from.size() <= 64)
    to.assign(from);
  else
    to.swap(from);
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#  pragma GCC diagnostic pop
#endif

inline std::string_view strip_trailing_newlines(std::string_view s) noexcept {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The executor

/// @brief Runs a compiled loop: actions through `Runner`, verdicts through `Eval`, events to
/// `Sink`.
///
/// Build it with make_executor() (or `create`), which validates and compiles the loop once;
/// then `run()` to completion, or `step()` one state at a time. `request_stop()` (or a stop
/// token given to `run`) stops at the next state boundary and is passed to the runner.
/// `snapshot()` captures the run at a boundary; `resume()` continues one.
///
/// Per step the executor renders the state's compiled action template into a reused buffer,
/// calls the runner and the evaluator, and follows a precomputed route: no parsing, no map
/// lookups by name for static targets, no heap allocation of its own in steady state.
///
/// @tparam Runner an ActionRunner (may be an lvalue reference type to borrow one)
/// @tparam Eval an Evaluator (default: default_evaluator, no LLM judge)
/// @tparam Sink an EventSink (default: null_event_sink, which costs nothing)
template <ActionRunner Runner, Evaluator Eval = default_evaluator, EventSink Sink = null_event_sink>
class fsm_executor {
  static constexpr bool emits_events =
      !std::is_same_v<std::remove_cvref_t<Sink>, null_event_sink>;

 public:
  using runner_type = Runner;
  using evaluator_type = Eval;
  using sink_type = Sink;

  /// Build an executor over an already compiled loop (cheap; shares the compiled loop).
  fsm_executor(std::shared_ptr<const compiled_loop> loop, Runner runner, Eval eval = Eval{},
               Sink sink = Sink{}, executor_options options = {})
      : loop_(std::move(loop)),
        runner_(std::forward<Runner>(runner)),
        eval_(std::forward<Eval>(eval)),
        sink_(std::forward<Sink>(sink)),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : &default_executor_clock()) {
    reset();
  }

  /// Validate and compile `loop`, then build an executor.
  static expected<fsm_executor, little_loops::error> create(const fsm_loop& loop, Runner runner,
                                                            Eval eval = Eval{}, Sink sink = Sink{},
                                                            executor_options options = {}) {
    auto compiled = compiled_loop::compile(loop);
    if (!compiled) return unexpected(compiled.error());
    return fsm_executor(std::move(*compiled), std::forward<Runner>(runner),
                        std::forward<Eval>(eval), std::forward<Sink>(sink), std::move(options));
  }

  /// @brief Run until the loop ends (terminal, limit, timeout, stop, error or handoff).
  const execution_result& run() {
    while (step()) {
    }
    return result_;
  }

  /// Run, also stopping when `token` is requested.
  const execution_result& run(std::stop_token token) {
    std::stop_callback forward(token, [this]() noexcept { stop_.request_stop(); });
    return run();
  }

  /// @brief Advance by one state execution (or one maintain restart, or the final check).
  /// @return true while the run goes on; false once finished (see result()).
  bool step() {
    if (finished_) return false;
    if (!started_) begin();
    if (stop_.stop_requested()) {
      finish(termination::cancelled);
      return false;
    }
    const fsm_loop& def = loop_->loop();
    {
      const compiled_state& st = loop_->state(current_);
      // The loop timeout before the terminal, as in seed 002 (a terminal reached after the
      // deadline ends as `timeout`, final state the terminal); design §3.5 reverses only the
      // cap: a terminal reached on the last allowed step ends as `terminal`. A maintain
      // restart is an iteration, so it obeys the cap.
      if (st.terminal && def.timeout) {
        now_ = clock_->now();
        if (elapsed_ms() > static_cast<std::int64_t>(*def.timeout * 1000.0)) {
          finish(termination::timeout);
          return false;
        }
      }
      if (st.terminal && !(def.maintain && iteration_ >= def.max_iterations)) {
        if (def.maintain && !summary_executed_) {
          auto target = take_static(st, st.maintain_target);
          if (!target) {  // `on_maintain` names no state
            report_error(st, "route", target.error().message);
            finish(termination::error, std::move(target.error()));
            return false;
          }
          // A maintain restart counts as one iteration (design §3.16).
          ++iteration_;
          const std::size_t to = *target;
          if constexpr (emits_events)
            emit(route_event{wall(), st.name, loop_->state(to).name, "maintain"});
          current_ = to;
          return true;
        }
        finish(summary_executed_ ? termination::max_iterations : termination::terminal);
        return false;
      }
    }
    if (iteration_ >= def.max_iterations) {
      const auto& summary = loop_->on_max_iterations();
      if (!summary || summary_executed_) {
        finish(termination::max_iterations);
        return false;
      }
      summary_executed_ = true;
      if (summary->type != compiled_target::kind::state) {
        little_loops::error err{
            errc::unknown_state,
            fmt::format("on_max_iterations names \"{}\", which is not a state", summary->source),
            summary->path};
        report_error(loop_->state(current_), "route", err.message);
        finish(termination::error, std::move(err));
        return false;
      }
      if constexpr (emits_events)
        emit(max_iterations_event{wall(), loop_->state(summary->index).name, iteration_});
      current_ = summary->index;
      if (loop_->state(current_).terminal) {
        finish(termination::max_iterations);
        return false;
      }
    }
    now_ = clock_->now();
    if (def.timeout && elapsed_ms() > static_cast<std::int64_t>(*def.timeout * 1000.0)) {
      finish(termination::timeout);
      return false;
    }
    execute(loop_->state(current_));
    return !finished_;
  }

  /// Ask the run to stop at the next state boundary; the running action gets the stop token.
  void request_stop() noexcept { stop_.request_stop(); }
  /// The executor's stop token (given to the runner in every request).
  [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_.get_token(); }

  /// True once the run ended.
  [[nodiscard]] bool finished() const noexcept { return finished_; }
  /// The outcome (meaningful once finished()).
  [[nodiscard]] const execution_result& result() const noexcept { return result_; }
  /// The state that runs next (or the final state once finished).
  [[nodiscard]] std::string_view current_state() const noexcept {
    return loop_->state(current_).name;
  }
  /// State executions so far.
  [[nodiscard]] std::int64_t iteration() const noexcept { return iteration_; }
  /// `captured.*` so far.
  [[nodiscard]] const captured_map& captured() const noexcept { return captured_; }
  /// `prev` (null before the first state ran).
  [[nodiscard]] const prev_record* prev() const noexcept { return has_prev_ ? &prev_ : nullptr; }
  /// The compiled loop.
  [[nodiscard]] const compiled_loop& loop() const noexcept { return *loop_; }
  /// The runner, evaluator and sink.
  [[nodiscard]] std::remove_reference_t<Runner>& runner() noexcept { return runner_; }
  [[nodiscard]] std::remove_reference_t<Eval>& evaluator() noexcept { return eval_; }
  [[nodiscard]] std::remove_reference_t<Sink>& sink() noexcept { return sink_; }

  /// @brief The run's state at the current boundary: resuming it continues with
  /// current_state() and never re-runs a completed action.
  [[nodiscard]] little_loops::snapshot snapshot() const {
    // Its own storage, not snapshot_view()'s: const callers may run at once.
    std::vector<std::pair<std::string_view, double>> convergence;
    return view_into(convergence).materialize();
  }

  /// @brief snapshot() by reference to the executor's state, without copying it (what a
  /// journal writes at every boundary: `loop_journal::save(record, ex.snapshot_view())`).
  /// Valid until the executor next changes (step(), run(), resume(), reset()) or the next
  /// snapshot_view() call; unlike snapshot(), not to be called from two threads at once.
  [[nodiscard]] little_loops::snapshot_view snapshot_view() const {
    return view_into(convergence_view_);
  }

 private:
  void note_convergence_state(std::size_t state) {
    const auto at = std::lower_bound(convergence_states_.begin(), convergence_states_.end(), state);
    if (at == convergence_states_.end() || *at != state) convergence_states_.insert(at, state);
  }

  little_loops::snapshot_view view_into(
      std::vector<std::pair<std::string_view, double>>& convergence_storage) const {
    little_loops::snapshot_view v;
    v.loop_name = loop_->loop().name;
    v.digest = loop_->digest();
    v.current_state = loop_->state(resume_state_ ? *resume_state_ : current_).name;
    v.iteration = iteration_;
    v.summary_executed = summary_executed_;
    v.context = &context_;
    v.captured = &captured_;
    v.prev = has_prev_ ? &prev_ : nullptr;
    v.last_evaluation = last_evaluation();
    convergence_storage.clear();
    for (const std::size_t i : convergence_states_)
      if (convergence_[i]) convergence_storage.emplace_back(loop_->state(i).name, *convergence_[i]);
    v.convergence = convergence_storage;
    v.elapsed_ms = started_ ? elapsed_ms_now() : elapsed_offset_ms_;
    v.started_at = started_at_;
    return v;
  }

 public:
  /// @brief Restore a snapshot; the next step()/run() continues from it (emitting
  /// `loop_resume` instead of `loop_start`).
  /// @return `errc::snapshot_mismatch` when the snapshot belongs to another loop definition
  /// (digest or name differ) or names an unknown state; the executor is then unchanged.
  expected<void, little_loops::error> resume(const little_loops::snapshot& s) {
    if (s.digest != loop_->digest() || s.loop_name != loop_->loop().name)
      return unexpected(little_loops::error{
          errc::snapshot_mismatch,
          fmt::format("snapshot of loop \"{}\" (digest {}) does not match loop \"{}\" (digest {})",
                      s.loop_name, s.digest, loop_->loop().name, loop_->digest()),
          "digest"});
    const auto at = loop_->find(s.current_state);
    if (!at)
      return unexpected(little_loops::error{
          errc::snapshot_mismatch,
          fmt::format("snapshot state \"{}\" is not a state of loop \"{}\"", s.current_state,
                      loop_->loop().name),
          "current_state"});
    std::vector<std::optional<double>> conv(loop_->states().size());
    for (const auto& [name, value] : s.convergence) {
      const auto i = loop_->find(name);
      if (!i)
        return unexpected(little_loops::error{
            errc::snapshot_mismatch, fmt::format("convergence memory of unknown state \"{}\"", name),
            "convergence." + name});
      conv[*i] = value;
    }
    reset();
    current_ = *at;
    iteration_ = s.iteration;
    summary_executed_ = s.summary_executed;
    context_ = s.context;
    captured_ = captured_map(s.captured);
    has_prev_ = s.prev.has_value();
    if (s.prev) prev_ = *s.prev;
    has_last_eval_ = s.last_evaluation.has_value();
    if (s.last_evaluation) last_eval_ = *s.last_evaluation;
    convergence_ = std::move(conv);
    for (std::size_t i = 0; i < convergence_.size(); ++i)
      if (convergence_[i]) convergence_states_.push_back(i);
    elapsed_offset_ms_ = s.elapsed_ms;
    started_at_ = s.started_at;
    resumed_ = true;
    return {};
  }

  /// Forget the run: the next step() starts again from the initial state.
  void reset() {
    current_ = loop_->initial();
    iteration_ = 0;
    started_ = finished_ = summary_executed_ = resumed_ = has_prev_ = has_last_eval_ = false;
    context_ = loop_->loop().context;
    captured_.clear();
    prev_ = prev_record{};
    last_eval_ = prev_record{};
    convergence_.assign(loop_->states().size(), std::nullopt);
    convergence_states_.clear();
    elapsed_offset_ms_ = 0;
    started_at_.clear();
    resume_state_.reset();
    result_ = execution_result{};
    if (stop_.stop_requested()) stop_ = std::stop_source{};
    request_ = action_request{};
    request_.stop = stop_.get_token();
  }

 private:
  // ---- time ----
  event_time wall() noexcept { return clock_->wall_now(); }
  std::int64_t elapsed_ms() const noexcept {
    return elapsed_offset_ms_ +
           std::chrono::duration_cast<std::chrono::milliseconds>(now_ - start_).count();
  }
  std::int64_t elapsed_ms_now() const noexcept {
    return elapsed_offset_ms_ +
           std::chrono::duration_cast<std::chrono::milliseconds>(clock_->now() - start_).count();
  }

  template <class Event>
  void emit(Event&& ev) noexcept {
    sink_.on_event(loop_event{std::forward<Event>(ev)});
  }

  void begin() {
    started_ = true;
    start_ = clock_->now();
    now_ = start_;
    if (started_at_.empty()) started_at_ = format_timestamp(clock_->wall_now());
    if (loop_->loop().timeout) {
      const auto budget = std::chrono::milliseconds(
          static_cast<std::int64_t>(*loop_->loop().timeout * 1000.0) - elapsed_offset_ms_);
      deadline_ = start_ + budget;
    }
    if constexpr (emits_events) {
      if (resumed_)
        emit(loop_resume_event{wall(), loop_->loop().name, loop_->state(current_).name,
                               iteration_});
      else
        emit(loop_start_event{wall(), loop_->loop().name});
    }
  }

  interpolation_context make_context(const compiled_state& st) const noexcept {
    interpolation_context ctx;
    ctx.context = &context_;
    ctx.captured = &captured_;
    ctx.prev = has_prev_ ? &prev_ : nullptr;
    ctx.last_evaluation = last_evaluation();
    ctx.result = nullptr;
    ctx.state_name = st.name;
    ctx.iteration = iteration_;
    ctx.loop_name = loop_->loop().name;
    ctx.max_iterations = loop_->loop().max_iterations;
    ctx.started_at = started_at_;
    ctx.elapsed_ms = elapsed_ms();
    ctx.env = options_.env;
    ctx.env_user = options_.env_user;
    ctx.size_limit = options_.render_size_limit;
    return ctx;
  }

  // What `${prev.evaluation}` reads when prev was not evaluated (null: no evaluation yet).
  const prev_record* last_evaluation() const noexcept {
    return has_prev_ && !prev_.evaluated && has_last_eval_ ? &last_eval_ : nullptr;
  }

  void set_error_verdict(std::string message) {
    result_eval_.verdict = "error";
    result_eval_.details = json::object();
    result_eval_.details["error"] = std::move(message);
  }

  void report_error(const compiled_state& st, std::string_view kind, std::string_view message) {
    if constexpr (emits_events) emit(error_event{wall(), st.name, kind, message});
  }

  // The host's runner and evaluator: an exception from either is the `error` verdict with
  // what it said (design §3.4), never an exception out of step(). The results are declared
  // with their type: a host may return anything convertible (ActionRunner, Evaluator), and
  // one returning the type exactly is constructed in place.
  expected<action_result, error> call_runner(const action_request& req) {
    try {
      return runner_.run(req);
    } catch (const std::exception& e) {
      return unexpected(error{errc::action_failed, std::string("the action runner threw: ") + e.what()});
    } catch (...) {
      return unexpected(error{errc::action_failed, "the action runner threw an exception"});
    }
  }

  expected<evaluation_result, error> call_evaluator(const evaluation_request& req) {
    try {
      return eval_.evaluate(req);
    } catch (const std::exception& e) {
      return unexpected(error{errc::evaluation_failed, std::string("the evaluator threw: ") + e.what()});
    } catch (...) {
      return unexpected(error{errc::evaluation_failed, "the evaluator threw an exception"});
    }
  }

  // Execute one (non-terminal) state: action, then conclude() (evaluation, capture, prev,
  // routing). The runner's result stays where the runner returned it: it is not moved.
  void execute(const compiled_state& st) {
    ++iteration_;
    if constexpr (emits_events) emit(state_enter_event{wall(), st.name, iteration_});
    interpolation_context ctx = make_context(st);
    if (!st.action) {
      conclude(st, ctx, nullptr, false);
      return;
    }
    std::string_view text;
    if (st.action->is_literal()) {
      text = st.action->literal();
    } else {
      action_text_.clear();
      ctx.size_limit = options_.action_size_limit;
      auto r = render_to(*st.action, ctx, action_text_);
      ctx.size_limit = options_.render_size_limit;
      if (!r) {
        report_error(st, "interpolation", r.error().message);
        set_error_verdict(r.error().message);
        conclude(st, ctx, nullptr, true);
        return;
      }
      text = action_text_;
    }
    const action_kind kind = st.kind_from_rendered && !text.empty() && text.front() == '/'
                                 ? action_kind::slash_command
                                 : st.kind;
    if constexpr (emits_events)
      emit(action_start_event{wall(), st.name, text, kind != action_kind::shell});
    // The request is a member so its stop token is not copied (two atomic operations) per
    // step.
    action_request& req = request_;
    req.state = st.name;
    req.text = text;
    req.kind = kind;
    req.timeout = st.timeout ? st.timeout : options_.default_action_timeout;
    req.deadline = deadline_;
    expected<action_result, error> res = call_runner(req);
    req.text = {};  // may view action_text_
    if (!res) {
      report_error(st, "action", res.error().message);
      set_error_verdict(res.error().message);
      conclude(st, ctx, nullptr, true);
      return;
    }
    conclude(st, ctx, &*res, false);
  }

  // The rest of a state execution. `action` is the action's result (null: no action ran);
  // `decided`: the verdict is already set (an error before evaluation).
  void conclude(const compiled_state& st, interpolation_context& ctx, action_result* action,
                bool decided) {
    const bool ran = action != nullptr;
    std::optional<detail::found_signal> signal;
    if (ran) {
      const action_result& a = *action;
      if constexpr (emits_events)
        emit(action_complete_event{wall(), st.name, a.exit_code,
                                   static_cast<std::int64_t>(a.duration.count()), a.output,
                                   request_.kind != action_kind::shell, a.timed_out,
                                   a.cancelled, a.signal, a.truncated, a.output_limit});
      // A cancelled action did not complete: stop here and re-run it on resume.
      if (a.cancelled || (a.abnormal() && stop_.stop_requested())) {
        finish(termination::cancelled);
        return;
      }
      // The loop deadline expired inside the action: the run ends as `timeout`.
      if (a.timed_out && deadline_ && clock_->now() >= *deadline_) {
        finish(termination::timeout);
        return;
      }
      if (st.capture) {
        captured_record& rec = captured_[*st.capture];
        rec.output.assign(detail::strip_trailing_newlines(a.output));
        rec.stderr_output.assign(a.stderr_output);
        rec.exit_code = a.exit_code;
        rec.duration_ms = static_cast<std::int64_t>(a.duration.count());
        rec.verdict.clear();
      }
      if (a.abnormal()) {
        // Timeouts and signal deaths are the verdict `error` (design §3.4), whatever the
        // evaluator would say.
        result_eval_ = detail::abnormal_action_result(a);
        decided = true;
      }
    }

    // A verdict decided without the evaluator (timeout, signal death, an action that could
    // not run) is reported as an evaluate event, except in a `next:` state, which is never
    // evaluated (seed 002 and the original at every version: the action runs, then `next`;
    // the verdict only picks on_error). Validation warns about an `evaluate:` there.
    bool emit_evaluate = decided && !st.next;
    bool default_evaluation = false;  // the default evaluator decided: its event is {type, verdict}
    if (!decided) {
      if (!st.next && (st.evaluator || ran)) {
        evaluation_request req;
        req.state = st.name;
        req.config = st.evaluator ? &*st.config->evaluate : nullptr;
        req.compiled = st.evaluator ? &*st.evaluator : nullptr;
        req.kind = st.kind;
        req.action = action;
        req.context = &ctx;
        req.llm = &loop_->loop().llm;
        if (deadline_)
          req.time_left = std::max(std::chrono::milliseconds(0),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       *deadline_ - clock_->now()));
        req.convergence_memory = &convergence_[current_];
        expected<evaluation_result, error> ev = call_evaluator(req);
        if (convergence_[current_]) note_convergence_state(current_);
        if (ev) {
          result_eval_.verdict = std::move(ev->verdict);
          result_eval_.details = std::move(ev->details);
          default_evaluation = !st.evaluator;
        } else {
          report_error(st, "evaluator", ev.error().message);
          set_error_verdict(ev.error().message);
        }
        emit_evaluate = true;
      } else if (ran) {
        // A `next:` state: the exit code decides, silently (seed 002).
        result_eval_.verdict.assign(action->exit_code == 0   ? std::string_view("success")
                                    : action->exit_code == 1 ? std::string_view("failure")
                                                             : std::string_view("error"));
        result_eval_.details = evaluation_details{};
      } else {
        // Neither action nor evaluate (or a `next:` state without action): success, no event.
        result_eval_.verdict = "success";
        result_eval_.details = evaluation_details{};
      }
    }
    if constexpr (emits_events) {
      if (emit_evaluate)
        emit(evaluate_event{wall(), st.name, st.evaluator_name, result_eval_.verdict,
                            &result_eval_.details.materialize(), !default_evaluation});
    }
    if (st.capture && ran) captured_[*st.capture].verdict = result_eval_.verdict;

    // Route targets see the state before this one as `prev` (seed 002 builds the context
    // before the state runs; `result` is this state's): kept, as a copy, only for a state
    // whose targets are templates.
    const bool had_prev = has_prev_;
    if (st.dynamic_targets && had_prev) route_prev_ = prev_;
    // An unevaluated state keeps the last evaluation for `${prev.evaluation}` (seed 004's
    // `last_evaluator_output`): an evaluated prev is swapped aside (no copy; prev_ then
    // reuses the older record's buffers).
    if (!emit_evaluate && has_prev_ && prev_.evaluated) {
      std::swap(last_eval_, prev_);
      has_last_eval_ = true;
    }
    // prev = this state, from now on. The action's output moves into prev (the action result
    // is not read again).
    prev_.state.assign(st.name);
    prev_.evaluated = emit_evaluate;
    prev_.ran_action = ran;
    if (ran) {
      detail::take_text(prev_.output, action->output);
      detail::take_text(prev_.stderr_output, action->stderr_output);
      prev_.exit_code = action->exit_code;
      // Output signals (design §3.14); payloads view prev_.output.
      if (!options_.signals.empty())
        signal = detail::find_output_signal(prev_.output, options_.signals);
    } else {
      prev_.output.clear();
      prev_.stderr_output.clear();
      prev_.exit_code = 0;
    }
    prev_.verdict.assign(result_eval_.verdict);
    if (st.dynamic_targets)
      prev_.details = result_eval_.details;
    else
      prev_.details = std::move(result_eval_.details);
    has_prev_ = true;

    // FATAL_ERROR: ends the run before routing.
    if (signal && signal->kind == signal_kind::error) {
      const std::string payload(signal->payload);
      report_error(st, "signal", payload);
      result_.signal = signal_kind::error;
      result_.signal_payload = payload;
      finish(termination::error, little_loops::error{errc::action_failed, payload, st.name});
      return;
    }

    if (st.dynamic_targets) {
      ctx.prev = had_prev ? &route_prev_ : nullptr;
      ctx.last_evaluation =
          had_prev && !route_prev_.evaluated && has_last_eval_ ? &last_eval_ : nullptr;
    } else {
      ctx.prev = &prev_;  // (static targets read nothing)
      ctx.last_evaluation = last_evaluation();
    }
    ctx.result = &result_eval_;
    const bool failed_action =
        (ran && (prev_.exit_code != 0 || action->abnormal())) ||
        std::string_view(result_eval_.verdict) == "error";
    // The state has an action that could not be run at all (interpolation failure, runner
    // error): the verdict is `error`, set in execute().
    const bool unrunnable = st.action.has_value() && !ran;
    target_render_failed_ = false;
    auto next = route(st, result_eval_.verdict, failed_action, unrunnable, ctx);
    if (!next && target_render_failed_ && std::string_view(result_eval_.verdict) != "error") {
      // Design §3.4: a target that cannot be interpolated makes the verdict `error`, which
      // routes like any verdict (on_error, `_error`, `_`); only an unrouted one ends the run.
      report_error(st, "interpolation", next.error().message);
      set_error_verdict(next.error().message);
      prev_.evaluated = true;  // the error verdict is this state's evaluation
      prev_.verdict.assign(result_eval_.verdict);
      prev_.details = result_eval_.details;
      if (st.capture && ran) captured_[*st.capture].verdict = result_eval_.verdict;
      next = route(st, result_eval_.verdict, true, unrunnable, ctx);
    }

    if (signal && signal->kind == signal_kind::handoff) {
      const std::string payload(signal->payload);
      if constexpr (emits_events)
        emit(handoff_event{wall(), st.name, iteration_, payload});
      result_.signal = signal_kind::handoff;
      result_.signal_payload = payload;
      // Resume continues where routing leads; an unroutable state is re-run.
      resume_state_ = next ? *next : current_;
      finish(termination::handoff);
      return;
    }

    if (!next && signal && signal->kind == signal_kind::stop) {
      // LOOP_STOP: asked for a stop: it is honoured even without a route (the original
      // checks its stop request before reporting "No valid transition"); resume re-runs
      // this state, as nothing says where to go.
      result_.signal = signal_kind::stop;
      result_.signal_payload.assign(signal->payload);
      finish(termination::cancelled);
      return;
    }
    if (!next) {
      // Unrouted is an error even when the loop timeout has passed meanwhile (as in the
      // original: the routing failure is reported, not the limit).
      report_error(st, "route", next.error().message);
      finish(termination::error, std::move(next.error()));
      return;
    }
    if constexpr (emits_events)
      emit(route_event{wall(), st.name, loop_->state(*next).name, {}});
    current_ = *next;

    if (signal && signal->kind == signal_kind::stop) {
      result_.signal = signal_kind::stop;
      result_.signal_payload.assign(signal->payload);
      finish(termination::cancelled);
      return;
    }
    if (const auto& backoff = loop_->loop().backoff; backoff && *backoff > 0) {
      clock_->sleep_for(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::duration<double>(*backoff)),
                        stop_.get_token());
    }
  }

  // Resolve a target that needs no rendering (state, $current, unknown) to a state index.
  expected<std::size_t, little_loops::error> take_static(const compiled_state& st,
                                                         const compiled_target& t) const {
    switch (t.type) {
      case compiled_target::kind::state: return t.index;
      case compiled_target::kind::current: return current_;
      case compiled_target::kind::dynamic: break;
      case compiled_target::kind::unknown:
        return unexpected(little_loops::error{
            errc::unknown_state,
            fmt::format("route target \"{}\" of state \"{}\" is not a state ({})", t.source,
                        st.name, t.path),
            t.path});
    }
    return unexpected(little_loops::error{
        errc::unknown_state,
        fmt::format("route target \"{}\" of state \"{}\" is not resolved", t.source, st.name),
        t.path});
  }

  // Resolve a compiled target to a state index.
  expected<std::size_t, little_loops::error> take(const compiled_state& st,
                                                  const compiled_target& t,
                                                  const interpolation_context& ctx) {
    if (t.type != compiled_target::kind::dynamic) return take_static(st, t);
    target_text_.clear();
    auto r = render_to(t.tmpl, ctx, target_text_);
    target_render_failed_ = !r;
    if (!r)
      return unexpected(little_loops::error{
          r.error().code,
          fmt::format("route target \"{}\" of state \"{}\": {}", t.source, st.name,
                      r.error().message),
          "states." + st.name});
    if (target_text_ == "$current") return current_;
    if (auto i = loop_->find(target_text_)) return *i;
    return unexpected(little_loops::error{
        errc::unknown_state,
        fmt::format("route target \"{}\" of state \"{}\" resolved to \"{}\", which is not a state",
                    t.source, st.name, target_text_),
        "states." + st.name});
  }

  // Design §3.3: next (happy path) → exact route key → `_error` → `_` → on_<verdict> →
  // maintain fallback → error naming state and verdict (and, for `error`, its cause).
  // In a `next:` state a failed action goes to on_error when there is one, else to `next`;
  // an action that could not be run at all (`unrunnable`) without on_error is unrouted.
  expected<std::size_t, little_loops::error> route(const compiled_state& st, std::string_view verdict,
                                                   bool failed_action, bool unrunnable,
                                                   const interpolation_context& ctx) {
    if (st.next) {
      if (failed_action && st.on_error) return take(st, st.on[*st.on_error].second, ctx);
      if (!unrunnable) return take(st, *st.next, ctx);
    } else {
      for (const auto& [key, target] : st.routes)
        if (key == verdict) return take(st, target, ctx);
      if (st.route_error && verdict == "error") return take(st, *st.route_error, ctx);
      if (st.route_default) return take(st, *st.route_default, ctx);
      for (const auto& [key, target] : st.on)
        if (key == verdict) return take(st, target, ctx);
    }
    if (loop_->loop().maintain) return take_static(st, st.maintain_target);
    return unexpected(no_transition_error(st, verdict));
  }

  // "No valid transition from state "s" for verdict "v"", followed for the `error` verdict by
  // its cause (the evaluation details' "error": runner error, interpolation failure,
  // evaluator error, timeout, ...) when there is one. The details are in prev_ by now.
  little_loops::error no_transition_error(const compiled_state& st,
                                          std::string_view verdict) const {
    std::string message =
        fmt::format("No valid transition from state \"{}\" for verdict \"{}\"", st.name, verdict);
    if (verdict == "error") {
      prev_.details.visit([&message](const json& d) {
        if (const auto it = d.find("error");
            it != d.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
          message += ": ";
          message += it->get_ref<const std::string&>();
        }
        return 0;
      });
    }
    return little_loops::error{errc::no_transition, std::move(message), "states." + st.name};
  }

  void finish(termination how, std::optional<little_loops::error> err = std::nullopt) {
    finished_ = true;
    const compiled_state& st = loop_->state(current_);
    if (!resume_state_ && how != termination::terminal) resume_state_ = current_;
    result_.final_state = st.name;
    result_.iterations = iteration_;
    result_.terminated_by = how;
    result_.failure = how == termination::terminal && st.failure;
    result_.duration_ms = elapsed_ms_now();
    result_.captured = captured_map(captured_);
    result_.error = std::move(err);
    result_.on_handoff = loop_->loop().on_handoff;
    if (how != termination::terminal && how != termination::error) result_.snapshot = snapshot();
    // A handoff's last event is handoff_detected (as in the original, which returns the
    // handoff result without finishing the run: the loop goes on after a resume).
    if constexpr (emits_events)
      if (how != termination::handoff)
        emit(loop_complete_event{wall(), result_.final_state, iteration_, to_string(how)});
  }

  std::shared_ptr<const compiled_loop> loop_;
  Runner runner_;
  Eval eval_;
  Sink sink_;
  executor_options options_;
  executor_clock* clock_;

  std::size_t current_ = 0;
  std::optional<std::size_t> resume_state_;  // where a snapshot goes on (handoff/finish)
  std::int64_t iteration_ = 0;
  bool started_ = false;
  bool finished_ = false;
  bool summary_executed_ = false;
  bool resumed_ = false;
  bool has_prev_ = false;
  bool has_last_eval_ = false;  // last_eval_ holds an evaluation older than an unevaluated prev_
  json context_;
  captured_map captured_;
  prev_record prev_;
  prev_record last_eval_;
  prev_record route_prev_;  // the state before the current one, for its templated targets
  std::vector<std::optional<double>> convergence_;
  // The states whose convergence memory an evaluator has set, in state order: snapshots list
  // them without a pass over every state at each boundary.
  std::vector<std::size_t> convergence_states_;
  mutable std::vector<std::pair<std::string_view, double>> convergence_view_;  // snapshot_view()
  std::int64_t elapsed_offset_ms_ = 0;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point now_{};
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string started_at_;
  std::string action_text_;
  std::string target_text_;
  bool target_render_failed_ = false;  // the last take() could not render its target
  action_request request_;  // reused per action (keeps one stop token)
  evaluation_result result_eval_;
  std::stop_source stop_;
  execution_result result_;
};

// ---------------------------------------------------------------------------------------------
// Factories with readable diagnostics

namespace detail {
template <class T>
using stored_t = std::conditional_t<std::is_lvalue_reference_v<T>, T, std::remove_cvref_t<T>>;
}  // namespace detail

/// @brief Validate and compile `loop`, and build an executor over it.
///
/// Pass lvalues to borrow the runner/evaluator/sink (the executor stores references), rvalues
/// to move them in. Unmet concepts are reported by a static_assert naming the concept.
/// @return the executor, or the compile error (see compiled_loop::compile).
/// @code
/// ll::scripted_runner runner;
/// auto ex = ll::make_executor(loop, runner);          // borrows runner
/// if (!ex) return fail(ex.error());
/// const ll::execution_result& r = ex->run();
/// @endcode
template <class Runner, class Eval = default_evaluator, class Sink = null_event_sink>
auto make_executor(std::shared_ptr<const compiled_loop> loop, Runner&& runner, Eval&& eval = Eval{},
                   Sink&& sink = Sink{}, executor_options options = {}) {
  using R = detail::stored_t<Runner>;
  using E = detail::stored_t<Eval>;
  using S = detail::stored_t<Sink>;
  static_assert(ActionRunner<std::remove_reference_t<R>>,
                "little_loops: the runner does not model ActionRunner: it needs a member "
                "`run(const action_request&)` returning expected<action_result, error>");
  static_assert(Evaluator<std::remove_reference_t<E>>,
                "little_loops: the evaluator does not model Evaluator: it needs a member "
                "`evaluate(const evaluation_request&)` returning expected<evaluation_result, error>");
  static_assert(EventSink<std::remove_reference_t<S>>,
                "little_loops: the sink does not model EventSink: it needs a member "
                "`on_event(const loop_event&) noexcept`");
  if constexpr (ActionRunner<std::remove_reference_t<R>> && Evaluator<std::remove_reference_t<E>> &&
                EventSink<std::remove_reference_t<S>>) {
    using executor = fsm_executor<R, E, S>;
    return expected<executor, error>(executor(std::move(loop), std::forward<Runner>(runner),
                                              std::forward<Eval>(eval), std::forward<Sink>(sink),
                                              std::move(options)));
  }
}

/// @copydoc make_executor
template <class Runner, class Eval = default_evaluator, class Sink = null_event_sink>
auto make_executor(const fsm_loop& loop, Runner&& runner, Eval&& eval = Eval{}, Sink&& sink = Sink{},
                   executor_options options = {}) {
  using result_type = decltype(make_executor(std::shared_ptr<const compiled_loop>{},
                                             std::forward<Runner>(runner), std::forward<Eval>(eval),
                                             std::forward<Sink>(sink)));
  if constexpr (!std::is_void_v<result_type>) {
    auto compiled = compiled_loop::compile(loop);
    if (!compiled) return result_type(unexpected(std::move(compiled.error())));
    return make_executor(std::move(*compiled), std::forward<Runner>(runner),
                         std::forward<Eval>(eval), std::forward<Sink>(sink), std::move(options));
  }
}

LITTLE_LOOPS_NAMESPACE_END

// little_loops — typed executor events, the loop_event variant, null_event_sink and to_json
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/record_writer.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/json.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <chrono>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Wall-clock time stamp of an event (UTC). Rendered as ISO 8601 with microseconds and an
/// explicit `+00:00` offset, like Python's `datetime.now(UTC).isoformat()`.
using event_time = std::chrono::system_clock::time_point;

// Every event is a small aggregate whose string members are *views* into the executor's own
// data: they are valid only during the `on_event` call. A sink that keeps events must copy
// them (e.g. `to_json(event)`). Field names follow seed 002's JSON shape.

/// `loop_start {loop}`: the run begins.
struct loop_start_event {
  static constexpr std::string_view name = "loop_start";
  event_time ts;
  std::string_view loop;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `loop_resume {loop, from_state, iteration}`: a run continues from a snapshot.
struct loop_resume_event {
  static constexpr std::string_view name = "loop_resume";
  event_time ts;
  std::string_view loop;
  std::string_view from_state;
  std::int64_t iteration = 0;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `state_enter {state, iteration}`: a state starts executing (iteration is 1-based).
struct state_enter_event {
  static constexpr std::string_view name = "state_enter";
  event_time ts;
  std::string_view state;
  std::int64_t iteration = 0;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `action_start {action, is_prompt}`: the interpolated action is handed to the runner.
struct action_start_event {
  static constexpr std::string_view name = "action_start";
  event_time ts;
  std::string_view state;
  std::string_view action;
  bool is_prompt = false;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `action_complete {exit_code, duration_ms, output_preview, is_prompt[, timed_out, signal,
/// cancelled, stderr_preview]}`: the runner returned. `output_preview` is the output's last 2000 characters
/// (code points), then stripped of whitespace as Python's str.strip() does; null only when
/// the output is empty (a blank output gives "").
struct action_complete_event {
  static constexpr std::string_view name = "action_complete";
  event_time ts;
  std::string_view state;
  int exit_code = 0;
  std::int64_t duration_ms = 0;
  std::string_view output;
  bool is_prompt = false;
  bool timed_out = false;
  bool cancelled = false;
  int signal = 0;
  bool truncated = false;        ///< the runner cut the output (action_result::truncated)
  std::size_t output_limit = 0;  ///< where it was cut, in bytes per stream (0: not known)
  std::string_view stderr_output{};  ///< the action's stderr (`stderr_preview` in JSON)
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `evaluate {type, verdict, ...details}`: the verdict of a state. `type` is the evaluator
/// type name, or `"default"` when the state has no `evaluate:` block; a default evaluation is
/// `{type, verdict}` in JSON (seed 002), unless the action ended abnormally (timeout, signal)
/// or could not be evaluated, whose details say why (design §3.4).
struct evaluate_event {
  static constexpr std::string_view name = "evaluate";
  event_time ts;
  std::string_view state;
  std::string_view type;
  std::string_view verdict;
  const json* details = nullptr;  ///< an object whose keys are merged into the JSON
  /// false: the JSON form is `{type, verdict}` only, as seed 002 emits a default evaluation
  /// (no `evaluate:` config); sinks still get `details` (a display shows a judge's reason).
  bool details_in_json = true;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `route {from, to[, reason]}`: a transition. `reason` is `"maintain"` for a maintain-mode
/// restart and empty otherwise.
struct route_event {
  static constexpr std::string_view name = "route";
  event_time ts;
  std::string_view from;
  std::string_view to;
  std::string_view reason;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `max_iterations_summary {summary_state, iterations}`: the cap was hit and the loop's
/// `on_max_iterations` state runs once.
struct max_iterations_event {
  static constexpr std::string_view name = "max_iterations_summary";
  event_time ts;
  std::string_view summary_state;
  std::int64_t iterations = 0;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `handoff_detected {state, iteration, continuation}`: an action printed the handoff
/// signal; the run pauses and returns a resumable snapshot.
struct handoff_event {
  static constexpr std::string_view name = "handoff_detected";
  event_time ts;
  std::string_view state;
  std::int64_t iteration = 0;
  std::string_view continuation;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `error {state, kind, message}`: something failed while executing a state. `kind` is one
/// of `interpolation`, `action`, `evaluator`, `route`, `signal`. Whether the run ends depends
/// on routing (design §3.4); the final outcome is in `loop_complete`.
struct error_event {
  static constexpr std::string_view name = "error";
  event_time ts;
  std::string_view state;
  std::string_view kind;
  std::string_view message;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `loop_complete {final_state, iterations, terminated_by}`: the run ended.
struct loop_complete_event {
  static constexpr std::string_view name = "loop_complete";
  event_time ts;
  std::string_view final_state;
  std::int64_t iterations = 0;
  std::string_view terminated_by;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `resilience {state, kind, ...}`: a resilience policy acted (design §6.6). `kind` is
/// `retry` (the state runs again after `delay_ms`; `attempt` counts this failure's retries,
/// `waited_ms` the time waited for it so far), `catch` (a failure of `error_class` went to
/// `target`), `wait` (a per-state `backoff`), `cycle_detected` (`max_edge_revisits`) or
/// `stall_detected` (`circuit`; `target` is `abort` or the recovery state) or
/// `rate_limit_storm` (after a rate limit's retries were spent `attempt` times in a row).
struct resilience_event {
  static constexpr std::string_view name = "resilience";
  event_time ts;
  std::string_view state;
  std::string_view kind;
  std::string_view error_class;
  std::int64_t attempt = 0;
  std::int64_t delay_ms = 0;
  std::int64_t waited_ms = 0;
  std::string_view target;
  std::string_view message;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// The throttle of a state acted (throttle.hpp; the reference's events): `throttle_warn
/// {state, count, normal_max, warn_max, hard_max}` at warn_max, `throttle_hard {state, count,
/// hard_max, next}` when the state leaves for `next`, `throttle_stop {state, count,
/// hard_max}` when the run ends. `name` is one of the three.
struct throttle_event {
  std::string_view name = "throttle_warn";
  event_time ts;
  std::string_view state;
  std::int64_t count = 0;
  std::int64_t normal_max = 0;
  std::int64_t warn_max = 0;
  std::int64_t hard_max = 0;
  std::string_view next;
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// A learning state's progress (learning.hpp; the reference's events, `name` one of them):
/// `learning_target_stale {state, target, cause}` (`missing` or `stale`),
/// `learning_explore_invoked {state, target, attempt}`, `learning_target_refuted {state,
/// target}`, `learning_target_proven {state, target}`, `learning_blocked {state, target,
/// reason}` (`refuted` or `retries_exhausted`), `learning_complete {state, targets}`.
struct learning_event {
  std::string_view name = "learning_complete";
  event_time ts;
  std::string_view state;
  std::string_view target;
  std::string_view detail;  ///< `cause` (stale) or `reason` (blocked)
  std::int64_t attempt = 0;
  const std::vector<std::string>* targets = nullptr;  ///< learning_complete
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// `guard {state, kind, ...}`: a test guard or a sub-loop worktree acted (design §6.3).
/// `kind` is `tamper_guard` (test files changed while the state ran: `findings` of them,
/// `reverted` restored, `passed` as the policy judged), `prepatch_check_flagged` (the host
/// found the patch's tests passing before it too; policy `fail` or `warn`), or
/// `sub_loop_worktree_attached` / `_detached` / `_error` (a sub-loop state's worktree:
/// `branch`, `path`; `message`: what failed). `target`: where a `fail` policy sends the run.
struct guard_event {
  static constexpr std::string_view name = "guard";
  event_time ts;
  std::string_view state;
  std::string_view kind;
  std::string_view policy;
  bool passed = true;
  std::int64_t findings = 0;
  std::int64_t reverted = 0;
  std::string_view verdict;
  std::string_view target;
  std::string_view message;
  std::string_view branch{};  ///< a worktree's branch
  std::string_view path{};    ///< a worktree's directory
  std::uint32_t depth = 0;  ///< sub-loop depth: 0 for the top loop, 1 for its child, …
};

/// Every event the executor emits. Sinks receive this variant.
using loop_event = std::variant<loop_start_event, loop_resume_event, state_enter_event,
                                action_start_event, action_complete_event, evaluate_event,
                                route_event, max_iterations_event, handoff_event, error_event,
                                loop_complete_event, resilience_event, throttle_event,
                                learning_event, guard_event>;

/// The name of an event (`"loop_start"`, `"route"`, …): the JSON `event` field.
LITTLE_LOOPS_INLINE std::string_view event_name(const loop_event& e) noexcept;

/// The time stamp of an event.
LITTLE_LOOPS_INLINE event_time event_timestamp(const loop_event& e) noexcept;

/// The EventSink that discards everything. The executor detects it and skips building
/// events and reading the wall clock, so it costs nothing.
struct null_event_sink {
  void on_event(const loop_event&) noexcept {}
};

namespace detail {
/// Whether `sink` wants events now: never the null sink; a sink with `wants_events()` (a
/// display silenced by --quiet, say) is asked each time; any other always.
template <class Sink>
constexpr bool sink_listens(const Sink& sink) noexcept {
  if constexpr (std::is_same_v<std::remove_cvref_t<Sink>, null_event_sink>)
    return false;
  else if constexpr (requires { { sink.wants_events() } noexcept -> std::convertible_to<bool>; })
    return sink.wants_events();
  else
    return true;
}
}  // namespace detail

/// An EventSink that keeps the seed-002 JSON of every event, in order (tests, debugging,
/// simple journals). Conversion failures (out of memory) drop the event.
struct recording_event_sink {
  std::vector<json> events;  ///< one `{"event", "ts", ...}` object per event

  void on_event(const loop_event& e) noexcept;
  /// The `event` names, in order.
  [[nodiscard]] std::vector<std::string> names() const;
};

namespace detail {

LITTLE_LOOPS_INLINE void append_timestamp(std::string& out, event_time t);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Appends `t` as ISO 8601 UTC with microseconds (see format_timestamp). Digits are written
/// directly (every event has a timestamp); years outside 0–9999 go through fmt. As Python's
/// `datetime.isoformat()` (seed 002), the fraction is left out when it is zero.
LITTLE_LOOPS_INLINE void append_timestamp(std::string& out, event_time t) {
  using namespace std::chrono;
  const auto us = floor<microseconds>(t);
  const auto day = floor<days>(us);
  const year_month_day ymd{day};
  const hh_mm_ss<microseconds> hms{us - day};
  const int y = static_cast<int>(ymd.year());
  const long long fraction = hms.subseconds().count();
  if (y < 0 || y > 9999) {
    out += fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", y,
                       static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                       hms.hours().count(), hms.minutes().count(), hms.seconds().count());
    if (fraction != 0) out += fmt::format(".{:06}", fraction);
    out += "+00:00";
    return;
  }
  char text[32] = {'0', '0', '0', '0', '-', '0', '0', '-', '0', '0', 'T', '0', '0', ':', '0', '0',
                   ':', '0', '0', '.', '0', '0', '0', '0', '0', '0', '+', '0', '0', ':', '0', '0'};
  const auto digits = [&text](int at, int width, long long value) {
    for (int i = at + width - 1; i >= at; --i, value /= 10) text[i] = static_cast<char>('0' + value % 10);
  };
  digits(0, 4, y);
  digits(5, 2, static_cast<unsigned>(ymd.month()));
  digits(8, 2, static_cast<unsigned>(ymd.day()));
  digits(11, 2, hms.hours().count());
  digits(14, 2, hms.minutes().count());
  digits(17, 2, hms.seconds().count());
  if (fraction == 0) {  // `2026-01-01T00:00:00+00:00`
    out.append(text, 19);
    out.append(text + 26, 6);
    return;
  }
  digits(20, 6, fraction);
  out.append(text, sizeof text);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

/// `2026-11-22T05:06:21.123456+00:00` (UTC, microseconds; `2026-11-22T05:06:21+00:00` when
/// the microseconds are 0, as Python's `datetime.isoformat()`).
LITTLE_LOOPS_INLINE std::string format_timestamp(event_time t);

namespace detail {

// The last `max` characters of `s`, with surrounding whitespace removed.
inline std::string_view output_tail(std::string_view s, std::size_t max = 2000) noexcept {
  return trim_py(utf8_suffix(s, max));
}

}  // namespace detail

namespace detail {

// Each event's members are listed once, in write_event(W&, const event&), for two writers
// of detail/record_writer.hpp, opened with the event's name and time:
//  - event_json_builder builds the JSON object (to_json);
//  - event_line_writer appends the same object's text (append_json_line) without building it.

/// Builds the `{"event", "ts", ...}` object member by member.
class event_json_builder : public json_object_writer {
 public:
  event_json_builder(std::string_view name, event_time ts);
};

/// Appends the text of one event object member by member, as one line.
class event_line_writer : public json_text_writer {
 public:
  event_line_writer(std::string& out, std::string_view name, event_time ts);
  void finish();
};

template <class W>
inline void write_event(W& w, const loop_start_event& e) { w.string("loop", e.loop); }
template <class W>
inline void write_event(W& w, const loop_resume_event& e) {
  w.string("loop", e.loop);
  w.string("from_state", e.from_state);
  w.integer("iteration", e.iteration);
}
template <class W>
inline void write_event(W& w, const state_enter_event& e) {
  w.string("state", e.state);
  w.integer("iteration", e.iteration);
}
template <class W>
inline void write_event(W& w, const action_start_event& e) {
  w.string("action", e.action);
  w.boolean("is_prompt", e.is_prompt);
}
template <class W>
inline void write_event(W& w, const action_complete_event& e) {
  w.integer("exit_code", e.exit_code);
  w.integer("duration_ms", e.duration_ms);
  // Python's `output[-2000:].strip() if output else None`: null only for an empty output.
  if (e.output.empty())
    w.null("output_preview");
  else
    w.string("output_preview", output_tail(e.output));
  w.boolean("is_prompt", e.is_prompt);
  if (e.timed_out) w.boolean("timed_out", true);
  if (e.cancelled) w.boolean("cancelled", true);
  if (e.signal != 0) w.integer("signal", e.signal);
  if (e.truncated) {
    w.boolean("output_truncated", true);
    w.integer("output_limit", static_cast<std::int64_t>(e.output_limit));
  }
  // What went wrong is usually on stderr: its tail, as output_preview, when there is any.
  if (!e.stderr_output.empty()) w.string("stderr_preview", output_tail(e.stderr_output));
}
template <class W>
inline void write_event(W& w, const evaluate_event& e) {
  w.string("type", e.type);
  w.string("verdict", e.verdict);
  if (e.details_in_json && e.details != nullptr && e.details->is_object())
    for (auto it = e.details->begin(); it != e.details->end(); ++it) w.value(it.key(), it.value());
}
template <class W>
inline void write_event(W& w, const route_event& e) {
  w.string("from", e.from);
  w.string("to", e.to);
  if (!e.reason.empty()) w.string("reason", e.reason);
}
template <class W>
inline void write_event(W& w, const max_iterations_event& e) {
  w.string("summary_state", e.summary_state);
  w.integer("iterations", e.iterations);
}
template <class W>
inline void write_event(W& w, const handoff_event& e) {
  w.string("state", e.state);
  w.integer("iteration", e.iteration);
  w.string("continuation", e.continuation);
}
template <class W>
inline void write_event(W& w, const error_event& e) {
  w.string("state", e.state);
  w.string("kind", e.kind);
  w.string("error", e.message);
}
template <class W>
inline void write_event(W& w, const loop_complete_event& e) {
  w.string("final_state", e.final_state);
  w.integer("iterations", e.iterations);
  w.string("terminated_by", e.terminated_by);
}

template <class W>
inline void write_event(W& w, const resilience_event& e) {
  w.string("state", e.state);
  w.string("kind", e.kind);
  if (!e.error_class.empty()) w.string("error_class", e.error_class);
  if (e.attempt != 0) w.integer("attempt", e.attempt);
  if (e.kind == "retry" || e.kind == "wait") w.integer("delay_ms", e.delay_ms);
  if (e.waited_ms != 0) w.integer("waited_ms", e.waited_ms);
  if (!e.target.empty()) w.string("target", e.target);
  if (!e.message.empty()) w.string("message", e.message);
}

template <class W>
inline void write_event(W& w, const throttle_event& e) {
  w.string("state", e.state);
  w.integer("count", e.count);
  if (e.name == "throttle_warn") {
    w.integer("normal_max", e.normal_max);
    w.integer("warn_max", e.warn_max);
  }
  w.integer("hard_max", e.hard_max);
  if (e.name != "throttle_hard") return;
  if (e.next.empty())
    w.null("next");  // neither on_throttle_hard nor on_error: the state goes on
  else
    w.string("next", e.next);
}

template <class W>
inline void write_event(W& w, const learning_event& e) {
  w.string("state", e.state);
  if (e.name == "learning_complete") {
    w.value("targets", e.targets != nullptr ? json(*e.targets) : json::array());
    return;
  }
  w.string("target", e.target);
  if (e.name == "learning_target_stale") w.string("cause", e.detail);
  if (e.name == "learning_blocked") w.string("reason", e.detail);
  if (e.name == "learning_explore_invoked") w.integer("attempt", e.attempt);
}

template <class W>
inline void write_event(W& w, const guard_event& e) {
  w.string("state", e.state);
  w.string("kind", e.kind);
  if (!e.policy.empty()) w.string("policy", e.policy);
  if (e.kind == "tamper_guard") {
    w.boolean("passed", e.passed);
    w.integer("findings", e.findings);
    w.integer("reverted", e.reverted);
  }
  if (!e.verdict.empty()) w.string("verdict", e.verdict);
  if (!e.target.empty()) w.string("target", e.target);
  if (!e.branch.empty()) w.string("branch", e.branch);
  if (!e.path.empty()) w.string("path", e.path);
  if (!e.message.empty()) w.string("message", e.message);
}

/// True when evaluation details would overwrite a member of the evaluate event itself (the
/// JSON object then keeps the member's first position, which the line writer cannot).
LITTLE_LOOPS_INLINE bool details_shadow_event_members(const evaluate_event& e);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE bool details_shadow_event_members(const evaluate_event& e) {
  if (!e.details_in_json || e.details == nullptr || !e.details->is_object()) return false;
  for (std::string_view k : {"event", "ts", "type", "verdict"})
    if (e.details->contains(k)) return true;
  return false;
}

LITTLE_LOOPS_INLINE event_json_builder::event_json_builder(std::string_view name, event_time ts) {
  string("event", name);
  string("ts", format_timestamp(ts));
}

LITTLE_LOOPS_INLINE event_line_writer::event_line_writer(std::string& out, std::string_view name,
                                                         event_time ts)
    : json_text_writer(out) {
  string("event", name);
  this->name("ts");
  out_ += '"';
  append_timestamp(out_, ts);
  out_ += '"';
}

LITTLE_LOOPS_INLINE void event_line_writer::finish() {
  json_text_writer::finish();
  out_ += '\n';
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

/// Seed-002 JSON of one event: `{"event": name, "ts": ISO-8601, ...fields}`.
template <class Event>
  requires requires(detail::event_json_builder& b, const Event& e) { detail::write_event(b, e); }
json to_json(const Event& e) {
  detail::event_json_builder b(e.name, e.ts);
  detail::write_event(b, e);
  if (e.depth != 0) b.integer("depth", e.depth);
  return b.take();
}

/// Seed-002 JSON of any event: `{"event": name, "ts": ISO-8601, ...fields}`.
LITTLE_LOOPS_INLINE json to_json(const loop_event& e);

/// Appends the event as one line of JSON Lines: the same text as
/// `to_json(e).dump(-1, ' ', false, json::error_handler_t::replace)` followed by `\n`, written
/// straight into `out` without building the JSON object (a journal writes one per event).
LITTLE_LOOPS_INLINE void append_json_line(std::string& out, const loop_event& e);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::string_view event_name(const loop_event& e) noexcept {
  return std::visit([](const auto& ev) noexcept { return std::string_view(ev.name); }, e);
}

LITTLE_LOOPS_INLINE event_time event_timestamp(const loop_event& e) noexcept {
  return std::visit([](const auto& ev) noexcept { return ev.ts; }, e);
}

LITTLE_LOOPS_INLINE std::vector<std::string> recording_event_sink::names() const {
  std::vector<std::string> out;
  out.reserve(events.size());
  for (const auto& e : events) out.push_back(e.value("event", std::string{}));
  return out;
}

LITTLE_LOOPS_INLINE std::string format_timestamp(event_time t) {
  std::string out;
  detail::append_timestamp(out, t);
  return out;
}

LITTLE_LOOPS_INLINE json to_json(const loop_event& e) {
  return std::visit([](const auto& ev) { return to_json(ev); }, e);
}

LITTLE_LOOPS_INLINE void append_json_line(std::string& out, const loop_event& e) {
  if (const auto* ev = std::get_if<evaluate_event>(&e); ev && detail::details_shadow_event_members(*ev)) {
    out += to_json(e).dump(-1, ' ', false, json::error_handler_t::replace);
    out += '\n';
    return;
  }
  std::visit(
      [&out](const auto& ev) {
        detail::event_line_writer w(out, ev.name, ev.ts);
        detail::write_event(w, ev);
        if (ev.depth != 0) w.integer("depth", ev.depth);
        w.finish();
      },
      e);
}

LITTLE_LOOPS_INLINE void recording_event_sink::on_event(const loop_event& e) noexcept {
  try {
    events.push_back(to_json(e));
  } catch (...) {  // NOLINT(bugprone-empty-catch): a sink must not throw
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

// little_loops — the executor's run: start, steps, boundaries, snapshots, the end
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor_core (detail/executor_core.hpp): what run(), step(), snapshot(), resume()
// and reset() do, a step's order of checks (stop, timeout, terminal, caps), the events a run
// emits, and how it ends. One state's execution is in executor_core_steps.hpp.

#include <little_loops/detail/executor_core.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

LITTLE_LOOPS_INLINE executor_core::executor_core(std::shared_ptr<const compiled_loop> loop,
                                    executor_options options, executor_host_traits traits)
    : loop_(std::move(loop)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &default_executor_clock()),
      emits_events_(traits.emits_events),
      sink_asked_(traits.sink_asked),
      instant_verdicts_(traits.instant_verdicts) {
  reset();
}

LITTLE_LOOPS_INLINE executor_core::executor_core(const executor_core&) = default;
LITTLE_LOOPS_INLINE executor_core::executor_core(executor_core&&) = default;
LITTLE_LOOPS_INLINE executor_core& executor_core::operator=(executor_core&&) noexcept = default;
LITTLE_LOOPS_INLINE executor_core::~executor_core() = default;

LITTLE_LOOPS_INLINE expected<action_result, error> executor_core::runner_call::operator()(
    const action_request& req) const {
  return core->call_runner(req);
}

LITTLE_LOOPS_INLINE const execution_result& executor_core::run() {
  while (step()) {}
  return result_;
}

LITTLE_LOOPS_INLINE const execution_result& executor_core::run(std::stop_token token) {
  // Holds `this` only while it runs: the executor does not move meanwhile.
  std::stop_callback forward(token, [this]() noexcept { stop_.request_stop(); });
  return run();
}

LITTLE_LOOPS_INLINE bool executor_core::step() {
  advance();
  return !finished();
}

LITTLE_LOOPS_INLINE little_loops::snapshot executor_core::snapshot() const {
  // Its own storage, not snapshot_view()'s: const callers may run at once.
  std::vector<std::pair<std::string_view, double>> convergence;
  json counters;
  little_loops::snapshot s = running_view(convergence, counters).materialize();
  s.counters = std::move(counters);
  if (!frames_.empty()) stack_into(s);  // the top loop's, the frames below it
  return s;
}

LITTLE_LOOPS_INLINE little_loops::snapshot_view executor_core::snapshot_view() const {
  if (!frames_.empty()) return stack_view();  // inside a child: copies
  little_loops::snapshot_view v = running_view(convergence_view_, counters_view_);
  if (!counters_view_.is_null()) v.counters = &counters_view_;
  return v;
}

LITTLE_LOOPS_INLINE expected<void, little_loops::error> executor_core::resume(const little_loops::snapshot& s) {
  unwind_frames();
  const auto at = resume_state(*loop_, s);
  if (!at) return unexpected(at.error());
  convergence_memory convergence;
  if (std::string_view unknown; !convergence.restore(*loop_, s, unknown))
    return unexpected(little_loops::error{
        errc::snapshot_mismatch, fmt::format("convergence memory of unknown state \"{}\"", unknown),
        "convergence." + std::string(unknown)});
  reset();
  restore_frame(s, *at, std::move(convergence));
  if (!s.frames.is_null()) {
    if (auto children = resume_frames(s.frames); !children) {
      reset();
      return unexpected(std::move(children.error()));
    }
  }
  phase_ = run_phase::resumed;
  return {};
}

LITTLE_LOOPS_INLINE void executor_core::reset() {
  unwind_frames();
  loop_id_ = options_.loop_id;
  const auto& timeout = loop_->loop().timeout;
  start_frame(loop_->loop().context,
              timeout ? std::optional(static_cast<std::int64_t>(*timeout * 1000.0)) : std::nullopt);
  phase_ = run_phase::fresh;
  result_ = execution_result{};
  if (stop_.stop_requested()) stop_ = std::stop_source{};
  request_ = action_request{};
  request_.stop = stop_.get_token();
}

LITTLE_LOOPS_INLINE bool executor_core::advance() {
  if (phase_ == run_phase::finished) return false;
  stamp();
  if (phase_ != run_phase::running) begin();
  if (stop_.stop_requested()) return end(termination::cancelled);
  const fsm_loop& def = loop_->loop();
  const compiled_state& st = loop_->state(current_);
  // The loop timeout before the terminal, as in seed 002 (a terminal reached after the
  // deadline ends as `timeout`, final state the terminal); design §3.5 reverses only the
  // cap: a terminal reached on the last allowed step ends as `terminal`. A maintain
  // restart is an iteration, so it obeys the cap.
  if (st.terminal && timeout_ms_) {
    now_ = clock_->now();
    if (past_timeout()) return end(termination::timeout);
  }
  if (st.terminal && !(def.maintain && iteration_ >= def.max_iterations)) return end_or_restart(st);
  if (iteration_ >= def.max_iterations &&
      !enter_summary(loop_->on_max_iterations(), def.max_steps_spelling ? "on_max_steps" : "on_max_iterations"))
    return false;
  now_ = clock_->now();
  if (past_timeout()) return end(termination::timeout);
  if (loop_->counts_retries() && redirect_exhausted()) return !finished();
  if (const double wait = resilience_.take_pending_wait(); wait > 0)  // a retry's (§6.6)
    clock_->sleep_for(seconds_to_ns(wait), stop_.get_token());
  execute(loop_->state(current_));
  return !finished();
}

// ---- time ----

LITTLE_LOOPS_INLINE void executor_core::stamp() noexcept {
  if (recording()) event_ts_ = clock_->wall_now();
}

LITTLE_LOOPS_INLINE std::int64_t executor_core::elapsed_ms() const noexcept {
  return elapsed_offset_ms_ + std::chrono::duration_cast<std::chrono::milliseconds>(now_ - start_).count();
}

LITTLE_LOOPS_INLINE std::int64_t executor_core::elapsed_ms_now() const noexcept {
  return elapsed_offset_ms_ +
         std::chrono::duration_cast<std::chrono::milliseconds>(clock_->now() - start_).count();
}

LITTLE_LOOPS_INLINE bool executor_core::past_timeout() const noexcept {
  return timeout_ms_ && elapsed_ms() > *timeout_ms_;
}

// ---- events ----

// The event at the running loop's depth: kept by every waiting frame that captures its
// child's events, and delivered when the sink listens.
template <class Event>
void executor_core::emit(Event&& ev) noexcept {
  ev.depth = static_cast<std::uint32_t>(frames_.size());
  if (!frames_.empty()) note_child_event(event_ref_of(ev));
  if (listening()) host_deliver(event_ref_of(ev));
}

LITTLE_LOOPS_INLINE void executor_core::begin() {
  const bool resumed = phase_ == run_phase::resumed;
  phase_ = run_phase::running;
  start_ = clock_->now();
  now_ = start_;
  if (started_at_.empty()) started_at_ = format_timestamp(clock_->wall_now());
  if (timeout_ms_) deadline_ = start_ + std::chrono::milliseconds(*timeout_ms_ - elapsed_offset_ms_);
  if (!emits_events_) return;
  if (resumed)
    emit(loop_resume_event{wall(), loop_->loop().name, loop_->state(current_).name, iteration_});
  else
    emit(loop_start_event{wall(), loop_->loop().name});
}

// ---- boundaries: terminal states and the iteration cap ----

// At a terminal state: a `maintain` loop restarts (until on_max_iterations ran), any other
// loop ends. Returns whether the run goes on.
LITTLE_LOOPS_INLINE bool executor_core::end_or_restart(const compiled_state& st) {
  if (!loop_->loop().maintain || summary_executed_)
    return end(summary_executed_ ? termination::max_iterations : termination::terminal);
  if (const auto& cap = loop_->loop().max_passes; cap && counters_.passes >= *cap)
    return enter_summary(loop_->on_max_passes(), "on_max_iterations");
  auto target = take_static(st, st.maintain_target, current_);
  if (!target) {  // `on_maintain` names no state
    report_error(st, "route", target.error().message);
    return end(termination::error, std::move(target.error()));
  }
  ++iteration_;  // a maintain restart counts as one iteration (design §3.16) and one pass
  ++counters_.passes;
  if (emits_events_) emit(route_event{wall(), st.name, loop_->state(*target).name, "maintain"});
  current_ = *target;
  return true;
}

// A cap is reached (the step cap, or at a terminal the full-pass cap): run its handler
// (`key`) once (design §3.5, §6.2), else end. Returns whether the run goes on.
LITTLE_LOOPS_INLINE bool executor_core::enter_summary(const std::optional<compiled_target>& summary,
                                         std::string_view key) {
  if (!summary || summary_executed_) return end(termination::max_iterations);
  summary_executed_ = true;
  if (summary->type != compiled_target::kind::state) {
    little_loops::error err{errc::unknown_state,
                            fmt::format("{} names \"{}\", which is not a state", key, summary->source),
                            summary->path};
    report_error(loop_->state(current_), "route", err.message);
    return end(termination::error, std::move(err));
  }
  if (emits_events_) emit(max_iterations_event{wall(), loop_->state(summary->index).name, iteration_});
  current_ = summary->index;
  if (loop_->state(current_).terminal) return end(termination::max_iterations);
  return true;
}

// `max_retries` (design §6.3): an exhausted state is not run; the run goes to
// `on_retry_exhausted` without a step. True when it redirected.
LITTLE_LOOPS_INLINE bool executor_core::redirect_exhausted() {
  const compiled_state& st = loop_->state(current_);
  auto to = counters_.redirect(*loop_, current_);
  if (!to) return false;
  if (!*to) {
    report_error(st, "route", to->error().message);
    return !end(termination::error, std::move(to->error()));
  }
  if (emits_events_) emit(route_event{wall(), st.name, loop_->state(**to).name, "retry_exhausted"});
  current_ = **to;
  return true;
}

// ---- the end ----

// finish(), returning false (the run does not go on).
LITTLE_LOOPS_INLINE bool executor_core::end(termination how, std::optional<little_loops::error> err) {
  finish(how, std::move(err));
  return false;
}

LITTLE_LOOPS_INLINE void executor_core::finish(termination how, std::optional<little_loops::error> err) {
  if (!frames_.empty()) return end_child(how, std::move(err));
  phase_ = run_phase::finished;
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
  if (emits_events_ && how != termination::handoff)
    emit(loop_complete_event{wall(), result_.final_state, iteration_, to_string(how)});
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — sub-loop frames: a child loop runs inside its parent's executor
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor_core (detail/executor_core.hpp). The running loop lives in the core's
// members, so a step inside a child costs what a flat step costs. A sub-loop state parks its
// loop's run in `frames_` (swap_frame), and the child starts in the members; when the child
// ends, its parent comes back and concludes the sub-loop state with the child's outcome as
// its verdict. A stop or a handoff inside a child ends (or pauses) the whole run with every
// frame in place, so the snapshot holds the stack.

#include <little_loops/detail/executor_core.hpp>
#include <little_loops/detail/subloop_calls.hpp>
#include <little_loops/detail/subloop_worktree.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

// The one list of a frame's per-run members: the running loop's (the core's, `ex`, const or
// not) beside the parked frame's `f`, each under its role (detail/frame_members.hpp).
// Per-run state goes here, once, and into parked_frame: swap_frame, start_frame,
// restore_frame, running_view and parked_snapshot all walk this list.
template <class V, class Core, class Parked>
void executor_core::frame_members(V& v, Core& ex, Parked& f) {
  v.kept(ex.loop_, f.loop);
  v.kept(ex.loop_id_, f.loop_id);
  v.kept(ex.working_dir_, f.working_dir);  // a sub-loop's worktree: set by call_subloop()
  v.kept(ex.start_, f.start);
  v.position(ex.current_, f.current, ex.resume_state_, f.resume_state);
  v.field(ex.iteration_, f.iteration, &little_loops::snapshot::iteration,
          &little_loops::snapshot_view::iteration);
  v.field(ex.summary_executed_, f.summary_executed, &little_loops::snapshot::summary_executed,
          &little_loops::snapshot_view::summary_executed);
  v.field(ex.started_at_, f.started_at, &little_loops::snapshot::started_at,
          &little_loops::snapshot_view::started_at);
  v.context(ex.context_, f.context);
  v.memory(ex.captured_, f.captured);
  v.memory(ex.history_, f.history);
  v.memory(ex.convergence_, f.convergence);
  v.memory(ex.counters_, f.counters);
  v.memory(ex.resilience_, f.resilience);  // after counters_: it joins their JSON
  v.memory(ex.session_, f.session);        // after resilience_: it joins the counters too
  v.elapsed(ex.elapsed_offset_ms_, f.elapsed_offset_ms);
  v.cleared(ex.deadline_, f.deadline);
  v.limit(ex.timeout_ms_, f.timeout_ms);
}

// Stands in for the parked frame when a visitor reads or sets only the running loop's.
LITTLE_LOOPS_INLINE const parked_frame& executor_core::no_frame() {
  static const parked_frame none;
  return none;
}

// Exchanges the running loop's members with `f`.
LITTLE_LOOPS_INLINE void executor_core::swap_frame(parked_frame& f) noexcept {
  frame_swapper v;
  frame_members(v, *this, f);
}

// `req` in the running loop's working directory (the request itself outside a worktree).
LITTLE_LOOPS_INLINE const action_request& executor_core::in_working_dir(const action_request& req) {
  if (working_dir_.empty() || !req.working_dir.empty()) return req;
  worktree_request_ = req;
  worktree_request_.working_dir = working_dir_;
  return worktree_request_;
}

// A loop starts in the members: the top loop (reset()), or a child (call_subloop()).
LITTLE_LOOPS_INLINE void executor_core::start_frame(json context, std::optional<std::int64_t> timeout_ms) {
  frame_starter v{{}, {*loop_, std::move(context), options_.injected_context, timeout_ms}};
  frame_members(v, *this, no_frame());
}

// The running loop's members from `s` (resume(); a child's frame, resume_frames()).
LITTLE_LOOPS_INLINE void executor_core::restore_frame(const little_loops::snapshot& s, std::size_t at,
                                         convergence_memory convergence) {
  frame_restorer v{{}, {*loop_, s, at, convergence, options_.injected_context}};
  frame_members(v, *this, no_frame());
}

// Back to the top loop, every child dropped (and every worktree detached).
LITTLE_LOOPS_INLINE void executor_core::unwind_frames() noexcept {
  detach_worktrees(false);
  while (!frames_.empty()) {
    swap_frame(frames_.back());
    frames_.pop_back();
  }
}

// Detaches the worktree of every waiting frame's child, innermost first (with events:
// reported as `sub_loop_worktree_detached`).
LITTLE_LOOPS_INLINE void executor_core::detach_worktrees(bool with_events) noexcept {
  for (std::size_t i = frames_.size(); i-- > 0;) {
    auto& w = frames_[i].child_worktree;
    if (!w) continue;
    detach_subloop_worktree(*w, options_);
    if (emits_events_ && with_events) {
      guard_event e = worktree_event(wall(), frames_[i].loop->state(frames_[i].current).name,
                                       "sub_loop_worktree_detached", w->branch, w->path);
        e.depth = static_cast<std::uint32_t>(i);
        host_deliver(event_ref_of(e));
      }
    w.reset();
  }
}

// Runs the sub-loop state `st`: its child becomes the running loop, whose first state is
// the next step. A child that cannot start is the state's `error` verdict.
LITTLE_LOOPS_INLINE void executor_core::call_subloop(const compiled_state& st, interpolation_context& ctx) {
  auto child = find_child(*st.config, ctx, options_, frames_.size() + 2, loop_id_);
  if (!child) return fail_call(st, ctx, std::move(child.error().message));
  auto context = child_context(*st.config, *child, ctx, options_.injected_context);
  if (!context) return fail_call(st, ctx, fmt::format("sub-loop '{}': {}", child->loop->loop().name,
                                                      context.error().message));
  std::optional<attached_worktree> worktree;
  if (st.config->worktree) {
    auto w = attach_subloop_worktree(*st.config->worktree, ctx, *context, options_);
    if (!w) return fail_worktree(st, ctx, std::move(w.error()));
    worktree = std::move(*w);
    if (emits_events_ && worktree)
      emit(worktree_event(wall(), st.name, "sub_loop_worktree_attached", worktree->branch, worktree->path));
  }
  std::optional<std::int64_t> parent_left;
  if (timeout_ms_) parent_left = *timeout_ms_ - elapsed_ms_now();
  const auto limit = child_timeout_ms(child->loop->loop().timeout, st.config->timeout, parent_left);
  parked_frame parked;
  if (st.capture) parked.child_events.emplace();
  swap_frame(parked);
  parked.child_worktree = std::move(worktree);
  working_dir_ = parked.child_worktree ? parked.child_worktree->path : parked.working_dir;
  frames_.push_back(std::move(parked));
  loop_ = std::move(child->loop);
  loop_id_ = std::move(child->id);
  start_frame(std::move(*context), limit);
  start_ = now_ = clock_->now();
  started_at_ = format_timestamp(clock_->wall_now());
  if (limit) deadline_ = start_ + std::chrono::milliseconds(*limit);
  if (emits_events_) emit(loop_start_event{wall(), loop_->loop().name});
}

// The child ended (`how`): its parent runs again and concludes the sub-loop state.
LITTLE_LOOPS_INLINE void executor_core::return_to_parent(termination how, std::optional<error> err) {
  const compiled_state& last = loop_->state(current_);
  child_end end{how, how == termination::terminal && last.failure, last.name, std::move(err), json()};
  if (how == termination::terminal && !last.config->output.empty()) {
    auto out = render_table(last.config->output, running_context(last));
    if (out) {
      end.output = std::move(*out);
    } else {
      report_error(last, "output", out.error().message);
      end.how = termination::error;
      end.failed = std::move(out.error());
    }
  }
  if (emits_events_)
    emit(loop_complete_event{wall(), last.name, iteration_, to_string(end.how)});
  captured_map child_captured = std::move(captured_);
  retired_ = loop_;
  swap_frame(frames_.back());
  std::optional<std::string> events = std::move(frames_.back().child_events);
  const std::optional<attached_worktree> worktree = std::move(frames_.back().child_worktree);
  frames_.pop_back();
  const compiled_state& st = loop_->state(current_);
  if (worktree) {
    detach_subloop_worktree(*worktree, options_);
    if (emits_events_)
      emit(worktree_event(wall(), st.name, "sub_loop_worktree_detached", worktree->branch, worktree->path));
  }
  if (st.capture) {
    captured_record& c = captured_[*st.capture];
    c = captured_record{};
    if (events) c.output = std::move(*events);
  }
  captured_[st.name].subloop = subloop_record(*st.config, end, child_captured);
  result_eval_.verdict.assign(subloop_verdict(st, end));
  json details = {{"terminated_by", to_string(end.how)}, {"final_state", end.final_state}};
  if (end.failure) details["failure_terminal"] = true;
  if (end.failed) details["error"] = end.failed->message;
  result_eval_.details = std::move(details);
  interpolation_context ctx = running_context(st);
  conclude_call(st, ctx);
}

// A stop or a handoff inside a child: the run ends (or pauses) with every frame in place;
// each frame reports its end, innermost first, and the result is the top loop's.
LITTLE_LOOPS_INLINE void executor_core::finish_stack(termination how, std::optional<error> err) {
  if (!resume_state_) resume_state_ = current_;
  phase_ = run_phase::finished;
  if (emits_events_ && how != termination::handoff) {
    emit(loop_complete_event{wall(), loop_->state(current_).name, iteration_, to_string(how)});
    for (std::size_t i = frames_.size(); i-- > 0;) {
      const parked_frame& f = frames_[i];
      loop_complete_event e{wall(), f.loop->state(f.current).name, f.iteration, to_string(how)};
      e.depth = static_cast<std::uint32_t>(i);
      host_deliver(event_ref_of(e));
    }
  }
  const parked_frame& top = frames_.front();
  execution_result& r = result_;
  r.final_state = top.loop->state(top.current).name;
  r.iterations = top.iteration;
  r.terminated_by = how;
  r.failure = false;
  r.duration_ms = top.elapsed_offset_ms + std::chrono::duration_cast<std::chrono::milliseconds>(
                                              clock_->now() - top.start).count();
  r.captured = captured_map(top.captured);
  r.error = std::move(err);
  r.on_handoff = top.loop->loop().on_handoff;
  r.snapshot = snapshot();  // with each worktree's branch: a resume attaches it again
  detach_worktrees(how != termination::handoff);
}

// The running loop's snapshot members (its convergence list in `convergence_storage`, its
// counters' JSON in `counters`, which the view leaves for the caller to point at or move).
LITTLE_LOOPS_INLINE little_loops::snapshot_view executor_core::running_view(
    std::vector<std::pair<std::string_view, double>>& convergence_storage, json& counters) const {
  little_loops::snapshot_view v;
  frame_viewer<false> viewer{{}, {*loop_, v, convergence_storage, &counters}};
  viewer.elapsed_ms = phase_ >= run_phase::running ? elapsed_ms_now() : elapsed_offset_ms_;
  frame_members(viewer, *this, no_frame());
  return v;
}

// The running loop's interpolation context at state `st` (no `result` yet).
LITTLE_LOOPS_INLINE interpolation_context executor_core::running_context(const compiled_state& st) const noexcept {
  interpolation_context ctx;
  ctx.context = &context_;
  ctx.captured = &captured_;
  ctx.prev = history_.prev();
  ctx.last_evaluation = history_.last_evaluation();
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

// ---- snapshots of the stack (snapshot::frames) ----

// A child ended (`how`): its parent goes on, unless the run stops or pauses.
LITTLE_LOOPS_INLINE void executor_core::end_child(termination how, std::optional<error> err) {
  if (how == termination::cancelled || how == termination::handoff) return finish_stack(how, std::move(err));
  return_to_parent(how, std::move(err));
}


// `s` (the running loop's snapshot) becomes the whole stack's: the top loop's members,
// and `frames` the loops below it, the running one last.
LITTLE_LOOPS_INLINE void executor_core::stack_into(little_loops::snapshot& s) const {
  json frames = json::array();
  for (std::size_t i = 1; i < frames_.size(); ++i)
    frames.push_back(frame_json(parked_snapshot(frames_[i]), frames_[i].loop_id, frames_[i].timeout_ms));
  frames.push_back(frame_json(s, loop_id_, timeout_ms_));
  for (std::size_t i = 0; i < frames_.size(); ++i)  // frames[i] runs in frames_[i]'s child worktree
    if (frames_[i].child_worktree) frames[i]["worktree"] = frames_[i].child_worktree->branch;
  s = parked_snapshot(frames_.front());
  s.frames = std::move(frames);
}

// snapshot_view() inside a child: the stack's snapshot, copied (kept until the next call).
LITTLE_LOOPS_INLINE little_loops::snapshot_view executor_core::stack_view() const {
  stack_snapshot_ = snapshot();
  const little_loops::snapshot& s = stack_snapshot_;
  little_loops::snapshot_view v;
  v.loop_name = s.loop_name;
  v.digest = s.digest;
  v.current_state = s.current_state;
  v.iteration = s.iteration;
  v.summary_executed = s.summary_executed;
  v.context = &s.context;
  v.captured = &s.captured;
  v.prev = s.prev ? &*s.prev : nullptr;
  v.last_evaluation = s.last_evaluation ? &*s.last_evaluation : nullptr;
  stack_convergence_.clear();
  for (const auto& [state, value] : s.convergence) stack_convergence_.emplace_back(state, value);
  v.convergence = stack_convergence_;
  v.elapsed_ms = s.elapsed_ms;
  v.started_at = s.started_at;
  v.counters = s.counters.is_null() ? nullptr : &s.counters;
  v.frames = &s.frames;
  return v;
}

// Re-enters the children of a snapshot's `frames`, each reloaded by its id, the running
// one last; the executor's members then hold the innermost.
LITTLE_LOOPS_INLINE expected<void, error> executor_core::resume_frames(const json& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    auto frame = read_frame(frames[i], fmt::format("frames[{}]", i));
    if (!frame) return unexpected(std::move(frame.error()));
    if (options_.child_loops == nullptr)
      return unexpected(error{errc::snapshot_mismatch, "the snapshot runs sub-loops and the host gave no child loop resolver"});
    auto child = options_.child_loops->load(frame->id, loop_id_);
    const auto changed = [&](const std::string& why) {
      return error{errc::snapshot_mismatch,
                   fmt::format("frame {} ({}) changed since the snapshot: {}", i + 1, frame->id, why),
                   fmt::format("frames[{}]", i)};
    };
    if (!child) return unexpected(changed(child.error().message));
    const auto at = resume_state(*child->loop, frame->state);
    if (!at) return unexpected(changed(at.error().message));
    convergence_memory convergence;
    if (std::string_view unknown; !convergence.restore(*child->loop, frame->state, unknown))
      return unexpected(changed(fmt::format("convergence memory of unknown state \"{}\"", unknown)));
    start_ = clock_->now();  // the parent waits from now on, with the time it had
    if (timeout_ms_) deadline_ = start_ + std::chrono::milliseconds(*timeout_ms_ - elapsed_offset_ms_);
    parked_frame parked;
    swap_frame(parked);
    if (!frame->worktree.empty()) {  // attached again, where the snapshot was taken
      json scratch = json::object();
      auto w = attach_subloop_worktree(frame->worktree, interpolation_context{}, scratch, options_);
      if (!w || !*w) {
        swap_frame(parked);
        return unexpected(changed(w ? "its worktree branch is empty" : w.error()));
      }
      parked.child_worktree = std::move(**w);
    }
    working_dir_ = parked.child_worktree ? parked.child_worktree->path : parked.working_dir;
    frames_.push_back(std::move(parked));
    loop_ = std::move(child->loop);
    loop_id_ = std::move(child->id);
    start_frame(json::object(), frame->timeout_ms);
    restore_frame(frame->state, *at, std::move(convergence));
  }
  return {};
}

// Keeps `e` in the event capture of every waiting frame that has one.
LITTLE_LOOPS_INLINE void executor_core::note_child_event(event_ref e) noexcept {
  try {
    for (auto& f : frames_)
      if (f.child_events) host_capture(*f.child_events, e);
  } catch (...) {  // NOLINT(bugprone-empty-catch): an event capture is best effort
  }
}

LITTLE_LOOPS_INLINE expected<executor_core::frame_entry, error> executor_core::read_frame(const json& j,
                                                                            const std::string& path) {
  const auto bad = [&](std::string_view key, std::string_view what) {
    return error{errc::invalid_snapshot, std::string(what), join_path(path, key)};
  };
  if (!j.is_object()) return unexpected(bad("", "must be an object"));
  const auto id = j.find("loop_id");
  if (id == j.end() || !id->is_string()) return unexpected(bad("loop_id", "must be a string"));
  frame_entry out;
  out.id = id->get<std::string>();
  json body = j;
  body.erase("loop_id");
  if (const auto t = body.find("timeout_ms"); t != body.end()) {
    if (!t->is_number_integer()) return unexpected(bad("timeout_ms", "must be an integer"));
    out.timeout_ms = t->get<std::int64_t>();
    body.erase("timeout_ms");
  }
  if (const auto w = body.find("worktree"); w != body.end()) {
    if (!w->is_string()) return unexpected(bad("worktree", "must be a string"));
    out.worktree = w->get<std::string>();
    body.erase("worktree");
  }
  auto state = snapshot_from_json(body);
  if (!state) {
    error e = std::move(state.error());
    e.path = join_path(path, e.path);
    return unexpected(std::move(e));
  }
  out.state = std::move(*state);
  return out;
}

// A waiting loop's snapshot (its current state is the sub-loop state).
LITTLE_LOOPS_INLINE little_loops::snapshot executor_core::parked_snapshot(const parked_frame& f) const {
  little_loops::snapshot_view v;
  std::vector<std::pair<std::string_view, double>> convergence;
  json counters;
  frame_viewer<true> viewer{{}, {*f.loop, v, convergence, &counters}};
  viewer.elapsed_ms = f.elapsed_offset_ms + std::chrono::duration_cast<std::chrono::milliseconds>(
                                                clock_->now() - f.start).count();
  frame_members(viewer, *this, f);
  little_loops::snapshot s = v.materialize();
  s.counters = std::move(counters);
  return s;
}

LITTLE_LOOPS_INLINE json executor_core::frame_json(const little_loops::snapshot& s, const std::string& id,
                                      std::optional<std::int64_t> timeout_ms) {
  json j = to_json(s);
  j["loop_id"] = id;
  if (timeout_ms) j["timeout_ms"] = *timeout_ms;
  return j;
}

// A child that could not start: the state's `error` verdict.
LITTLE_LOOPS_INLINE void executor_core::fail_call(const compiled_state& st, interpolation_context& ctx,
                                     std::string message) {
  report_error(st, "subloop", message);
  result_eval_ = error_result(std::move(message));
  conclude_call(st, ctx);
}

// A worktree that could not be attached: reported, and the state's `error` verdict.
LITTLE_LOOPS_INLINE void executor_core::fail_worktree(const compiled_state& st, interpolation_context& ctx,
                                         std::string message) {
  if (emits_events_)
    emit(worktree_event(wall(), st.name, "sub_loop_worktree_error", {}, {}, message));
  fail_call(st, ctx, std::move(message));
}

// Records the sub-loop state's verdict as `prev` and routes it.
LITTLE_LOOPS_INLINE void executor_core::conclude_call(const compiled_state& st, interpolation_context& ctx) {
  if (st.capture) captured_[*st.capture].verdict = result_eval_.verdict;
  history_.record(st, nullptr, result_eval_, true);
  move_on(st, std::nullopt, choose_next(st, ctx));
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

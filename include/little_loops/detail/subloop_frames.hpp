// little_loops — sub-loop frames: a child loop runs inside its parent's executor
// SPDX-License-Identifier: MIT
#pragma once

// Part of executor.hpp (a private base of fsm_executor). The running loop lives in the
// executor's members, so a step inside a child costs what a flat step costs. A sub-loop
// state parks its loop's run here (swap_frame), and the child starts in the members; when the child ends, its parent comes back and concludes the
// sub-loop state with the child's outcome as its verdict. A stop or a handoff inside a child
// ends (or pauses) the whole run with every frame in place, so the snapshot holds the stack.

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/frame_members.hpp>
#include <little_loops/detail/resilience_runtime.hpp>
#include <little_loops/detail/host_requests.hpp>
#include <little_loops/detail/retry_counters.hpp>
#include <little_loops/detail/run_history.hpp>
#include <little_loops/detail/subloop_calls.hpp>
#include <little_loops/detail/subloop_worktree.hpp>
#include <little_loops/events.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/execution_result.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/snapshot.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A loop waiting for its child: its run, as the executor's members held it. Each member is
/// also in subloop_frames::frame_members(), the one list the frame operations walk.
struct parked_frame {
  std::shared_ptr<const compiled_loop> loop;
  std::string loop_id;
  std::size_t current = 0;  // the sub-loop state
  std::optional<std::size_t> resume_state;
  std::int64_t iteration = 0;
  bool summary_executed = false;
  json context;
  captured_map captured;
  run_history history;
  convergence_memory convergence;
  retry_counters counters;
  resilience_memory resilience;
  session_chain session;
  std::int64_t elapsed_offset_ms = 0;
  std::chrono::steady_clock::time_point start{};
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::optional<std::int64_t> timeout_ms;
  std::string started_at;
  /// The child's events as JSON Lines, kept when the sub-loop state has `capture:`.
  std::optional<std::string> child_events;
  std::string working_dir{};  // where this loop's actions run (empty: the runner's own)
  std::optional<attached_worktree> child_worktree{};  // the worktree its child runs in
};

template <class Executor>
class subloop_frames {
 protected:
  std::vector<parked_frame> frames_;  // the loops waiting, outermost first
  std::string loop_id_;               // the running loop's id (the referrer of its children)
  std::optional<std::int64_t> timeout_ms_;  // the running loop's time limit
  std::shared_ptr<const compiled_loop> retired_;  // the child that just ended (its calls unwind)
  std::string working_dir_;  // where the running loop's actions run (a sub-loop's worktree)

  Executor& self() noexcept { return static_cast<Executor&>(*this); }
  const Executor& self() const noexcept { return static_cast<const Executor&>(*this); }

  // The one list of a frame's per-run members: the running loop's (the executor's, or this
  // base's) beside the parked frame's `f`, each under its role (detail/frame_members.hpp).
  // Per-run state goes here, once, and into parked_frame: swap_frame, start_frame,
  // restore_frame, running_view and parked_snapshot all walk this list.
  template <class V, class Ex, class Parked>
  static void frame_members(V& v, Ex& ex, Parked& f) {
    v.kept(ex.loop_, f.loop);
    v.kept(ex.loop_id_, f.loop_id);
    v.kept(ex.working_dir_, f.working_dir);  // a sub-loop's worktree: set by call_subloop()
    v.kept(ex.start_, f.start);
    v.position(ex.current_, f.current, ex.resume_state_, f.resume_state);
    v.field(ex.iteration_, f.iteration, &snapshot::iteration, &snapshot_view::iteration);
    v.field(ex.summary_executed_, f.summary_executed, &snapshot::summary_executed,
            &snapshot_view::summary_executed);
    v.field(ex.started_at_, f.started_at, &snapshot::started_at, &snapshot_view::started_at);
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
  static const parked_frame& no_frame() {
    static const parked_frame none;
    return none;
  }

  // Exchanges the running loop's members with `f`.
  void swap_frame(parked_frame& f) noexcept {
    frame_swapper v;
    frame_members(v, self(), f);
  }

  // `req` in the running loop's working directory (the request itself outside a worktree).
  const action_request& in_working_dir(const action_request& req) {
    if (working_dir_.empty() || !req.working_dir.empty()) return req;
    worktree_request_ = req;
    worktree_request_.working_dir = working_dir_;
    return worktree_request_;
  }

  // A loop starts in the members: the top loop (reset()), or a child (call_subloop()).
  void start_frame(json context, std::optional<std::int64_t> timeout_ms) {
    Executor& ex = self();
    frame_starter v{{}, {*ex.loop_, std::move(context), ex.options_.injected_context, timeout_ms}};
    frame_members(v, ex, no_frame());
  }

  // The running loop's members from `s` (resume(); a child's frame, resume_frames()).
  void restore_frame(const snapshot& s, std::size_t at, convergence_memory convergence) {
    Executor& ex = self();
    frame_restorer v{{}, {*ex.loop_, s, at, convergence, ex.options_.injected_context}};
    frame_members(v, ex, no_frame());
  }

  // Back to the top loop, every child dropped (and every worktree detached).
  void unwind_frames() noexcept {
    detach_worktrees(false);
    while (!frames_.empty()) {
      swap_frame(frames_.back());
      frames_.pop_back();
    }
  }

  // Detaches the worktree of every waiting frame's child, innermost first (with events:
  // reported as `sub_loop_worktree_detached`).
  void detach_worktrees(bool with_events) noexcept {
    Executor& ex = self();
    for (std::size_t i = frames_.size(); i-- > 0;) {
      auto& w = frames_[i].child_worktree;
      if (!w) continue;
      detach_subloop_worktree(*w, ex.options_);
      if constexpr (Executor::emits_events)
        if (with_events) {
          guard_event e = worktree_event(ex.wall(), frames_[i].loop->state(frames_[i].current).name,
                                         "sub_loop_worktree_detached", w->branch, w->path);
          e.depth = static_cast<std::uint32_t>(i);
          ex.sink_.on_event(loop_event{e});
        }
      w.reset();
    }
  }

  // Runs the sub-loop state `st`: its child becomes the running loop, whose first state is
  // the next step. A child that cannot start is the state's `error` verdict.
  void call_subloop(const compiled_state& st, interpolation_context& ctx) {
    Executor& ex = self();
    auto child = find_child(*st.config, ctx, ex.options_, frames_.size() + 2, loop_id_);
    if (!child) return fail_call(st, ctx, std::move(child.error().message));
    auto context = child_context(*st.config, *child, ctx, ex.options_.injected_context);
    if (!context) return fail_call(st, ctx, fmt::format("sub-loop '{}': {}", child->loop->loop().name,
                                                        context.error().message));
    std::optional<attached_worktree> worktree;
    if (st.config->worktree) {
      auto w = attach_subloop_worktree(*st.config->worktree, ctx, *context, ex.options_);
      if (!w) return fail_worktree(st, ctx, std::move(w.error()));
      worktree = std::move(*w);
      if constexpr (Executor::emits_events)
        if (worktree) ex.emit(worktree_event(ex.wall(), st.name, "sub_loop_worktree_attached", worktree->branch, worktree->path));
    }
    std::optional<std::int64_t> parent_left;
    if (timeout_ms_) parent_left = *timeout_ms_ - ex.elapsed_ms_now();
    const auto limit = child_timeout_ms(child->loop->loop().timeout, st.config->timeout, parent_left);
    parked_frame parked;
    if (st.capture) parked.child_events.emplace();
    swap_frame(parked);
    parked.child_worktree = std::move(worktree);
    working_dir_ = parked.child_worktree ? parked.child_worktree->path : parked.working_dir;
    frames_.push_back(std::move(parked));
    ex.loop_ = std::move(child->loop);
    loop_id_ = std::move(child->id);
    start_frame(std::move(*context), limit);
    ex.start_ = ex.now_ = ex.clock_->now();
    ex.started_at_ = format_timestamp(ex.clock_->wall_now());
    if (limit) ex.deadline_ = ex.start_ + std::chrono::milliseconds(*limit);
    if constexpr (Executor::emits_events) ex.emit(loop_start_event{ex.wall(), ex.loop_->loop().name});
  }

  // The child ended (`how`): its parent runs again and concludes the sub-loop state.
  void return_to_parent(termination how, std::optional<error> err) {
    Executor& ex = self();
    const compiled_state& last = ex.loop_->state(ex.current_);
    child_end end{how, how == termination::terminal && last.failure, last.name, std::move(err), json()};
    if (how == termination::terminal && !last.config->output.empty()) {
      auto out = render_table(last.config->output, running_context(last));
      if (out) {
        end.output = std::move(*out);
      } else {
        ex.report_error(last, "output", out.error().message);
        end.how = termination::error;
        end.failed = std::move(out.error());
      }
    }
    if constexpr (Executor::emits_events)
      ex.emit(loop_complete_event{ex.wall(), last.name, ex.iteration_, to_string(end.how)});
    captured_map child_captured = std::move(ex.captured_);
    retired_ = ex.loop_;
    swap_frame(frames_.back());
    std::optional<std::string> events = std::move(frames_.back().child_events);
    const std::optional<attached_worktree> worktree = std::move(frames_.back().child_worktree);
    frames_.pop_back();
    const compiled_state& st = ex.loop_->state(ex.current_);
    if (worktree) {
      detach_subloop_worktree(*worktree, ex.options_);
      if constexpr (Executor::emits_events)
        ex.emit(worktree_event(ex.wall(), st.name, "sub_loop_worktree_detached", worktree->branch, worktree->path));
    }
    if (st.capture) {
      captured_record& c = ex.captured_[*st.capture];
      c = captured_record{};
      if (events) c.output = std::move(*events);
    }
    ex.captured_[st.name].subloop = subloop_record(*st.config, end, child_captured);
    ex.result_eval_.verdict.assign(subloop_verdict(st, end));
    json details = {{"terminated_by", to_string(end.how)}, {"final_state", end.final_state}};
    if (end.failure) details["failure_terminal"] = true;
    if (end.failed) details["error"] = end.failed->message;
    ex.result_eval_.details = std::move(details);
    interpolation_context ctx = running_context(st);
    conclude_call(st, ctx);
  }

  // A stop or a handoff inside a child: the run ends (or pauses) with every frame in place;
  // each frame reports its end, innermost first, and the result is the top loop's.
  void finish_stack(termination how, std::optional<error> err) {
    Executor& ex = self();
    if (!ex.resume_state_) ex.resume_state_ = ex.current_;
    ex.phase_ = Executor::run_phase::finished;
    if constexpr (Executor::emits_events) {
      if (how != termination::handoff) {
        ex.emit(loop_complete_event{ex.wall(), ex.loop_->state(ex.current_).name, ex.iteration_, to_string(how)});
        for (std::size_t i = frames_.size(); i-- > 0;) {
          const parked_frame& f = frames_[i];
          loop_complete_event e{ex.wall(), f.loop->state(f.current).name, f.iteration, to_string(how)};
          e.depth = static_cast<std::uint32_t>(i);
          ex.sink_.on_event(loop_event{e});
        }
      }
    }
    const parked_frame& top = frames_.front();
    execution_result& r = ex.result_;
    r.final_state = top.loop->state(top.current).name;
    r.iterations = top.iteration;
    r.terminated_by = how;
    r.failure = false;
    r.duration_ms = top.elapsed_offset_ms + std::chrono::duration_cast<std::chrono::milliseconds>(
                                                ex.clock_->now() - top.start).count();
    r.captured = captured_map(top.captured);
    r.error = std::move(err);
    r.on_handoff = top.loop->loop().on_handoff;
    r.snapshot = ex.snapshot();  // with each worktree's branch: a resume attaches it again
    detach_worktrees(how != termination::handoff);
  }

  // The running loop's snapshot members (its convergence list in `convergence_storage`, its
  // counters' JSON in `counters`, which the view leaves for the caller to point at or move).
  snapshot_view running_view(std::vector<std::pair<std::string_view, double>>& convergence_storage,
                             json& counters) const {
    const Executor& ex = self();
    snapshot_view v;
    frame_viewer<false> viewer{{}, {*ex.loop_, v, convergence_storage, &counters}};
    viewer.elapsed_ms = ex.phase_ >= Executor::run_phase::running ? ex.elapsed_ms_now() : ex.elapsed_offset_ms_;
    frame_members(viewer, ex, no_frame());
    return v;
  }

  // The running loop's interpolation context at state `st` (no `result` yet).
  interpolation_context running_context(const compiled_state& st) const noexcept {
    const Executor& ex = self();
    interpolation_context ctx;
    ctx.context = &ex.context_;
    ctx.captured = &ex.captured_;
    ctx.prev = ex.history_.prev();
    ctx.last_evaluation = ex.history_.last_evaluation();
    ctx.result = nullptr;
    ctx.state_name = st.name;
    ctx.iteration = ex.iteration_;
    ctx.loop_name = ex.loop_->loop().name;
    ctx.max_iterations = ex.loop_->loop().max_iterations;
    ctx.started_at = ex.started_at_;
    ctx.elapsed_ms = ex.elapsed_ms();
    ctx.env = ex.options_.env;
    ctx.env_user = ex.options_.env_user;
    ctx.size_limit = ex.options_.render_size_limit;
    return ctx;
  }

  // ---- snapshots of the stack (snapshot::frames) ----

  // A child ended (`how`): its parent goes on, unless the run stops or pauses.
  void end_child(termination how, std::optional<error> err) {
    if (how == termination::cancelled || how == termination::handoff) return finish_stack(how, std::move(err));
    return_to_parent(how, std::move(err));
  }


  // `s` (the running loop's snapshot) becomes the whole stack's: the top loop's members,
  // and `frames` the loops below it, the running one last.
  void stack_into(snapshot& s) const {
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
  snapshot_view stack_view() const {
    stack_snapshot_ = self().snapshot();
    const snapshot& s = stack_snapshot_;
    snapshot_view v;
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
  expected<void, error> resume_frames(const json& frames) {
    Executor& ex = self();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      auto frame = read_frame(frames[i], fmt::format("frames[{}]", i));
      if (!frame) return unexpected(std::move(frame.error()));
      if (ex.options_.child_loops == nullptr)
        return unexpected(error{errc::snapshot_mismatch, "the snapshot runs sub-loops and the host gave no child loop resolver"});
      auto child = ex.options_.child_loops->load(frame->id, loop_id_);
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
      ex.start_ = ex.clock_->now();  // the parent waits from now on, with the time it had
      if (timeout_ms_) ex.deadline_ = ex.start_ + std::chrono::milliseconds(*timeout_ms_ - ex.elapsed_offset_ms_);
      parked_frame parked;
      swap_frame(parked);
      if (!frame->worktree.empty()) {  // attached again, where the snapshot was taken
        json scratch = json::object();
        auto w = attach_subloop_worktree(frame->worktree, interpolation_context{}, scratch, ex.options_);
        if (!w || !*w) {
          swap_frame(parked);
          return unexpected(changed(w ? "its worktree branch is empty" : w.error()));
        }
        parked.child_worktree = std::move(**w);
      }
      working_dir_ = parked.child_worktree ? parked.child_worktree->path : parked.working_dir;
      frames_.push_back(std::move(parked));
      ex.loop_ = std::move(child->loop);
      loop_id_ = std::move(child->id);
      start_frame(json::object(), frame->timeout_ms);
      restore_frame(frame->state, *at, std::move(convergence));
    }
    return {};
  }

  // Keeps `e` in the event capture of every waiting frame that has one.
  template <class Event>
  void note_child_event(const Event& e) noexcept {
    try {
      for (auto& f : frames_)
        if (f.child_events) append_json_line(*f.child_events, loop_event{e});
    } catch (...) {  // NOLINT(bugprone-empty-catch): an event capture is best effort
    }
  }

 private:
  action_request worktree_request_;  // in_working_dir()
  mutable snapshot stack_snapshot_;  // stack_view()
  mutable std::vector<std::pair<std::string_view, double>> stack_convergence_;

  // One entry of snapshot::frames, read back.
  struct frame_entry {
    snapshot state;
    std::string id;
    std::optional<std::int64_t> timeout_ms;
    std::string worktree{};  // the branch of the worktree it runs in
  };

  static expected<frame_entry, error> read_frame(const json& j, const std::string& path) {
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
  snapshot parked_snapshot(const parked_frame& f) const {
    snapshot_view v;
    std::vector<std::pair<std::string_view, double>> convergence;
    json counters;
    frame_viewer<true> viewer{{}, {*f.loop, v, convergence, &counters}};
    viewer.elapsed_ms = f.elapsed_offset_ms + std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  self().clock_->now() - f.start).count();
    frame_members(viewer, self(), f);
    snapshot s = v.materialize();
    s.counters = std::move(counters);
    return s;
  }

  static json frame_json(const snapshot& s, const std::string& id, std::optional<std::int64_t> timeout_ms) {
    json j = to_json(s);
    j["loop_id"] = id;
    if (timeout_ms) j["timeout_ms"] = *timeout_ms;
    return j;
  }

  // A child that could not start: the state's `error` verdict.
  void fail_call(const compiled_state& st, interpolation_context& ctx, std::string message) {
    Executor& ex = self();
    ex.report_error(st, "subloop", message);
    ex.result_eval_ = error_result(std::move(message));
    conclude_call(st, ctx);
  }

  // A worktree that could not be attached: reported, and the state's `error` verdict.
  void fail_worktree(const compiled_state& st, interpolation_context& ctx, std::string message) {
    Executor& ex = self();
    if constexpr (Executor::emits_events)
      ex.emit(worktree_event(ex.wall(), st.name, "sub_loop_worktree_error", {}, {}, message));
    fail_call(st, ctx, std::move(message));
  }

  // Records the sub-loop state's verdict as `prev` and routes it.
  void conclude_call(const compiled_state& st, interpolation_context& ctx) {
    Executor& ex = self();
    if (st.capture) ex.captured_[*st.capture].verdict = ex.result_eval_.verdict;
    ex.history_.record(st, nullptr, ex.result_eval_, true);
    ex.move_on(st, std::nullopt, ex.choose_next(st, ctx));
  }
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

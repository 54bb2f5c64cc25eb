// little_loops — what a sub-loop frame does with each of its members: the visitors over the one list
// SPDX-License-Identifier: MIT
#pragma once

// Part of the executor's sub-loop frames (subloop_frames.hpp). A frame's per-run members are
// listed once, in executor_core::frame_members(), each under a role; these visitors walk that list to swap
// a frame in or out, start one, restore one from a snapshot, and view one as a snapshot.
//
// The roles (each call passes the running loop's member, then the parked frame's):
//   kept(a, b)          the frame's loop (whose name and digest a view shows), identity and
//                       clock: swapped only (who starts a frame sets them)
//   position(c, pc, r, pr)  the current state and the state a paused run resumes at: the
//                       snapshot's current_state
//   field(a, b, &snapshot::m, &snapshot_view::m)  a plain value: value-initialised at start,
//                       copied to and from the snapshot member `m`
//   context(a, b)       the context: given at start, with the host's injected keys
//   memory(a, b)        a run memory: how it starts, is restored and is viewed is given by
//                       the overloads start_memory(), restore_memory() and view_memory()
//   elapsed(a, b)       the run time before the frame's clock started
//   cleared(a, b)       reset at start, in no snapshot
//   limit(a, b)         the time limit the frame was started with

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/host_requests.hpp>
#include <little_loops/detail/resilience_runtime.hpp>
#include <little_loops/detail/retry_counters.hpp>
#include <little_loops/detail/run_history.hpp>
#include <little_loops/detail/subloop_worktree.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/snapshot.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A loop waiting for its child: its run, as the executor's members held it. Each member is
/// also in executor_core::frame_members(), the one list the frame operations walk.
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
// The frame stack grows by moves: a copy of a frame (its context, memories and history) would
// cost each push, and each includer the code of copying every member.
static_assert(std::is_nothrow_move_constructible_v<parked_frame>);

/// Every role, doing nothing: a visitor declares the roles it acts on.
struct frame_visitor {
  template <class... M>
  void kept(M&&...) {}
  template <class... M>
  void position(M&&...) {}
  template <class... M>
  void field(M&&...) {}
  template <class... M>
  void context(M&&...) {}
  template <class... M>
  void memory(M&&...) {}
  template <class... M>
  void elapsed(M&&...) {}
  template <class... M>
  void cleared(M&&...) {}
  template <class... M>
  void limit(M&&...) {}
};

/// Exchanges the running loop's members with the parked frame's.
struct frame_swapper {
  template <class T, class... Rest>
  void kept(T& a, T& b, Rest&&...) noexcept { swap_pair(a, b); }
  template <class C, class R>
  void position(C& c, C& pc, R& r, R& pr) noexcept {
    swap_pair(c, pc);
    swap_pair(r, pr);
  }
  template <class T, class... Rest>
  void field(T& a, T& b, Rest&&...) noexcept { swap_pair(a, b); }
  template <class T>
  void context(T& a, T& b) noexcept { swap_pair(a, b); }
  template <class T>
  void memory(T& a, T& b) noexcept { swap_pair(a, b); }
  template <class T>
  void elapsed(T& a, T& b) noexcept { swap_pair(a, b); }
  template <class T>
  void cleared(T& a, T& b) noexcept { swap_pair(a, b); }
  template <class T>
  void limit(T& a, T& b) noexcept { swap_pair(a, b); }

 private:
  template <class T>
  static void swap_pair(T& a, T& b) noexcept {
    using std::swap;
    swap(a, b);
  }
};

// ---- run memories: how each starts, comes back from a snapshot and shows in one ----
// A new per-run memory type gets one overload of each (the compiler asks for them).

/// What a frame starts from.
struct frame_start_values {
  const compiled_loop& loop;
  json context;
  const json& injected;
  std::optional<std::int64_t> timeout_ms;
};

/// What a frame is restored from (`convergence` read and checked by the caller).
struct frame_restore_values {
  const compiled_loop& loop;
  const snapshot& from;
  std::size_t at;
  convergence_memory& convergence;
  const json& injected;
};

/// Where a frame's view goes: `counters` (null: left out) receives the counters' JSON.
struct frame_view_values {
  const compiled_loop& loop;
  snapshot_view& out;
  std::vector<std::pair<std::string_view, double>>& convergence;
  json* counters;
};

// Defined with the definitions (the executor core is their one user).
LITTLE_LOOPS_INLINE void start_memory(captured_map& m, const frame_start_values&);
LITTLE_LOOPS_INLINE void start_memory(run_history& m, const frame_start_values&);
LITTLE_LOOPS_INLINE void start_memory(convergence_memory& m, const frame_start_values& v);
LITTLE_LOOPS_INLINE void start_memory(retry_counters& m, const frame_start_values&);
LITTLE_LOOPS_INLINE void start_memory(resilience_memory& m, const frame_start_values&);
LITTLE_LOOPS_INLINE void start_memory(session_chain& m, const frame_start_values&);

LITTLE_LOOPS_INLINE void restore_memory(captured_map& m, const frame_restore_values& v);
LITTLE_LOOPS_INLINE void restore_memory(run_history& m, const frame_restore_values& v);
LITTLE_LOOPS_INLINE void restore_memory(convergence_memory& m, const frame_restore_values& v);
LITTLE_LOOPS_INLINE void restore_memory(retry_counters& m, const frame_restore_values& v);
LITTLE_LOOPS_INLINE void restore_memory(resilience_memory& m, const frame_restore_values& v);
LITTLE_LOOPS_INLINE void restore_memory(session_chain& m, const frame_restore_values& v);

LITTLE_LOOPS_INLINE void view_memory(const captured_map& m, const frame_view_values& v);
LITTLE_LOOPS_INLINE void view_memory(const run_history& m, const frame_view_values& v);
LITTLE_LOOPS_INLINE void view_memory(const convergence_memory& m, const frame_view_values& v);
// The counters' JSON: the retry counters', joined by the resilience memory's (listed after).
LITTLE_LOOPS_INLINE void view_memory(const retry_counters& m, const frame_view_values& v);
LITTLE_LOOPS_INLINE void view_memory(const resilience_memory& m, const frame_view_values& v);
// The session chain's pending summary joins the counters' JSON (listed after resilience).
LITTLE_LOOPS_INLINE void view_memory(const session_chain& m, const frame_view_values& v);

/// Starts the running loop's members (the parked frame's are not touched): the loop and its
/// identity are set already.
struct frame_starter : frame_visitor {
  frame_start_values values;

  template <class C, class R>
  void position(C& c, const C&, R& r, const R&) {
    c = values.loop.initial();
    r.reset();
  }
  template <class T, class... Rest>
  void field(T& a, const T&, Rest&&...) { a = T{}; }
  void context(json& a, const json&);
  template <class T>
  void memory(T& a, const T&) { start_memory(a, values); }
  template <class T>
  void elapsed(T& a, const T&) { a = 0; }
  template <class T>
  void cleared(T& a, const T&) { a = T{}; }
  template <class T>
  void limit(T& a, const T&) { a = values.timeout_ms; }
};

/// The running loop's members from a snapshot (after frame_starter: what the snapshot does
/// not hold keeps its start value).
struct frame_restorer : frame_visitor {
  frame_restore_values values;

  template <class C, class R>
  void position(C& c, const C&, R&, const R&) { c = values.at; }
  template <class T, class S, class V>
  void field(T& a, const T&, S snapshot_member, V) { a = values.from.*snapshot_member; }
  void context(json& a, const json&);
  template <class T>
  void memory(T& a, const T&) { restore_memory(a, values); }
  template <class T>
  void elapsed(T& a, const T&) { a = values.from.elapsed_ms; }
};

/// A frame's members as a snapshot_view: the running loop's (`Parked` false) or the parked
/// frame's. `elapsed_ms` is the frame's run time, which the caller reads from its clock.
template <bool Parked>
struct frame_viewer : frame_visitor {
  frame_view_values values;
  std::int64_t elapsed_ms = 0;

  template <class T>
  void kept(const T&, const T&) {}
  void kept(const std::shared_ptr<const compiled_loop>& a, const std::shared_ptr<const compiled_loop>& b) {
    const compiled_loop& loop = *pick(a, b);
    values.out.loop_name = loop.loop().name;
    values.out.digest = loop.digest();
  }
  template <class C, class R>
  void position(const C& c, const C& pc, const R& r, const R& pr) {
    const R& resume = pick(r, pr);
    values.out.current_state = values.loop.state(resume ? *resume : pick(c, pc)).name;
  }
  template <class T, class S, class V>
  void field(const T& a, const T& b, S, V view_member) { values.out.*view_member = pick(a, b); }
  void context(const json& a, const json& b) { values.out.context = &pick(a, b); }
  template <class T>
  void memory(const T& a, const T& b) { view_memory(pick(a, b), values); }
  template <class T>
  void elapsed(const T&, const T&) { values.out.elapsed_ms = elapsed_ms; }

 private:
  template <class T>
  static const T& pick(const T& running, const T& parked) {
    if constexpr (Parked) return parked;
    else return running;
  }
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE void start_memory(captured_map& m, const frame_start_values&) { m.clear(); }
LITTLE_LOOPS_INLINE void start_memory(run_history& m, const frame_start_values&) { m.clear(); }
LITTLE_LOOPS_INLINE void start_memory(convergence_memory& m, const frame_start_values& v) {
  m.clear(v.loop.states().size());
}
LITTLE_LOOPS_INLINE void start_memory(retry_counters& m, const frame_start_values&) { m.clear(); }
LITTLE_LOOPS_INLINE void start_memory(resilience_memory& m, const frame_start_values&) {
  m.clear();
}
LITTLE_LOOPS_INLINE void start_memory(session_chain& m, const frame_start_values&) { m.clear(); }
LITTLE_LOOPS_INLINE void restore_memory(captured_map& m, const frame_restore_values& v) {
  m = captured_map(v.from.captured);
}
LITTLE_LOOPS_INLINE void restore_memory(run_history& m, const frame_restore_values& v) {
  m.restore(v.from);
}
LITTLE_LOOPS_INLINE void restore_memory(convergence_memory& m, const frame_restore_values& v) {
  m = std::move(v.convergence);
}
LITTLE_LOOPS_INLINE void restore_memory(retry_counters& m, const frame_restore_values& v) {
  m.restore(v.from.counters, v.loop);
}
LITTLE_LOOPS_INLINE void restore_memory(resilience_memory& m, const frame_restore_values& v) {
  m.restore(v.from.counters.is_object() ? v.from.counters.value("resilience", json()) : json(), v.loop);
}
LITTLE_LOOPS_INLINE void restore_memory(session_chain& m, const frame_restore_values& v) {
  m.restore(v.from.counters);
}
LITTLE_LOOPS_INLINE void view_memory(const captured_map& m, const frame_view_values& v) {
  v.out.captured = &m;
}
LITTLE_LOOPS_INLINE void view_memory(const run_history& m, const frame_view_values& v) {
  v.out.prev = m.prev();
  v.out.last_evaluation = m.last_evaluation();
}
LITTLE_LOOPS_INLINE void view_memory(const convergence_memory& m, const frame_view_values& v) {
  m.list(v.loop, v.convergence);
  v.out.convergence = v.convergence;
}
LITTLE_LOOPS_INLINE void view_memory(const retry_counters& m, const frame_view_values& v) {
  if (v.counters != nullptr) *v.counters = m.to_json(v.loop);
}
LITTLE_LOOPS_INLINE void view_memory(const resilience_memory& m, const frame_view_values& v) {
  if (v.counters != nullptr) *v.counters = with_resilience(std::move(*v.counters), m.to_json(v.loop));
}
LITTLE_LOOPS_INLINE void view_memory(const session_chain& m, const frame_view_values& v) {
  if (v.counters != nullptr) *v.counters = m.into(std::move(*v.counters));
}

LITTLE_LOOPS_INLINE void frame_starter::context(json& a, const json&) {
  a = std::move(values.context);
  inject_missing(a, values.injected);
}

LITTLE_LOOPS_INLINE void frame_restorer::context(json& a, const json&) {
  a = values.from.context;
  inject_missing(a, values.injected);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

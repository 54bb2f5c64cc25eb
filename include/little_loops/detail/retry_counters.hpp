// little_loops — the executor's per-state counters of the current dialect's retry rules
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/routing.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// `max_retries` counts direct self re-entries per state; the `cannot_judge` hold counts
// consecutive abstentions per state; `passes` counts maintain restarts (the full-pass cap);
// the throttle counts the actions of the current visit.
// The vectors are allocated on first use, so loops without these keys pay nothing.
class retry_counters {
 public:
  void clear() noexcept;

  // The throttle (throttle.hpp) counts the actions of one visit: entering a state other than
  // the one entered last starts the count again.
  void visit(std::size_t state) noexcept;
  // One more action in the current visit; the visit's count.
  int count_call() noexcept { return ++calls_; }

  // The run enters `state` (of `states` states): a re-entry of the state entered last counts
  // one retry, entering another clears the count of the one left. Returns the state's count.
  int enter(std::size_t state, std::size_t states);

  // The state's retry streak is over (redirected to on_retry_exhausted).
  void exhausted(std::size_t state) noexcept {
    if (state < retries_.size()) retries_[state] = 0;
  }

  // One more abstention of `state`: true to hold (re-enter it: at most `limit` in a row),
  // false to escalate (the count starts again).
  bool hold(std::size_t state, std::size_t states, int limit);

  // `state` gave a verdict that is not an abstention.
  void judged(std::size_t state) noexcept {
    if (state < holds_.size()) holds_[state] = 0;
  }

  // Entering `state` (max_retries): past its limit of direct self re-entries, the target of
  // its `on_retry_exhausted` (or why it is none); nullopt while the state may run.
  std::optional<expected<std::size_t, little_loops::error>> redirect(const compiled_loop& loop,
                                                                     std::size_t state);

  // The cannot_judge hold (design §6.3): an abstention the state does not route by its own
  // name re-enters it (`reason` set) up to twice in a row, the third takes the error route.
  // nullopt for any other verdict, which ends the state's streak.
  std::optional<route_outcome> abstention_route(const route_query& q, std::string_view& reason);

  // The counters for a snapshot, by state name (null when there are none).
  [[nodiscard]] json to_json(const compiled_loop& loop) const;

  // Restores the counters of snapshot::counters (states the loop lacks are skipped).
  void restore(const json& j, const compiled_loop& loop);

  std::int64_t passes = 0;  // maintain restarts

 private:
  std::optional<std::size_t> entered_;
  std::vector<int> retries_;
  std::vector<int> holds_;
  std::optional<std::size_t> visited_;  // the state of the throttle's current visit
  int calls_ = 0;                       // its actions so far
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE auto retry_counters::clear() noexcept -> void {
  entered_.reset();
  retries_.clear();
  holds_.clear();
  passes = 0;
  visited_.reset();
  calls_ = 0;
}

LITTLE_LOOPS_INLINE auto retry_counters::visit(std::size_t state) noexcept -> void {
  if (visited_ == state) return;
  visited_ = state;
  calls_ = 0;
}

LITTLE_LOOPS_INLINE auto retry_counters::enter(std::size_t state, std::size_t states) -> int {
  if (retries_.empty()) retries_.assign(states, 0);
  if (entered_ && *entered_ == state)
    ++retries_[state];
  else if (entered_)
    retries_[*entered_] = 0;
  entered_ = state;
  return retries_[state];
}

LITTLE_LOOPS_INLINE auto retry_counters::hold(std::size_t state, std::size_t states, int limit) -> bool {
  if (holds_.empty()) holds_.assign(states, 0);
  if (++holds_[state] <= limit) return true;
  holds_[state] = 0;
  return false;
}

LITTLE_LOOPS_INLINE auto retry_counters::redirect(const compiled_loop& loop, std::size_t state) -> std::optional<expected<std::size_t, little_loops::error>> {
  const compiled_state& st = loop.state(state);
  const int retries = enter(state, loop.states().size());
  if (!st.max_retries || retries <= *st.max_retries || !st.retry_exhausted) return std::nullopt;
  exhausted(state);
  return take_static(st, *st.retry_exhausted, state);
}

LITTLE_LOOPS_INLINE auto retry_counters::abstention_route(const route_query& q, std::string_view& reason) -> std::optional<route_outcome> {
  if (!is_abstention_verdict(q.verdict) || routes_abstention(q.loop->state(q.current), q.verdict)) {
    judged(q.current);
    return std::nullopt;
  }
  if (!hold(q.current, q.loop->states().size(), 2)) return escalate_abstention(q);
  reason = "cannot_judge_hold";
  return route_outcome(q.current);
}

LITTLE_LOOPS_INLINE auto retry_counters::to_json(const compiled_loop& loop) const -> json {
  if (passes == 0 && !entered_ && holds_.empty() && calls_ == 0) return nullptr;  // the common case
  const auto named = [&loop](const std::vector<int>& counts) {
    json out = json::object();
    for (std::size_t i = 0; i < counts.size(); ++i)
      if (counts[i] != 0) out[loop.state(i).name] = counts[i];
    return out;
  };
  json retries = named(retries_), holds = named(holds_);
  if (passes == 0 && retries.empty() && holds.empty() && !entered_ && calls_ == 0) return nullptr;
  json out = {{"passes", passes}, {"retries", std::move(retries)}, {"holds", std::move(holds)}};
  if (entered_) out["entered"] = loop.state(*entered_).name;
  if (calls_ != 0 && visited_) out["throttle"] = {{"state", loop.state(*visited_).name}, {"calls", calls_}};
  return out;
}

LITTLE_LOOPS_INLINE auto retry_counters::restore(const json& j, const compiled_loop& loop) -> void {
  clear();
  if (!j.is_object()) return;
  if (const auto p = j.find("passes"); p != j.end() && p->is_number_integer()) passes = p->get<std::int64_t>();
  if (const auto e = j.find("entered"); e != j.end() && e->is_string())
    entered_ = loop.find(e->get_ref<const std::string&>());
  const auto fill = [&](const char* key, std::vector<int>& counts) {
    const auto m = j.find(key);
    if (m == j.end() || !m->is_object()) return;
    counts.assign(loop.states().size(), 0);
    for (auto it = m->begin(); it != m->end(); ++it)
      if (const auto i = loop.find(it.key()); i && it->is_number_integer()) counts[*i] = it->get<int>();
  };
  fill("retries", retries_);
  fill("holds", holds_);
  if (const auto t = j.find("throttle"); t != j.end() && t->is_object()) {
    const json& st = t->value("state", json());
    const json& n = t->value("calls", json());
    visited_ = st.is_string() ? loop.find(st.get_ref<const std::string&>()) : std::nullopt;
    calls_ = visited_ && n.is_number_integer() ? n.get<int>() : 0;
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

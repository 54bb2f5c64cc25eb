// little_loops — a run's memory between states: prev, last evaluation, convergence; resume checks
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/text_transfer.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>
#include <little_loops/snapshot.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format and search
#  include <fmt/format.h>

#  include <algorithm>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// What `${prev.*}` and `${prev.evaluation}` read: the last executed state, and the last
// evaluated one while `prev` is a state that was not evaluated (seed 004's
// `last_evaluator_output`). Buffers are reused from state to state.
class run_history {
 public:
  // `prev` (null before the first state ran).
  [[nodiscard]] const prev_record* prev() const noexcept { return has_prev_ ? &prev_ : nullptr; }
  // What `${prev.evaluation}` reads when prev was not evaluated (null: no evaluation yet).
  [[nodiscard]] const prev_record* last_evaluation() const noexcept {
    return has_prev_ && !prev_.evaluated && has_last_eval_ ? &last_eval_ : nullptr;
  }

  void clear();

  void restore(const snapshot& s);

  // Records the state execution `st` as prev. `action`: its result (null: no action ran),
  // whose output moves into prev; `eval`: its verdict, whose details move too unless the
  // state's targets are templates (they read `result`). `evaluated`: the verdict counts as an
  // evaluation; an unevaluated state keeps the last evaluation aside (swapped, not copied).
  void record(const compiled_state& st, action_result* action, evaluation_result& eval,
              bool evaluated);

  // Replaces the recorded verdict by `eval` (an `error` decided while routing).
  void amend_verdict(const evaluation_result& eval);

  // `prev` and `${prev.evaluation}` as the route targets of the state just recorded see them:
  // for templated targets the state before it, else (static targets read nothing) prev.
  [[nodiscard]] const prev_record* route_prev(const compiled_state& st) const noexcept {
    if (!st.dynamic_targets) return &prev_;
    return had_prev_ ? &route_prev_ : nullptr;
  }
  [[nodiscard]] const prev_record* route_last_evaluation(const compiled_state& st) const noexcept {
    if (!st.dynamic_targets) return last_evaluation();
    return had_prev_ && !route_prev_.evaluated && has_last_eval_ ? &last_eval_ : nullptr;
  }

 private:
  prev_record prev_;
  prev_record last_eval_;
  prev_record route_prev_;  // the state before the last recorded one, for its templated targets
  bool has_prev_ = false;
  bool has_last_eval_ = false;  // last_eval_ holds an evaluation older than an unevaluated prev_
  bool had_prev_ = false;       // route_prev_ holds a state
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE auto run_history::clear() -> void {
  has_prev_ = has_last_eval_ = false;
  prev_ = prev_record{};
  last_eval_ = prev_record{};
}

LITTLE_LOOPS_INLINE auto run_history::restore(const snapshot& s) -> void {
  has_prev_ = s.prev.has_value();
  if (s.prev) prev_ = *s.prev;
  has_last_eval_ = s.last_evaluation.has_value();
  if (s.last_evaluation) last_eval_ = *s.last_evaluation;
}

LITTLE_LOOPS_INLINE auto run_history::record(const compiled_state& st, action_result* action, evaluation_result& eval, bool evaluated) -> void {
  // Route targets see the state before this one as `prev` (seed 002 builds the context
  // before the state runs): kept, as a copy, only for a state whose targets are templates.
  had_prev_ = has_prev_;
  if (st.dynamic_targets && has_prev_) route_prev_ = prev_;
  if (!evaluated && has_prev_ && prev_.evaluated) {
    std::swap(last_eval_, prev_);
    has_last_eval_ = true;
  }
  prev_.state.assign(st.name);
  prev_.evaluated = evaluated;
  prev_.ran_action = action != nullptr;
  if (action) {
    take_text(prev_.output, action->output);
    take_text(prev_.stderr_output, action->stderr_output);
    prev_.exit_code = action->exit_code;
  } else {
    prev_.output.clear();
    prev_.stderr_output.clear();
    prev_.exit_code = 0;
  }
  prev_.verdict.assign(eval.verdict);
  if (st.dynamic_targets)
    prev_.details = eval.details;
  else
    prev_.details = std::move(eval.details);
  has_prev_ = true;
}

LITTLE_LOOPS_INLINE auto run_history::amend_verdict(const evaluation_result& eval) -> void {
  prev_.evaluated = true;
  prev_.verdict.assign(eval.verdict);
  prev_.details = eval.details;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// The convergence evaluator's memory: the previous value per state (design §3.9), and the
// states that have one, in state order, so snapshots list them without a pass over every
// state at each boundary.
class convergence_memory {
 public:
  void clear(std::size_t states);
  // The slot an evaluator of state `i` reads and writes.
  [[nodiscard]] std::optional<double>& slot(std::size_t i) noexcept { return values_[i]; }
  // Notes that the evaluator of state `i` ran (its slot may now hold a value).
  void note(std::size_t i);
  // Restores `s.convergence`; false (and unchanged) when it names a state not in `loop`,
  // whose name is then `unknown`.
  bool restore(const compiled_loop& loop, const snapshot& s, std::string_view& unknown);
  // The memory as (state name, value) pairs into `out`.
  void list(const compiled_loop& loop,
            std::vector<std::pair<std::string_view, double>>& out) const;

 private:
  std::vector<std::optional<double>> values_;
  std::vector<std::size_t> set_;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE auto convergence_memory::clear(std::size_t states) -> void {
  values_.assign(states, std::nullopt);
  set_.clear();
}

LITTLE_LOOPS_INLINE auto convergence_memory::note(std::size_t i) -> void {
  if (!values_[i]) return;
  const auto at = std::lower_bound(set_.begin(), set_.end(), i);
  if (at == set_.end() || *at != i) set_.insert(at, i);
}

LITTLE_LOOPS_INLINE auto convergence_memory::restore(const compiled_loop& loop, const snapshot& s, std::string_view& unknown) -> bool {
  std::vector<std::optional<double>> values(loop.states().size());
  for (const auto& [name, value] : s.convergence) {
    const auto i = loop.find(name);
    if (!i) {
      unknown = name;
      return false;
    }
    values[*i] = value;
  }
  values_ = std::move(values);
  set_.clear();
  for (std::size_t i = 0; i < values_.size(); ++i)
    if (values_[i]) set_.push_back(i);
  return true;
}

LITTLE_LOOPS_INLINE auto convergence_memory::list(const compiled_loop& loop, std::vector<std::pair<std::string_view, double>>& out) const -> void {
  out.clear();
  for (const std::size_t i : set_)
    if (values_[i]) out.emplace_back(loop.state(i).name, *values_[i]);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// The state a snapshot resumes at, once it is known to belong to `loop` (same name and
// digest); else `errc::snapshot_mismatch` saying why.
LITTLE_LOOPS_INLINE expected<std::size_t, error> resume_state(const compiled_loop& loop,
                                                                const snapshot& s);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE expected<std::size_t, error> resume_state(const compiled_loop& loop,
                                                                const snapshot& s) {
  if (s.digest != loop.digest() || s.loop_name != loop.loop().name)
    return unexpected(error{
        errc::snapshot_mismatch,
        fmt::format("snapshot of loop \"{}\" (digest {}) does not match loop \"{}\" (digest {})",
                    s.loop_name, s.digest, loop.loop().name, loop.digest()),
        "digest"});
  if (const auto at = loop.find(s.current_state)) return *at;
  return unexpected(error{errc::snapshot_mismatch,
                          fmt::format("snapshot state \"{}\" is not a state of loop \"{}\"",
                                      s.current_state, loop.loop().name),
                          "current_state"});
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — journal: journal_event_sink, an EventSink that writes a loop's event log
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/events.hpp>
#include <little_loops/journal/writer.hpp>

#include <utility>
#include <variant>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// An EventSink that appends every event (seed-002 JSON) to a journal's event log and then
/// forwards it to `Next` (e.g. a progress display). Lines are buffered and written with one
/// write() when an action starts, when the loop ends (loop_complete, handoff,
/// max_iterations, error events) and at every loop_journal::save() (journal_sync::background:
/// with the next action's start): a process killed during an action leaves every event up
/// to that action's `action_start` in the log.
template <class Next = null_event_sink>
class journal_event_sink {
 public:
  explicit journal_event_sink(loop_journal& journal, Next next = Next{})
      : journal_(&journal), next_(std::move(next)) {}

  void on_event(const loop_event& event) noexcept {
    journal_->append_event(event);
    const bool routine = std::holds_alternative<state_enter_event>(event) ||
                         std::holds_alternative<action_complete_event>(event) ||
                         std::holds_alternative<evaluate_event>(event) ||
                         std::holds_alternative<route_event>(event) ||
                         std::holds_alternative<loop_start_event>(event) ||
                         std::holds_alternative<loop_resume_event>(event);
    if (!routine) journal_->flush_events();
    next_.on_event(event);
  }

  [[nodiscard]] Next& next() noexcept { return next_; }

 private:
  loop_journal* journal_;
  Next next_;
};

LITTLE_LOOPS_NAMESPACE_END

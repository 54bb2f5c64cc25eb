// little_loops — journal: the record of a journaled run at a state boundary and at its end
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/executor.hpp>
#include <little_loops/json.hpp>
#include <little_loops/snapshot.hpp>
#include <little_loops/journal/record.hpp>
#include <little_loops/journal/status.hpp>
#include <little_loops/journal/writer.hpp>

#include <chrono>
#include <string>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

/// `record` at the executor's state boundary `s`, status `running`.
inline void record_boundary(journal_record& record, const snapshot_view& s) {
  record.iteration = s.iteration;
  record.current_state = s.current_state;
  if (record.started_at.empty()) record.started_at = s.started_at;
  record.status = std::string(journal_status::running);
}

/// `record` at the end of a run: its status (journal_status_for()), where it stopped, its
/// captured values and the resumable snapshot (null after a terminal or a terminated handoff).
inline void record_result(journal_record& record, const execution_result& result) {
  record.iteration = result.iterations;
  record.current_state = result.snapshot ? result.snapshot->current_state : result.final_state;
  record.captured = captured_to_json(result.captured);
  record.accumulated_ms = result.duration_ms;
  record.status = std::string(journal_status_for(result));
  const bool keeps_snapshot = result.snapshot && record.status != journal_status::terminated;
  record.snapshot = keeps_snapshot ? to_json(*result.snapshot) : json(nullptr);
}

/// Whether a stop was requested through the journal's stop file, looked for at most every
/// 10 ms (a stat() per step would be on the path between two actions; a stop request is a
/// human-scale event).
class stop_file_poll {
 public:
  bool requested(const loop_journal& journal) {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_check_) return false;
    next_check_ = now + std::chrono::milliseconds(10);
    return journal.stop_requested();
  }

 private:
  std::chrono::steady_clock::time_point next_check_{};
};

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

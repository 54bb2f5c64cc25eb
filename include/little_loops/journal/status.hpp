// little_loops — journal: the status a run is journaled with
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/executor.hpp>

#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Status values written by run_journaled(): the original's (its PersistentExecutor's).
/// Hosts may write others; how the run ended exactly is its `terminated_by`.
namespace journal_status {
inline constexpr std::string_view running = "running";
inline constexpr std::string_view completed = "completed";      ///< success terminal
inline constexpr std::string_view failed = "failed";  ///< error, timeout, `failure: true` terminal
inline constexpr std::string_view interrupted = "interrupted";  ///< stopped, cancelled, crashed, max_iterations
inline constexpr std::string_view handoff = "awaiting_continuation";  ///< handoff signal
/// A handoff in a loop with `on_handoff: terminate`: the run ends there, not resumable.
inline constexpr std::string_view terminated = "terminated";
/// Written by versions before 2026-11-24 instead of `interrupted` / `failed`; still read.
inline constexpr std::string_view max_iterations = "max_iterations";
inline constexpr std::string_view timed_out = "timed_out";
inline constexpr std::string_view error = "error";
}  // namespace journal_status

/// The status a finished run is journaled with, as the original maps its endings: a terminal
/// is `completed` (`failed` for a `failure: true` one), max_iterations and a stop are
/// `interrupted`, a handoff `awaiting_continuation` (`terminated` when the loop says
/// `on_handoff: terminate`), an error or a timeout `failed`.
inline std::string_view journal_status_for(const execution_result& r) noexcept {
  switch (r.terminated_by) {
    case termination::terminal:
      return r.failure ? journal_status::failed : journal_status::completed;
    case termination::max_iterations: return journal_status::interrupted;
    case termination::cancelled: return journal_status::interrupted;
    case termination::handoff:
      return r.on_handoff == handoff_policy::terminate ? journal_status::terminated : journal_status::handoff;
    case termination::timeout:
    case termination::error: return journal_status::failed;
  }
  return journal_status::failed;
}

/// True for statuses a run can be resumed from, as in the original: interrupted (which
/// includes max_iterations: resume with a higher --max-iterations), awaiting_continuation,
/// and a `running` record whose process is gone. A failed or completed run is not.
inline bool journal_resumable(std::string_view status) noexcept {
  return status == journal_status::running || status == journal_status::interrupted ||
         status == journal_status::handoff || status == journal_status::max_iterations;
}

LITTLE_LOOPS_NAMESPACE_END

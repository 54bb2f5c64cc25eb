// little_loops — journal: run_journaled(), an executor run to its end with a record saved at every state boundary
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/executor.hpp>
#include <little_loops/json.hpp>
#include <little_loops/snapshot.hpp>
#include <little_loops/journal/detail/run_record.hpp>
#include <little_loops/journal/record.hpp>
#include <little_loops/journal/status.hpp>
#include <little_loops/journal/writer.hpp>

#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// What a host adds to run_journaled(); every member may be left empty.
struct journaled_run_hooks {
  /// Called once the first state boundary is saved, before the first step (e.g. to print a
  /// header, or to install signal handlers for the steps).
  std::function<void()> started;
  /// Called once the executor has stopped, with the final record filled in (status,
  /// iteration, current state, captured values) but not yet saved: e.g. to add how the run
  /// ended to `record.extra`, or to set the journal's `sync` for the final save.
  std::function<void(const execution_result&, journal_record&)> finished;
  /// Called with every journal write failure, as it happens. A state boundary that cannot be
  /// saved stops the run before the next step (see run_journaled()): a host that heard of a
  /// failure knows the run ended because its journal could not be written.
  std::function<void(const little_loops::error&)> write_failed;
};

/// Runs `executor` to the end, saving `record` (status `running`, snapshot, iteration,
/// current state) atomically after every state boundary, and the final status (see
/// journal_status_for) with the resumable snapshot (null after a terminal or a terminated
/// handoff) at the end, which is durable when it returns (journal.flush()). A stop file
/// (request_stop(); looked for at a boundary at most every 10 ms) or `stop` stops the run at
/// the next boundary, like a cancellation. `hooks` let a host act when the run has started
/// and when it has ended, and hear of journal write failures.
///
/// No step starts unless the boundary before it is saved, as a database refuses a commit
/// it cannot write: when a save fails, the executor is stopped at that boundary (the result
/// says `cancelled`, as after request_stop()), the final record is still attempted, and
/// `hooks.write_failed` hears the error. Resuming then runs the step after the last saved
/// boundary, which is the step in flight: none is lost and none runs twice.
template <class Executor>
const execution_result& run_journaled(Executor& executor, loop_journal& journal,
                                      journal_record& record, std::stop_token stop,
                                      const journaled_run_hooks& hooks) {
  std::stop_callback forward(stop, [&executor]() noexcept { executor.request_stop(); });
  record.pid = static_cast<long>(::getpid());  // once: getpid() is a system call
  record.captured = json();  // the snapshots hold them until the end
  const auto report = [&](const expected<void, little_loops::error>& written) {
    if (!written && hooks.write_failed) hooks.write_failed(written.error());
  };
  // Whether the boundary is saved; when it is not, the executor ends there without a step.
  const auto boundary = [&] {
    const snapshot_view s = executor.snapshot_view();
    detail::record_boundary(record, s);
    auto saved = journal.save(record, s);
    if (saved) return true;
    report(saved);
    executor.request_stop();
    return false;
  };
  if (boundary()) {
    if (hooks.started) hooks.started();
    detail::stop_file_poll stop_file;
    while (executor.step()) {
      if (!boundary()) continue;  // the next step() ends the run without starting an action
      if (stop_file.requested(journal)) executor.request_stop();
    }
  } else {
    (void)executor.step();  // ends the run at once: a stop was requested
  }
  const execution_result& result = executor.result();
  detail::record_result(record, result);
  if (hooks.finished) hooks.finished(result, record);
  report(journal.save(record));
  report(journal.flush());
  journal.clear_stop_request();
  return result;
}

/// run_journaled() without hooks: the last journal write failure, if any (a failed
/// boundary stops the run), is returned in `*write_error` when given.
template <class Executor>
const execution_result& run_journaled(Executor& executor, loop_journal& journal,
                                      journal_record& record, std::stop_token stop = {},
                                      std::optional<little_loops::error>* write_error = nullptr) {
  journaled_run_hooks hooks;
  if (write_error != nullptr)
    hooks.write_failed = [write_error](const little_loops::error& e) { *write_error = e; };
  return run_journaled(executor, journal, record, std::move(stop), hooks);
}

LITTLE_LOOPS_NAMESPACE_END

// little_loops — journal: asking a running loop to stop (its stop file and SIGTERM)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/journal/files.hpp>
#include <little_loops/journal/reader.hpp>
#include <little_loops/journal/record.hpp>
#include <little_loops/journal/status.hpp>

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// What request_stop() did.
struct stop_outcome {
  bool stop_file_written = false;  ///< `DIR/NAME.stop` now exists
  bool signalled = false;          ///< SIGTERM was sent to the recorded pid
  long pid = 0;
};

/// Asks a running loop to stop: writes `DIR/NAME.stop` (a journaled run checks it at every
/// state boundary) and, when the record says `running` and its process is alive, sends it
/// SIGTERM (a host like ll-loop then stops the action's process group and journals the run
/// as interrupted). errc::io_error when there is no journal or the stop file cannot be
/// written.
inline expected<stop_outcome, little_loops::error> request_stop(const std::filesystem::path& dir,
                                                                std::string_view name,
                                                                bool send_signal = true) {
  auto record = load_journal_summary(dir, name);
  if (!record) return unexpected(std::move(record.error()));
  if (!record->has_value())
    return unexpected(little_loops::error{errc::io_error, "no journal for this loop",
                                          journal_paths_for(dir, name).state.string()});
  stop_outcome outcome;
  auto written = write_file_atomic(journal_paths_for(dir, name).stop, journal_now() + "\n", false);
  if (!written) return unexpected(std::move(written.error()));
  outcome.stop_file_written = true;
  const journal_record& r = **record;
  outcome.pid = r.pid;
  if (send_signal && r.status == journal_status::running && r.pid > 0 && r.pid != ::getpid() &&
      journal_process_alive(r.pid, r.updated_at))
    outcome.signalled = ::kill(static_cast<pid_t>(r.pid), SIGTERM) == 0;
  return outcome;
}

LITTLE_LOOPS_NAMESPACE_END

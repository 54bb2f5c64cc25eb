// little_loops — journal: per-loop JSONL event log and atomically written state file, for status/stop/resume/history
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::posix); fsm.hpp never includes it.
//
// Files, per loop NAME in a directory DIR (default `.loops/.running`); NAME is made
// file-system safe (characters other than [A-Za-z0-9._-] become `_`, a leading `.` gets a
// `_` in front; two loops whose names map to the same files — `a b` and `a_b` — cannot
// both use them: the readers see only the runs of the loop named in the record, and
// loop_journal::open() refuses the files of another loop, see journal_name_collision()):
//   DIR/NAME.state.json     journal_record, replaced atomically (temp file in DIR, fsync,
//                           rename, fsync DIR)
//   DIR/NAME.state.0.jsonl  journal_sync::background only: checkpoint logs, one
//   DIR/NAME.state.1.jsonl  journal_record per line, appended at every save (used in turn)
//   DIR/NAME.events.jsonl   one seed-002 event object per line (`{"event","ts",...}`),
//                           written by whole lines before every action starts and at every
//                           save (journal_sync::background: after the save's append)
//   DIR/NAME.stop           present = a stop was requested (request_stop())
//
// Durability (loop_journal::sync):
//   - every_save (default): every save writes the state file (temp file, fsync, rename,
//     fsync DIR) on the calling thread. After a crash of the process or of the machine the
//     state file holds the last saved record.
//   - background: a save appends the record as one line to a checkpoint log with a single
//     write() on the calling thread (no file created, renamed or synced), and hands it to a
//     background thread that writes the state file as above, coalescing the saves that
//     arrive while it is busy. A log that has grown past a limit is emptied and reused once
//     the state file durably holds a newer record, so the logs stay small. flush() waits
//     for the thread; the destructor flushes. Guarantees:
//       * crash of the process (kill -9, abort, OOM kill): nothing save() returned from is
//         lost — the line is in the kernel before save() returns, so a host that saves at
//         every state boundary before the next action starts loses at most the action in
//         flight (a save cut short leaves a torn last line, which readers skip);
//       * crash of the machine (power loss, kernel panic): the state file is whole (never
//         torn) and behind the last save by at most `sync_interval` (default 100 ms: the
//         thread writes the state file at most that often, the newest record each time)
//         plus one fsync round trip; resume re-runs those steps.
//     load_journal() reads the newest whole record of the state file and the two logs.
//   - none: the state file is replaced (temp file, rename) without fsync: atomic against a
//     crash of the process, not of the machine.

// The headers of journal/, one concern each:
//   files.hpp          where a loop's journal files are; write_file_atomic(), journal_process_alive()
//   status.hpp         journal_status, journal_status_for(), journal_resumable()
//   record.hpp         journal_record (the state file's record) and its JSON and text forms
//   reader.hpp         load_journal(), load_journal_summary(), list_journals(), read_journal_events()
//   writer.hpp         loop_journal (the writer), journal_sync, append_journal_event()
//   event_sink.hpp     journal_event_sink (an EventSink that writes the event log)
//   scope.hpp          a loop's scope paths: resolve_scope(), normalize_scope_path(), overlaps
//   scope_lock.hpp     scope claims of running loops: list_scope_claims(), find_scope_conflict()
//   stop_file.hpp      request_stop()
//   run_journaled.hpp  run_journaled(): an executor run with its record saved at every boundary

#include <little_loops/journal/event_sink.hpp>
#include <little_loops/journal/files.hpp>
#include <little_loops/journal/reader.hpp>
#include <little_loops/journal/record.hpp>
#include <little_loops/journal/run_journaled.hpp>
#include <little_loops/journal/scope.hpp>
#include <little_loops/journal/scope_lock.hpp>
#include <little_loops/journal/status.hpp>
#include <little_loops/journal/stop_file.hpp>
#include <little_loops/journal/writer.hpp>

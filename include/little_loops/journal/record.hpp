// little_loops — journal: journal_record, the record a loop's state file holds
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/events.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/snapshot.hpp>
#include <little_loops/journal/detail/record_members.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The state file: `{["seq",]"name","loop_name","status","pid","loop_path","started_at",
/// "updated_at","iteration","current_state"[,"accumulated_ms"],"extra","snapshot"[,"captured"]}`
/// (`loop_name`, `accumulated_ms` and the final `captured` are the original's LoopState keys).
/// Everything before `snapshot` is the record's head, which load_journal_summary() reads
/// without the snapshot and captured outputs after it.
struct journal_record {
  /// The loop's name: the journal's (loop_journal::save() fills it in when empty). The
  /// readers of a name return only records of that name.
  std::string name;
  std::string status;         ///< see journal_status
  long pid = 0;               ///< the process that owns (or owned) the run
  std::string loop_path;      ///< where the loop definition came from (for resume)
  std::string started_at;     ///< ISO 8601, kept across resumes
  std::string updated_at;     ///< ISO 8601, set by every save
  std::int64_t iteration = 0;
  std::string current_state;  ///< the state that runs next
  json snapshot;              ///< to_json(snapshot); null when there is nothing to resume
  /// The run's captured values once it has ended (run_journaled()'s final save; written
  /// only when not null): a finished run's snapshot is null, and the original's state file
  /// keeps them.
  json captured;
  json extra = json::object();  ///< host data (CLI options, overrides, ...)
  /// The save's number in this loop's journal, set by loop_journal::save(): increasing from
  /// save to save, across processes (a journal opened on existing files goes on from their
  /// newest), so readers tell the newest record by it, not by a clock that may step back.
  /// 0: not numbered (records of older versions and of the original; readers compare
  /// `updated_at` then). Written first in the record text (`{"seq":N,...`): cheap to find.
  /// (The last member, so that positional initialisation of the others is unchanged.)
  std::uint64_t seq = 0;

  /// True when the record says `running` but its process is gone (a crash or kill -9):
  /// set by the readers, which then report the status as `interrupted`.
  bool stale = false;

  /// The run's time so far in ms, across resumes (the original's `accumulated_ms`): set by
  /// loop_journal::save() from the snapshot saved (its `elapsed_ms`), and by a host's final
  /// save from the result's duration. nullopt: not known (records of older versions, whose
  /// head also lacks `extra`: read them whole for it).
  std::optional<std::int64_t> accumulated_ms;

  /// The record's JSON object (see the struct's comment for its members).
  [[nodiscard]] json to_json() const {
    detail::record_json_builder builder;
    detail::record_members(builder, *this);
    return builder.take();
  }

  /// The state file's text: to_json() on one line plus a newline, written without building
  /// a JSON object (the per-boundary cost of a save).
  [[nodiscard]] std::string to_text() const {
    return text_with([this](std::string& out) { detail::append_json_text(out, snapshot); });
  }
  /// The text of this record with `snap` as its snapshot (`snapshot` is not read): the
  /// same bytes as with `snapshot = to_json(snap)`, written straight from the typed snapshot.
  [[nodiscard]] std::string to_text(const little_loops::snapshot& snap) const {
    return text_with([&snap](std::string& out) { append_snapshot_json(out, snap); });
  }
  /// @copydoc to_text(const little_loops::snapshot&) const
  [[nodiscard]] std::string to_text(const little_loops::snapshot_view& snap) const {
    return text_with([&snap](std::string& out) { append_snapshot_json(out, snap); });
  }

  /// Reads a state file's JSON; `name` and `status` are required, the rest optional.
  /// The original's state file (its LoopState: `loop_name` instead of `name`, no pid, no
  /// snapshot) is read too: its `captured`, `prev_result`, `last_result` and
  /// `accumulated_ms` go to `extra["original"]`, from which a host can build a snapshot.
  static expected<journal_record, little_loops::error> from_json(const json& j) {
    if (!j.is_object())
      return unexpected(little_loops::error{errc::invalid_snapshot, "journal state is not a JSON object", ""});
    journal_record r;
    detail::record_json_reader reader(j);
    detail::record_members(reader, r);
    if (reader.failure()) return unexpected(std::move(*reader.failure()));
    if (reader.original()) {
      json kept = json::object();
      for (const char* key : {"captured", "prev_result", "last_result", "accumulated_ms"})
        if (const auto it = j.find(key); it != j.end()) kept[key] = *it;
      r.extra["original"] = std::move(kept);
    }
    return r;
  }

 private:
  template <class SnapshotText>
  [[nodiscard]] std::string text_with(SnapshotText snapshot_text) const {
    std::string text;
    // One allocation for a typical record (the fixed members plus a small snapshot).
    text.reserve(512 + name.size() + loop_path.size() + current_state.size());
    detail::record_text_writer<SnapshotText> writer(text, std::move(snapshot_text));
    detail::record_members(writer, *this);
    writer.finish();
    return text;
  }
};

/// The current UTC time as ISO 8601 (`2026-11-22T05:06:21.123456+00:00`).
inline std::string journal_now() { return format_timestamp(std::chrono::system_clock::now()); }

LITTLE_LOOPS_NAMESPACE_END

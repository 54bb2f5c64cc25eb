// little_loops — journal: reading a loop's journal (its newest record, the list of journals, the event log)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/journal/detail/record_files.hpp>
#include <little_loops/journal/files.hpp>
#include <little_loops/journal/record.hpp>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Reads the journal of `name` in `dir`: the newest (by `seq`, else `updated_at`) whole record of
/// `DIR/NAME.state.json` and the checkpoint logs of journal_sync::background. nullopt when
/// there is none, or when the files hold another loop's record (see
/// journal_name_collision()); errc::io_error / invalid_snapshot when the state file cannot be read and
/// no log has a record. A `running` record whose pid is dead comes back `interrupted` with
/// `stale` set (the files themselves are not changed).
inline expected<std::optional<journal_record>, little_loops::error> load_journal(
    const std::filesystem::path& dir, std::string_view name) {
  return detail::load_journal_record(dir, name, false);
}

/// load_journal() without the snapshot and the captured outputs (`snapshot` and `captured`
/// null): what a loop's status, owner and run settings need (is it running? which pid?
/// `extra`, `accumulated_ms`), read from the head of each record, so a finished run that
/// kept megabytes of captured output costs microseconds, not a parse of all of it. (Records
/// of older versions had `extra` after the snapshot: their summaries have it empty, and no
/// `accumulated_ms`.)
inline expected<std::optional<journal_record>, little_loops::error> load_journal_summary(
    const std::filesystem::path& dir, std::string_view name) {
  return detail::load_journal_record(dir, name, true);
}


/// The name of the loop whose record the journal files of `name` hold, when it is another
/// loop's: names are made file-system safe, so `a/b`, `a b` and `a_b` share the files
/// `a_b.*`. nullopt when the files hold no record or one of `name`.
inline std::optional<std::string> journal_name_collision(const std::filesystem::path& dir,
                                                         std::string_view name) {
  auto record = detail::load_journal_record(dir, name, true, false);
  if (!record || !record->has_value() || (*record)->name == name) return std::nullopt;
  return std::move((*record)->name);
}

/// Every readable journal in `dir`, sorted by file name. One that cannot be read (a
/// malformed state file) is left out of the list; its error is appended to `*skipped` when
/// given, so that a host can say so. `summaries`: each as load_journal_summary() reads it
/// (no snapshots, captured outputs or host data: a table of statuses).
inline std::vector<journal_record> list_journals(const std::filesystem::path& dir,
                                                 std::vector<little_loops::error>* skipped = nullptr,
                                                 bool summaries = false) {
  std::vector<std::string> stems;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    for (std::string_view suffix : {std::string_view(".state.json"), std::string_view(".state.0.jsonl"),
                                     std::string_view(".state.1.jsonl")})
      if (file.size() > suffix.size() && file[0] != '.' &&
          file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
        stems.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(stems.begin(), stems.end());
  stems.erase(std::unique(stems.begin(), stems.end()), stems.end());
  std::vector<journal_record> out;
  for (const auto& stem : stems) {
    auto r = detail::load_journal_record(dir, stem, summaries, false);
    if (r && r->has_value())
      out.push_back(std::move(**r));
    else if (!r && skipped != nullptr) {
      // Named by its state file (a record's field error has the field as its path; its
      // message names the file and the field).
      little_loops::error e = std::move(r.error());
      e.path = journal_paths_for(dir, stem).state.string();
      skipped->push_back(std::move(e));
    }
  }
  return out;
}

/// Lines of an event log that read_journal_events() passed over.
struct skipped_event_lines {
  std::size_t count = 0;                ///< non-empty lines that are not events
  std::vector<std::size_t> first_lines;  ///< 1-based numbers of the first (up to 5) of them
  std::size_t last_line = 0;            ///< 1-based number of the last of them
  /// The log ends in text with no newline: a write cut short, or one still in progress.
  bool torn_end = false;
  /// The log exists but could not be read (e.g. no permission): no events were read.
  std::optional<little_loops::error> unreadable;
};

/// The last `tail` events of a loop's log (all when `tail` is 0), oldest first. Lines that
/// are not events (JSON objects whose `event` is a string, and `ts` too when present), such
/// as a line cut by a crash or garbage, are skipped, and counted in `*skipped` when given;
/// a log that is not a regular file or cannot be opened reads as no events (with the reason
/// in `skipped->unreadable`). Memory is bounded by `tail`.
inline std::vector<json> read_journal_events(const std::filesystem::path& dir, std::string_view name,
                                             std::size_t tail = 0,
                                             skipped_event_lines* skipped = nullptr) {
  std::vector<json> out;
  auto fd = detail::open_journal_file(journal_paths_for(dir, name).events);
  if (!fd && skipped != nullptr) skipped->unreadable = std::move(fd.error());
  if (!fd || *fd < 0) return out;
  const auto is_event = [](const json& j) {
    if (!j.is_object()) return false;
    const auto event = j.find("event");
    const auto ts = j.find("ts");
    return event != j.end() && event->is_string() && (ts == j.end() || ts->is_string());
  };
  std::deque<json> kept;
  std::size_t line_no = 0;
  const std::size_t torn = detail::for_each_journal_line(*fd, [&](std::string_view line) {
    ++line_no;
    if (line.empty()) return;
    json j = line.front() == '{' ? detail::parse_journal_json(line) : json(json::value_t::discarded);
    if (j.is_discarded() || !is_event(j)) {
      if (skipped != nullptr) {
        if (skipped->count++ < 5) skipped->first_lines.push_back(line_no);
        skipped->last_line = line_no;
      }
      return;
    }
    kept.push_back(std::move(j));
    if (tail != 0 && kept.size() > tail) kept.pop_front();
  });
  if (skipped != nullptr) skipped->torn_end = torn != 0;
  out.reserve(kept.size());
  for (auto& j : kept) out.push_back(std::move(j));
  return out;
}

LITTLE_LOOPS_NAMESPACE_END

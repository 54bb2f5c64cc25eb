// little_loops — ll-loop: the on-disk record of runs (state file, event log, stop request)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ll_loop {

namespace ll = little_loops;
namespace fs = std::filesystem;

/// The default journal directory (relative to the cwd), as in the Python original.
inline constexpr const char* default_journal_dir = ".loops/.running";

/// `<dir>/<name>.state.json`: where a run is, and how to go on.
struct run_record {
  std::string name;            ///< the loop's name (the file stem)
  std::string status;          ///< running | completed | failed | interrupted |
                               ///< awaiting_continuation | max_iterations | timed_out | error
  long pid = 0;                ///< the ll-loop process that owns (or owned) the run
  std::string loop_path;       ///< absolute path of the loop file
  std::string started_at;
  std::string updated_at;
  std::int64_t iteration = 0;
  std::string current_state;
  ll::json snapshot;           ///< the executor snapshot (null when the run finished)
  ll::json extra = ll::json::object();  ///< ll-loop settings: context, max_iterations, no_llm,
                                        ///< terminated_by, error, continuation

  [[nodiscard]] ll::json to_json() const;
  static std::optional<run_record> from_json(const ll::json& j, std::string* why);
};

/// File names of a run's journal.
struct run_paths {
  fs::path state;   ///< `<dir>/<name>.state.json`
  fs::path events;  ///< `<dir>/<name>.events.jsonl`
  fs::path stop;    ///< `<dir>/<name>.stop` (a stop request)
};

/// The journal file names of `name` in `dir` (`name` is made file-system safe).
run_paths paths_of(const fs::path& dir, const std::string& name);

/// Writes the state file atomically (temp file, fsync, rename). Error: why.
std::optional<std::string> save_record(const fs::path& dir, const run_record& record);

/// Reads a state file; nullopt when absent (`why` empty) or unreadable (`why` set).
std::optional<run_record> load_record(const fs::path& dir, const std::string& name,
                                      std::string* why);

/// Every state file in `dir`, sorted by name.
std::vector<run_record> list_records(const fs::path& dir);

/// True when `pid` names a live process.
bool process_alive(long pid);

/// The event log of a run, opened for appending (or truncated for a fresh run).
class event_log {
 public:
  event_log() = default;
  event_log(const event_log&) = delete;
  event_log& operator=(const event_log&) = delete;
  ~event_log();

  /// Opens (creating the directory); `fresh` truncates. Error: why.
  std::optional<std::string> open(const fs::path& file, bool fresh);
  /// Appends one JSON line (written through to the kernel at once).
  void append(const ll::json& event) noexcept;
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string line_;
};

/// The events of a run (all, or the last `tail`). Unparsable lines are skipped.
std::vector<ll::json> read_events(const fs::path& file, std::size_t tail);

/// Current UTC time as ISO 8601 (`2026-11-22T05:06:21.123456+00:00`).
std::string now_iso();

}  // namespace ll_loop

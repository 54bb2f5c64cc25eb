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

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/events.hpp>
#include <little_loops/executor.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/snapshot.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Where journals live unless told otherwise (relative to the working directory).
inline constexpr std::string_view default_journal_dir = ".loops/.running";

/// The files of one loop's journal.
struct journal_paths {
  std::filesystem::path state;   ///< `DIR/NAME.state.json`
  std::filesystem::path events;  ///< `DIR/NAME.events.jsonl`
  std::filesystem::path stop;    ///< `DIR/NAME.stop`
  std::filesystem::path checkpoints[2];  ///< `DIR/NAME.state.0.jsonl`, `DIR/NAME.state.1.jsonl`
  std::filesystem::path lock;    ///< `DIR/NAME.lock`: flock()ed by the open journal's writer
};

/// How loop_journal::save() makes the state file survive a crash (see the file comment).
enum class journal_sync {
  every_save,  ///< temp file, fsync, rename, fsync of the directory, on the calling thread
  background,  ///< one append to a checkpoint log on the calling thread; a thread syncs
  none,        ///< temp file + rename: atomic against a crash of the process only
};

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

  [[nodiscard]] json to_json() const {
    json j = json::object();
    if (seq != 0) j["seq"] = seq;
    j["name"] = name;
    j["loop_name"] = name;
    j["status"] = status;
    j["pid"] = pid;
    j["loop_path"] = loop_path;
    j["started_at"] = started_at;
    j["updated_at"] = updated_at;
    j["iteration"] = iteration;
    j["current_state"] = current_state;
    if (accumulated_ms) j["accumulated_ms"] = *accumulated_ms;
    j["extra"] = extra;
    j["snapshot"] = snapshot;
    if (!captured.is_null()) j["captured"] = captured;
    return j;
  }

  /// The state file's text: to_json() on one line plus a newline, written without building
  /// a JSON object (the per-boundary cost of a save).
  [[nodiscard]] std::string to_text() const {
    std::string text = text_head();
    detail::append_json_text(text, snapshot);
    return text_tail(std::move(text));
  }
  /// The text of this record with `snap` as its snapshot (`snapshot` is not read): the
  /// same bytes as with `snapshot = to_json(snap)`, written straight from the typed snapshot.
  [[nodiscard]] std::string to_text(const little_loops::snapshot& snap) const {
    std::string text = text_head();
    append_snapshot_json(text, snap);
    return text_tail(std::move(text));
  }
  /// @copydoc to_text(const little_loops::snapshot&) const
  [[nodiscard]] std::string to_text(const little_loops::snapshot_view& snap) const {
    std::string text = text_head();
    append_snapshot_json(text, snap);
    return text_tail(std::move(text));
  }

 private:
  // to_text() is to_json().dump(-1, ' ', false, replace) + "\n": the members up to
  // "snapshot" (the head), then the snapshot, then the rest.
  [[nodiscard]] std::string text_head() const {
    using namespace std::string_view_literals;
    std::string text;
    // One allocation for a typical record (the fixed members plus a small snapshot).
    text.reserve(512 + name.size() + loop_path.size() + current_state.size());
    text += "{"sv;
    if (seq != 0) {
      text += "\"seq\":"sv;
      detail::append_json_integer(text, seq);
      text += ","sv;
    }
    text += "\"name\":"sv;
    detail::append_json_string(text, name);
    text += ",\"loop_name\":"sv;
    detail::append_json_string(text, name);
    text += ",\"status\":"sv;
    detail::append_json_string(text, status);
    text += ",\"pid\":"sv;
    detail::append_json_integer(text, pid);
    text += ",\"loop_path\":"sv;
    detail::append_json_string(text, loop_path);
    text += ",\"started_at\":"sv;
    detail::append_json_string(text, started_at);
    text += ",\"updated_at\":"sv;
    detail::append_json_string(text, updated_at);
    text += ",\"iteration\":"sv;
    detail::append_json_integer(text, iteration);
    text += ",\"current_state\":"sv;
    detail::append_json_string(text, current_state);
    if (accumulated_ms) {
      text += ",\"accumulated_ms\":"sv;
      detail::append_json_integer(text, *accumulated_ms);
    }
    text += ",\"extra\":"sv;
    detail::append_json_text(text, extra);
    text += ",\"snapshot\":"sv;
    return text;
  }
  [[nodiscard]] std::string text_tail(std::string text) const {
    using namespace std::string_view_literals;
    if (!captured.is_null()) {
      text += ",\"captured\":"sv;
      detail::append_json_text(text, captured);
    }
    text += "}\n"sv;
    return text;
  }

 public:
  /// Reads a state file's JSON; `name` and `status` are required, the rest optional.
  /// The original's state file (its LoopState: `loop_name` instead of `name`, no pid, no
  /// snapshot) is read too: its `captured`, `prev_result`, `last_result` and
  /// `accumulated_ms` go to `extra["original"]`, from which a host can build a snapshot.
  static expected<journal_record, little_loops::error> from_json(const json& j) {
    auto bad = [](std::string path, std::string message) {
      return unexpected(little_loops::error{errc::invalid_snapshot, std::move(message), std::move(path)});
    };
    if (!j.is_object()) return bad("", "journal state is not a JSON object");
    journal_record r;
    auto str = [&](const char* key, std::string& out, bool required) -> bool {
      const auto it = j.find(key);
      if (it == j.end() || it->is_null()) return !required;
      if (!it->is_string()) return false;
      out = it->get<std::string>();
      return true;
    };
    const bool original = !j.contains("name") && j.contains("loop_name");
    for (auto [key, field, required] :
         {std::tuple<const char*, std::string*, bool>{original ? "loop_name" : "name", &r.name, true},
          {"status", &r.status, true},
          {"loop_path", &r.loop_path, false},
          {"started_at", &r.started_at, false},
          {"updated_at", &r.updated_at, false},
          {"current_state", &r.current_state, false}})
      if (!str(key, *field, required)) return bad(key, std::string("expected a string at \"") + key + "\"");
    if (const auto it = j.find("pid"); it != j.end() && !it->is_null()) {
      if (!it->is_number_integer()) return bad("pid", "expected an integer at \"pid\"");
      r.pid = it->get<long>();
    }
    if (const auto it = j.find("seq"); it != j.end() && it->is_number_unsigned())
      r.seq = it->get<std::uint64_t>();
    if (const auto it = j.find("iteration"); it != j.end() && !it->is_null()) {
      if (!it->is_number_integer()) return bad("iteration", "expected an integer at \"iteration\"");
      r.iteration = it->get<std::int64_t>();
    }
    // (The original's own `accumulated_ms` goes to extra["original"] with its other keys.)
    if (const auto it = j.find("accumulated_ms"); !original && it != j.end() && !it->is_null()) {
      if (!it->is_number_integer())
        return bad("accumulated_ms", "expected an integer at \"accumulated_ms\"");
      r.accumulated_ms = it->get<std::int64_t>();
    }
    if (const auto it = j.find("snapshot"); it != j.end()) r.snapshot = *it;
    if (const auto it = j.find("captured"); it != j.end() && it->is_object()) r.captured = *it;
    if (const auto it = j.find("extra"); it != j.end() && it->is_object()) r.extra = *it;
    if (original) {
      json kept = json::object();
      for (const char* key : {"captured", "prev_result", "last_result", "accumulated_ms"})
        if (const auto it = j.find(key); it != j.end()) kept[key] = *it;
      r.extra["original"] = std::move(kept);
    }
    return r;
  }
};

/// The current UTC time as ISO 8601 (`2026-11-22T05:06:21.123456+00:00`).
inline std::string journal_now() { return format_timestamp(std::chrono::system_clock::now()); }

namespace detail {

inline std::string journal_safe_name(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 1);
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
  return out;
}

inline little_loops::error journal_io_error(const std::filesystem::path& path, std::string what, int err) {
  return little_loops::error{errc::io_error, what + ": " + std::strerror(err), path.string()};
}

inline bool write_all(int fd, const char* data, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

/// open() with close-on-exec, never on a standard descriptor: in a host that closed
/// stdout (`prog >&-`), a journal file opened as descriptor 1 would receive everything the
/// host prints. -1 with errno set on failure.
inline int open_cloexec(const char* path, int flags, mode_t mode = 0644) noexcept {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0 && fd <= 2) {
    const int lifted = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    const int err = errno;
    ::close(fd);
    errno = err;
    fd = lifted;
  }
  return fd;
}

/// Opens a journal file that is written by appending (the event log, a checkpoint log):
/// never through a symbolic link (a link shipped in a repository would have its target
/// overwritten), never a FIFO or device (O_NONBLOCK: opening one must not wait) and never a
/// file with other names (a hard link: the other name would change too). `truncate` empties
/// it, after those checks. -1 with errno set on failure: ELOOP for a symbolic link, EINVAL
/// for a file that is not a regular one with one name (see journal_append_error()).
inline int open_journal_for_append(const std::filesystem::path& path, bool truncate) noexcept {
  const int fd = open_cloexec(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  if (truncate && st.st_size != 0 && ::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

/// The error of a failed open_journal_for_append() of `path` (errno as it left it).
inline little_loops::error journal_append_error(const std::filesystem::path& path, const char* what) {
  const int err = errno;
  if (err == ELOOP)
    return little_loops::error{errc::io_error, fmt::format("cannot open {}: it is a symbolic link", what),
                               path.string()};
  if (err == EINVAL)
    return little_loops::error{
        errc::io_error, fmt::format("cannot open {}: it is not a regular file with one name", what),
        path.string()};
  return journal_io_error(path, fmt::format("cannot open {}", what), err);
}

}  // namespace detail

/// The journal files of `name` in `dir`.
inline journal_paths journal_paths_for(const std::filesystem::path& dir, std::string_view name) {
  const std::string safe = detail::journal_safe_name(name);
  return journal_paths{dir / (safe + ".state.json"), dir / (safe + ".events.jsonl"),
                       dir / (safe + ".stop"),
                       {dir / (safe + ".state.0.jsonl"), dir / (safe + ".state.1.jsonl")},
                       dir / (safe + ".lock")};
}

/// Replaces `path` with `content` atomically: a reader sees the old file or the new one,
/// never a partial one. Writes a temp file in the same directory (`.NAME.tmp.PID.N`), then
/// (when `durable`) fsyncs it, renames it over `path` and fsyncs the directory, so after a
/// crash of the process or the machine the file is whole.
inline expected<void, little_loops::error> write_file_atomic(const std::filesystem::path& path,
                                                             std::string_view content,
                                                             bool durable = true) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::filesystem::path tmp =
      dir / fmt::format(".{}.tmp.{}.{}", path.filename().string(), ::getpid(),
                        counter.fetch_add(1));
  const int fd = detail::open_cloexec(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL);
  if (fd < 0) return unexpected(detail::journal_io_error(tmp, "cannot create temp file", errno));
  bool ok = detail::write_all(fd, content.data(), content.size());
  int err = ok ? 0 : errno;
  if (ok && durable && ::fsync(fd) != 0) {
    ok = false;
    err = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return unexpected(detail::journal_io_error(path, "cannot write file", err));
  }
  if (durable) {
    const int dfd = detail::open_cloexec(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
  return {};
}

namespace detail {

/// Seconds since the epoch of a journal timestamp (journal_now(): ISO 8601 in UTC,
/// `2026-11-24T08:28:15.437460+00:00`), to the second; nullopt for anything else.
inline std::optional<double> journal_epoch_seconds(std::string_view ts) noexcept {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (ts.size() < 19 || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' ||
      ts[16] != ':')
    return std::nullopt;
  const auto number = [&](std::size_t at, std::size_t len, int& out) {
    out = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (ts[i] < '0' || ts[i] > '9') return false;
      out = out * 10 + (ts[i] - '0');
    }
    return true;
  };
  if (!number(0, 4, y) || !number(5, 2, mo) || !number(8, 2, d) || !number(11, 2, h) ||
      !number(14, 2, mi) || !number(17, 2, sec))
    return std::nullopt;
  using namespace std::chrono;
  const year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  const auto days_since_epoch = sys_days(date).time_since_epoch().count();
  return static_cast<double>(static_cast<long long>(days_since_epoch) * 86400 + h * 3600 + mi * 60 + sec);
}

/// What /proc says of a live process: zombie (exited, not reaped: gone for us) and when it
/// started, in seconds since the epoch (to the second). nullopt where /proc cannot be read.
struct process_facts {
  bool zombie = false;
  std::optional<double> started;
};

inline std::optional<process_facts> read_process_facts(long pid) noexcept {
#if defined(__linux__)
  try {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) return std::nullopt;
    const auto close = line.rfind(')');  // the command may hold spaces and parentheses
    if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
    process_facts facts;
    facts.zombie = line[close + 2] == 'Z';  // field 3: the state
    // Field 22: the start time, in clock ticks since boot.
    std::size_t at = close + 1;
    for (int field = 3; field < 22 && at != std::string::npos; ++field) at = line.find(' ', at + 1);
    if (at == std::string::npos) return facts;
    const unsigned long long ticks = std::strtoull(line.c_str() + at + 1, nullptr, 10);
    std::ifstream boot("/proc/stat");
    unsigned long long btime = 0;
    for (std::string entry; std::getline(boot, entry);)
      if (entry.rfind("btime ", 0) == 0) btime = std::strtoull(entry.c_str() + 6, nullptr, 10);
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (btime != 0 && hz > 0)
      facts.started = static_cast<double>(btime) + static_cast<double>(ticks) / static_cast<double>(hz);
    return facts;
  } catch (...) {
    return std::nullopt;
  }
#else
  (void)pid;
  return std::nullopt;
#endif
}

}  // namespace detail

/// True when `pid` names a live process (EPERM counts as alive) that is not a zombie (an
/// exited child its parent has not reaped is gone for us). With `last_seen` (the journal
/// timestamp of a record that process wrote), a process that started after it is another
/// one that was given the same pid (after a crash or a reboot): not alive. A pid outside
/// pid_t's range (a corrupted record) is never alive, so never signalled.
inline bool journal_process_alive(long pid, std::string_view last_seen = {}) noexcept {
  if (pid <= 0 || pid > static_cast<long>(std::numeric_limits<pid_t>::max())) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  const auto facts = detail::read_process_facts(pid);
  if (!facts) return true;  // no /proc: what kill() says
  if (facts->zombie) return false;
  const auto seen = last_seen.empty() ? std::nullopt : detail::journal_epoch_seconds(last_seen);
  // Two seconds of slack: boot time is known to the second.
  return !seen || !facts->started || *facts->started <= *seen + 2.0;
}

/// Journal files larger than this are refused as corrupted (a state file holds at most a few
/// capped outputs).
inline constexpr std::uintmax_t max_journal_file_bytes = std::uintmax_t{1} << 30;

namespace detail {

/// Opens a journal file for reading: -1 with errno ENOENT when it does not exist; an error
/// when it is not a regular file (a FIFO would block, a directory or a device never ends)
/// or is over max_journal_file_bytes.
inline expected<int, little_loops::error> open_journal_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    return unexpected(journal_io_error(path, "cannot open", errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uintmax_t>(st.st_size) > max_journal_file_bytes) {
    const bool regular = S_ISREG(st.st_mode);
    ::close(fd);
    return unexpected(little_loops::error{
        errc::io_error, regular ? "journal file is too large" : "not a regular file", path.string()});
  }
  return fd;
}

/// Calls `chunk(const char*, std::size_t)` for each block read from an open journal file
/// to its end (or a read error), then closes it.
template <class Chunk>
void read_journal_chunks(int fd, Chunk&& chunk) {
  char block[65536];
  for (;;) {
    const ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    chunk(static_cast<const char*>(block), static_cast<std::size_t>(n));
  }
  ::close(fd);
}

/// Calls `line(std::string_view)` for every newline-terminated line of an open journal
/// file, then closes it; the text after the last newline (a torn write) is not a line: its
/// length is returned.
template <class Line>
std::size_t for_each_journal_line(int fd, Line&& line) {
  std::string pending;
  read_journal_chunks(fd, [&](const char* data, std::size_t n) {
    std::size_t begin = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (data[i] != '\n') continue;
      if (pending.empty()) {
        line(std::string_view(data + begin, i - begin));
      } else {
        pending.append(data + begin, i - begin);
        line(std::string_view(pending));
        pending.clear();
      }
      begin = i + 1;
    }
    pending.append(data + begin, n - begin);
  });
  return pending.size();
}

/// The whole text of an open journal file (closed after).
inline std::string read_journal_text(int fd) {
  std::string text;
  read_journal_chunks(fd, [&](const char* data, std::size_t n) { text.append(data, n); });
  return text;
}

/// A journal line or file as JSON: nesting is bounded (a deeply nested corrupted file is
/// refused, not a stack overflow). Discarded (is_discarded()) when it is not JSON.
inline json parse_journal_json(std::string_view text) {
  auto parsed = parse_json_text(text);
  if (!parsed) return json(json::value_t::discarded);
  return std::move(*parsed);
}

/// Reads and parses one state file: nullopt when it does not exist.
inline expected<std::optional<journal_record>, little_loops::error> read_journal_file(
    const std::filesystem::path& path) {
  auto fd = open_journal_file(path);
  if (!fd) return unexpected(std::move(fd.error()));
  if (*fd < 0) return std::optional<journal_record>{};
  const json j = parse_journal_json(read_journal_text(*fd));
  if (j.is_discarded())
    return unexpected(little_loops::error{errc::invalid_snapshot, "journal state is not valid JSON",
                                          path.string()});
  auto record = journal_record::from_json(j);
  if (!record) {
    little_loops::error e = std::move(record.error());
    e.message = path.string() + ": " + e.message;
    return unexpected(std::move(e));
  }
  return std::optional<journal_record>(std::move(*record));
}

}  // namespace detail

namespace detail {

/// The `seq` a state file's record starts with (`{"seq":N,`), read from its first bytes; 0
/// when it has none or cannot be read.
inline std::uint64_t record_seq_prefix(const std::filesystem::path& path) {
  auto fd = open_journal_file(path);
  if (!fd || *fd < 0) return 0;
  char head[40];
  ssize_t n;
  do {
    n = ::read(*fd, head, sizeof head);
  } while (n < 0 && errno == EINTR);
  ::close(*fd);
  constexpr std::string_view key = "{\"seq\":";
  if (n <= static_cast<ssize_t>(key.size()) || std::string_view(head, key.size()) != key) return 0;
  std::uint64_t value = 0;
  for (ssize_t i = static_cast<ssize_t>(key.size()); i < n; ++i) {
    const char c = head[i];
    if (c == ',') return value;
    if (c < '0' || c > '9' || value > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return 0;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return 0;
}

/// Collects the members of a record's top-level object that come before `snapshot` (in
/// the records this journal writes: every field but the snapshot and the final captured
/// values, `extra` included), then stops the parse, so the snapshot and the captured
/// outputs — megabytes, after a big capture — are neither read into JSON nor copied.
class record_head_reader final : public nlohmann::json_sax<json> {
 public:
  json head = json::object();
  bool reached_snapshot = false;

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
  bool string(string_t& v) override { return value(json(std::move(v))); }
  bool binary(binary_t&) override { return value(json(nullptr)); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (open_.empty()) {
      if (k == "snapshot") {
        reached_snapshot = true;
        return false;  // the head is complete
      }
      key_ = std::move(k);
    } else {
      keys_.back() = std::move(k);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  // The record's own object is `head`; the values inside its members are built in `open_`
  // (with the key each object of it is at), innermost last.
  bool open(json container) {
    if (!started_) {
      started_ = true;
      return container.is_object();  // a record is an object
    }
    if (open_.size() >= 256) return false;  // a head is never this deep: read it whole
    open_.push_back(std::move(container));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    if (open_.empty()) return true;  // the record's end (after a head without snapshot)
    json done = std::move(open_.back());
    open_.pop_back();
    keys_.pop_back();
    return value(std::move(done));
  }
  bool value(json v) {
    if (open_.empty()) {
      head[key_] = std::move(v);
    } else if (json& into = open_.back(); into.is_array()) {
      into.push_back(std::move(v));
    } else {
      into[keys_.back()] = std::move(v);
    }
    return true;
  }
  bool started_ = false;
  std::vector<json> open_;
  std::vector<std::string> keys_;
  std::string key_;
};

/// A record from its head (record_head_reader) when the text has one; nullopt otherwise
/// (not a record this journal wrote, or not JSON).
inline std::optional<journal_record> record_from_head(std::string_view text) {
  record_head_reader reader;
  (void)json::sax_parse(text, &reader, nlohmann::detail::input_format_t::json, false);
  if (!reader.reached_snapshot) return std::nullopt;
  auto record = journal_record::from_json(reader.head);
  if (!record) return std::nullopt;
  return std::move(*record);
}

/// The newest whole record of a checkpoint log: the last line that parses (a torn or
/// garbage tail is skipped). nullopt when there is none. `head_only`: the record without
/// its snapshot, captured outputs and host data (see record_head_reader).
inline std::optional<journal_record> last_checkpoint(const std::filesystem::path& path,
                                                     bool head_only = false) {
  auto fd = open_journal_file(path);
  if (!fd || *fd < 0) return std::nullopt;
  const std::string text = read_journal_text(*fd);
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t nl = end >= 2 ? text.rfind('\n', end - 2) : std::string::npos;
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    const std::string_view line(text.data() + begin, end - begin);
    if (!line.empty() && line.back() == '\n') {
      // (A line is whole when it ends in a newline: its head is as good as the record.)
      if (head_only)
        if (auto record = record_from_head(line)) return record;
      const json j = parse_journal_json(line);
      if (!j.is_discarded()) {
        if (auto record = journal_record::from_json(j)) return std::move(*record);
      }
    }
    end = begin;
  }
  return std::nullopt;
}

/// A state file's record without its snapshot, captured outputs and host data, read from
/// the head of the file (64 KiB at a time, until `snapshot` is reached); a file whose record
/// has no such head (the original's, or an older layout) is read whole.
inline expected<std::optional<journal_record>, little_loops::error> read_journal_head(
    const std::filesystem::path& path) {
  auto fd = open_journal_file(path);
  if (!fd) return unexpected(std::move(fd.error()));
  if (*fd < 0) return std::optional<journal_record>{};
  std::string text;
  char block[65536];
  for (;;) {
    const ssize_t n = ::read(*fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(block, static_cast<std::size_t>(n));
    if (text.size() > (std::size_t{1} << 20)) break;  // a head is never this long: read it whole
    if (auto record = record_from_head(text)) {
      ::close(*fd);
      return std::optional<journal_record>(std::move(*record));
    }
  }
  ::close(*fd);
  return read_journal_file(path);
}

// `exact`: a record whose name is not `name` (another loop's, whose name maps to the same
// files) is none; false reads the files of `name` whoever they belong to (list_journals
// passes file stems).
inline expected<std::optional<journal_record>, little_loops::error> load_journal_record(
    const std::filesystem::path& dir, std::string_view name, bool head_only, bool exact = true) {
  const auto paths = journal_paths_for(dir, name);
  auto primary = head_only ? detail::read_journal_head(paths.state) : detail::read_journal_file(paths.state);
  std::optional<journal_record> chosen;
  if (primary && primary->has_value()) chosen = std::move(**primary);
  // Numbered records (seq) are ordered by number; others by `updated_at`. Every record of
  // the state file was appended to a log first, so on a tie (two saves in the same
  // microsecond) the log's record is at least as new.
  for (const auto& log : paths.checkpoints)
    if (auto record = detail::last_checkpoint(log, head_only);
        record && (!chosen || (record->seq != 0 && chosen->seq != 0
                                   ? record->seq >= chosen->seq
                                   : record->updated_at >= chosen->updated_at)))
      chosen = std::move(*record);
  if (!chosen) {
    if (!primary) return unexpected(std::move(primary.error()));
    return std::optional<journal_record>{};
  }
  if (exact && chosen->name != name) return std::optional<journal_record>{};
  // (A record without a pid, as the original writes, cannot be checked: it stays running.)
  if (chosen->status == journal_status::running && chosen->pid > 0 &&
      !journal_process_alive(chosen->pid, chosen->updated_at)) {
    chosen->status = std::string(journal_status::interrupted);
    chosen->stale = true;
  }
  return chosen;
}

}  // namespace detail

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
};

/// The last `tail` events of a loop's log (all when `tail` is 0), oldest first. Lines that
/// are not events (JSON objects whose `event` is a string, and `ts` too when present), such
/// as a line cut by a crash or garbage, are skipped, and counted in `*skipped` when given;
/// a log that is not a regular file reads as no events. Memory is bounded by `tail`.
inline std::vector<json> read_journal_events(const std::filesystem::path& dir, std::string_view name,
                                             std::size_t tail = 0,
                                             skipped_event_lines* skipped = nullptr) {
  std::vector<json> out;
  auto fd = detail::open_journal_file(journal_paths_for(dir, name).events);
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

// ---------------------------------------------------------------------------------------
// Scope claims: which paths running loops work on (a loop's `scope:`), so that two loops
// whose scopes overlap do not run at once — the original's LockManager, in the same files.
// A run's claim is written into its journal's `NAME.lock` (the file loop_journal holds an
// flock() on while it is open) as `{"loop_name","scope","pid","started_at"}`; an empty
// scope claims the working directory (the whole project). Claims are made one at a time
// under an flock() of `DIR/.acquire.lock`, so two loops started together cannot both
// claim overlapping paths. A claim is released (the file emptied) when the journal closes;
// the claim of a process that is gone (journal_process_alive() with its `started_at`) is
// stale and ignored. Lock files are never removed: a run may be about to lock one.

/// A running loop's claim (see above).
struct scope_claim {
  std::string loop_name;
  std::vector<std::string> scope;  ///< absolute, normalised paths
  long pid = 0;
  std::string started_at;
  std::filesystem::path file;  ///< the lock file it was read from
};

/// The scope entries with every `${context.KEY}` replaced by the text of the context's
/// top-level value KEY (the text a template gives it); an unknown KEY is left as written
/// (the original's resolve_scope).
inline std::vector<std::string> resolve_scope(const std::vector<std::string>& scope,
                                              const json& context) {
  std::vector<std::string> out;
  out.reserve(scope.size());
  constexpr std::string_view open = "${context.";
  for (const std::string& entry : scope) {
    std::string text;
    std::size_t at = 0;
    for (;;) {
      const std::size_t start = entry.find(open, at);
      const std::size_t close = start == std::string::npos ? start : entry.find('}', start + open.size());
      if (start == std::string::npos || close == std::string::npos) {
        text.append(entry, at, std::string::npos);
        break;
      }
      const std::string key = entry.substr(start + open.size(), close - start - open.size());
      text.append(entry, at, start - at);
      const auto it = context.is_object() && !key.empty() ? context.find(key) : context.end();
      if (it != context.end())
        detail::append_json_value(text, *it);
      else
        text.append(entry, start, close + 1 - start);
      at = close + 1;
    }
    out.push_back(std::move(text));
  }
  return out;
}

/// `path` made absolute (against the working directory), with the symlinks of the part
/// that exists resolved and `.`/`..` removed, without a trailing `/` (Python's
/// `Path.resolve()`, not strict). An empty path is the working directory.
inline std::string normalize_scope_path(std::string_view path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(path.empty() ? std::string_view(".") : path), ec);
  if (ec) p = fs::path(path);
  fs::path resolved = fs::weakly_canonical(p, ec);
  if (ec) resolved = p.lexically_normal();
  std::string out = resolved.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

/// True when two normalised paths are the same or one contains the other (whole path
/// components: `/a/b` contains `/a/b/c`, not `/a/bc`).
inline bool scope_paths_overlap(std::string_view a, std::string_view b) noexcept {
  if (a.size() > b.size()) std::swap(a, b);
  if (b.compare(0, a.size(), a) != 0) return false;
  return a.size() == b.size() || a == "/" || b[a.size()] == '/';
}

/// True when some path of `a` overlaps some path of `b` (scope_paths_overlap()).
inline bool scopes_overlap(const std::vector<std::string>& a, const std::vector<std::string>& b) noexcept {
  for (const auto& x : a)
    for (const auto& y : b)
      if (scope_paths_overlap(x, y)) return true;
  return false;
}

namespace detail {

/// Claims larger than this are refused when made and skipped when read.
inline constexpr std::size_t max_scope_claim_bytes = std::size_t{1} << 20;

/// True when `path` names the open file `fd` (same device and inode).
inline bool names_open_file(const std::filesystem::path& path, int fd) noexcept {
  struct stat by_path {}, by_fd {};
  return ::stat(path.c_str(), &by_path) == 0 && ::fstat(fd, &by_fd) == 0 &&
         by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino;
}

/// A lock file's claim; nullopt when the file is empty (no claim, or a run that has not
/// claimed yet), unreadable, too large, or not a claim.
inline std::optional<scope_claim> read_scope_claim(const std::filesystem::path& file) {
  auto fd = open_journal_file(file);
  if (!fd || *fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(*fd, &st) != 0 || st.st_size == 0 ||
      static_cast<std::size_t>(st.st_size) > max_scope_claim_bytes) {
    ::close(*fd);
    return std::nullopt;
  }
  const json j = parse_journal_json(read_journal_text(*fd));
  if (!j.is_object()) return std::nullopt;
  const auto name = j.find("loop_name");
  const auto pid = j.find("pid");
  const auto scope = j.find("scope");
  if (name == j.end() || !name->is_string() || pid == j.end() || !pid->is_number_integer() ||
      scope == j.end())
    return std::nullopt;
  scope_claim claim;
  claim.loop_name = name->get<std::string>();
  claim.pid = pid->get<long>();
  if (scope->is_string()) {
    claim.scope.push_back(normalize_scope_path(scope->get<std::string>()));
  } else if (scope->is_array()) {
    for (const auto& p : *scope)
      if (p.is_string()) claim.scope.push_back(normalize_scope_path(p.get<std::string>()));
  } else {
    return std::nullopt;
  }
  if (const auto at = j.find("started_at"); at != j.end() && at->is_string())
    claim.started_at = at->get<std::string>();
  claim.file = file;
  return claim;
}

}  // namespace detail

/// The claims of the live runs in `dir` (stale claims and files that hold none are
/// skipped), except the one in `except` (a run's own lock file), in file-name order.
inline std::vector<scope_claim> list_scope_claims(const std::filesystem::path& dir,
                                                  const std::filesystem::path& except = {}) {
  std::vector<scope_claim> out;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    const std::string name = p.filename().string();
    if (name.empty() || name.front() == '.' || p.extension() != ".lock") continue;
    if (!except.empty() && p.filename() == except.filename()) continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  for (const auto& p : files)
    if (auto claim = detail::read_scope_claim(p); claim && journal_process_alive(claim->pid, claim->started_at))
      out.push_back(std::move(*claim));
  return out;
}

/// The first live claim in `dir` (except `except`'s) that overlaps `scope` (normalised
/// paths; see normalize_scope_path()).
inline std::optional<scope_claim> find_scope_conflict(const std::filesystem::path& dir,
                                                      const std::vector<std::string>& scope,
                                                      const std::filesystem::path& except = {}) {
  for (auto& claim : list_scope_claims(dir, except))
    if (scopes_overlap(scope, claim.scope)) return std::move(claim);
  return std::nullopt;
}

/// Appends one event line to the event log of `name` in `dir` with a single write(), for a
/// process that does not hold the loop's journal (e.g. after loop_journal::close(), about
/// what happened next). A line is never torn by other appenders (O_APPEND).
inline expected<void, little_loops::error> append_journal_event(const std::filesystem::path& dir,
                                                                std::string_view name, const json& event) {
  const auto path = journal_paths_for(dir, name).events;
  const int fd = detail::open_cloexec(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW);
  if (fd < 0) return unexpected(detail::journal_io_error(path, "cannot open event log", errno));
  const std::string line = event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const bool ok = detail::write_all(fd, line.data(), line.size());
  const int err = errno;
  ::close(fd);
  if (!ok) return unexpected(detail::journal_io_error(path, "cannot write event log", err));
  return {};
}

namespace detail {

/// The background half of journal_sync::background: writes the latest record to the state
/// file durably (after fdatasync of the event log), coalescing records that arrive while
/// it is busy or waiting out `interval` (a record is taken at least `interval` after the
/// previous one was; flush() and the destructor do not wait for it).
class journal_syncer {
 public:
  using clock = std::chrono::steady_clock;
  journal_syncer(std::filesystem::path target, int events_fd, clock::duration interval)
      : target_(std::move(target)),
        events_fd_(events_fd >= 0 ? ::fcntl(events_fd, F_DUPFD_CLOEXEC, 3) : -1),  // 3: see open_cloexec
        interval_(interval),
        thread_([this] { loop(); }) {}
  journal_syncer(const journal_syncer&) = delete;
  journal_syncer& operator=(const journal_syncer&) = delete;
  ~journal_syncer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();  // the loop writes the last submitted record before it returns
    if (events_fd_ >= 0) ::close(events_fd_);
  }

  /// Queues record number `seq` (replacing a queued one the thread has not started on).
  void submit(std::string text, std::uint64_t seq) {
    bool asleep = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ = std::move(text);
      submitted_ = seq;
      asleep = asleep_;
    }
    // A busy thread, or one waiting out the interval, takes the newest record when it is
    // done: no wake-up (a futex call on the loop's path between two actions) is needed.
    if (asleep) wake_.notify_one();
  }

  /// The newest record number the state file durably holds (0: none yet).
  [[nodiscard]] std::uint64_t durable() const noexcept { return durable_.load(std::memory_order_acquire); }

  /// Waits until everything submitted so far is written; returns (and clears) the last
  /// failure of the background writes.
  expected<void, little_loops::error> flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (finished_ != submitted_) {
      ++flushing_;  // no waiting out the interval now
      wake_.notify_one();
      done_.wait(lock, [&] { return finished_ == submitted_; });
      --flushing_;
    }
    if (failure_) {
      little_loops::error e = std::move(*failure_);
      failure_.reset();
      return unexpected(std::move(e));
    }
    return {};
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    clock::time_point next_take{};
    for (;;) {
      // Within the interval since the last write, the thread waits it out whether or not a
      // record is pending: records that arrive meanwhile need no wake-up, and a fast loop
      // costs one (timer) wake-up per interval. Past it, with nothing pending, it sleeps
      // until a save wakes it.
      if (!stopping_ && flushing_ == 0 && clock::now() < next_take) {
        wake_.wait_until(lock, next_take);
        continue;
      }
      if (taken_ == submitted_) {
        if (stopping_) return;
        asleep_ = true;
        wake_.wait(lock);
        asleep_ = false;
        continue;
      }
      next_take = clock::now() + interval_;
      std::string text = std::move(pending_);
      pending_.clear();
      const std::uint64_t seq = submitted_;
      taken_ = seq;
      lock.unlock();
      // The event log first, so that the durable state never runs ahead of the history.
      if (events_fd_ >= 0) ::fdatasync(events_fd_);
      auto written = write_file_atomic(target_, text, true);
      if (written) durable_.store(seq, std::memory_order_release);
      lock.lock();
      if (!written) failure_ = std::move(written.error());
      finished_ = seq;
      done_.notify_all();
    }
  }

  std::filesystem::path target_;
  int events_fd_;
  clock::duration interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::string pending_;
  std::uint64_t submitted_ = 0;  // the newest record submitted
  std::uint64_t taken_ = 0;      // the newest record the thread has started on
  std::uint64_t finished_ = 0;   // the newest record written (or failed)
  std::atomic<std::uint64_t> durable_{0};
  std::optional<little_loops::error> failure_;
  bool stopping_ = false;
  int flushing_ = 0;     // callers waiting in flush()
  bool asleep_ = false;  // the thread waits on wake_ for a record (guarded by mutex_)
  std::thread thread_;  // last: started once every other member is ready
};

}  // namespace detail

/// The writer side of one loop's journal.
class loop_journal {
 public:
  /// A journal for loop `name` in `dir` (nothing is touched until open()).
  explicit loop_journal(std::filesystem::path dir = std::filesystem::path(default_journal_dir),
                        std::string name = {})
      : dir_(std::move(dir)), name_(std::move(name)), paths_(journal_paths_for(dir_, name_)) {}
  loop_journal(const loop_journal&) = delete;
  loop_journal& operator=(const loop_journal&) = delete;
  loop_journal(loop_journal&& other) noexcept
      : sync(other.sync),
        checkpoint_log_limit(other.checkpoint_log_limit),
        sync_interval(other.sync_interval),
        dir_(std::move(other.dir_)),
        name_(std::move(other.name_)),
        paths_(std::move(other.paths_)),
        events_fd_(std::exchange(other.events_fd_, -1)),
        lock_fd_(std::exchange(other.lock_fd_, -1)),
        scope_claimed_(std::exchange(other.scope_claimed_, false)),
        pending_events_(std::move(other.pending_events_)),
        logs_(std::exchange(other.logs_, std::array<int, 2>{-1, -1})),
        log_info_(other.log_info_),
        current_log_(other.current_log_),
        seq_(other.seq_),
        save_number_(other.save_number_),
        defer_next_sync_(other.defer_next_sync_),
        deferred_(std::move(other.deferred_)),
        submit_after_events_(other.submit_after_events_),
        deferred_failure_(std::move(other.deferred_failure_)),
        syncer_(std::move(other.syncer_)) {}
  loop_journal& operator=(loop_journal&&) = delete;
  /// Writes buffered events and waits for the background thread (journal_sync::background).
  ~loop_journal() { (void)close(); }

  /// Writes buffered events, waits for the background thread, closes the files and drops
  /// the scope claim and the lock (another process may open this loop's journal from then
  /// on, e.g. a session started to resume it). Returns flush()'s result. The journal can be
  /// opened again.
  expected<void, little_loops::error> close() noexcept {
    expected<void, little_loops::error> flushed;
    try {
      flushed = flush();
    } catch (...) {
      flushed = unexpected(little_loops::error{errc::io_error, "cannot flush the journal", paths_.state.string()});
    }
    syncer_.reset();
    close_logs();
    if (events_fd_ >= 0) ::close(events_fd_);
    events_fd_ = -1;
    release_scope();
    if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
    lock_fd_ = -1;
    return flushed;
  }

  /// How save() makes the state file survive a crash; see journal_sync and the file
  /// comment. every_save (default) fsyncs on every save; background appends to a log and
  /// syncs on a thread; none never fsyncs.
  journal_sync sync = journal_sync::every_save;

  /// journal_sync::background: a checkpoint log longer than this many bytes is emptied and
  /// the other one used, once the state file durably holds a newer record.
  std::size_t checkpoint_log_limit = std::size_t{1} << 20;

  /// journal_sync::background: the thread writes the state file at most once per interval
  /// (the newest record each time), so fast loops do not pay a state-file write and fsync
  /// per step; a step that comes after a quiet interval is written at once. flush() and
  /// a save with every_save do not wait for it. Set before the first background save.
  /// 100 ms: on a disk, each write costs three fsyncs, and at 20 ms (50 times a second in a
  /// loop of fast steps) they slowed such a loop by about 2 % more (bench_adapters,
  /// BM_step_overhead_paired); a step longer than the interval is still written at once.
  std::chrono::milliseconds sync_interval{100};

  /// Creates the directory and opens the event log for appending. `fresh` starts a new run:
  /// the event log is truncated and checkpoint logs of an earlier run are removed;
  /// otherwise (resume) the log is appended to, after terminating a line a crash cut short.
  /// Either way a leftover stop request is removed. After a fresh open, the first
  /// journal_sync::background save is appended to the log but handed to the background
  /// thread only with the next save or flush(): a record saying that nothing has run yet is
  /// not worth an fsync, which would only compete with the start of the first action.
  expected<void, little_loops::error> open(bool fresh) {
    flush_events();
    syncer_.reset();  // it holds a descriptor of the old log
    close_logs();
    const bool had_lock = lock_fd_ >= 0;
    if (auto locked = take_lock(); !locked) return locked;
    // A refused open lets the lock go again, unless it was held before (a scope claim).
    const auto refuse = [&](little_loops::error e) -> expected<void, little_loops::error> {
      if (!had_lock) {
        ::close(lock_fd_);
        lock_fd_ = -1;
      }
      return unexpected(std::move(e));
    };
    // Another loop's runs, in the files this name maps to: a fresh run would wipe them and a
    // resume would continue them.
    if (auto owner = journal_name_collision(dir_, name_))
      return refuse(little_loops::error{
          errc::io_error,
          fmt::format("these journal files hold the runs of loop \"{}\", not of \"{}\" (loop names "
                      "that differ only in characters other than letters, digits, '.', '_' and "
                      "'-' share their journal files): rename one of the loops, or remove the "
                      "files of the other",
                      *owner, name_),
          paths_.state.string()});
    if (events_fd_ >= 0) ::close(events_fd_);
    events_fd_ = detail::open_journal_for_append(paths_.events, fresh);
    if (events_fd_ < 0) return refuse(detail::journal_append_error(paths_.events, "the event log"));
    deferred_.clear();
    submit_after_events_ = false;
    defer_next_sync_ = fresh;
    // Records go on numbering from the newest on disk (a fresh run's first records must
    // outrank the state file of the run before; a resumed run's, its own).
    save_number_ = std::max(save_number_, detail::record_seq_prefix(paths_.state));
    if (fresh) {
      for (const auto& log : paths_.checkpoints) ::unlink(log.c_str());
    } else {
      for (const auto& log : paths_.checkpoints)
        if (auto record = detail::last_checkpoint(log)) save_number_ = std::max(save_number_, record->seq);
      // A crash may have cut the last line: terminate it so the next event starts clean.
      struct stat st;
      if (::fstat(events_fd_, &st) == 0 && st.st_size > 0) {
        const int rfd = detail::open_cloexec(paths_.events.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        char last = '\n';
        if (rfd >= 0) {
          if (::pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
          ::close(rfd);
        }
        if (last != '\n') (void)detail::write_all(events_fd_, "\n", 1);
      }
    }
    clear_stop_request();
    return {};
  }

  /// Appends one event object as a line to the log's buffer; the buffer is written (one
  /// write(), so lines never interleave) by flush_events(), save() and the destructor.
  /// Failures are ignored: journaling never stops a run.
  void append_event(const json& event) noexcept {
    if (events_fd_ < 0) return;
    try {
      pending_events_ += event.dump(-1, ' ', false, json::error_handler_t::replace);
      pending_events_ += '\n';
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: drop the event
    }
  }
  /// @copydoc append_event(const json&)
  /// The line is written straight from the typed event (append_json_line: the same text,
  /// without building a JSON object).
  void append_event(const loop_event& event) noexcept {
    if (events_fd_ < 0) return;
    const std::size_t size = pending_events_.size();
    try {
      append_json_line(pending_events_, event);
    } catch (...) {  // out of memory: drop the event, keep the buffer whole
      pending_events_.resize(size);
    }
  }

  /// Writes the buffered events to the log (journal_event_sink calls it before every
  /// action starts and when the loop ends); then, with journal_sync::background, hands the
  /// record a save appended meanwhile to the background thread (the state file never gets
  /// ahead of the event log).
  void flush_events() noexcept {
    write_pending_events();
    if (submit_after_events_) {
      submit_after_events_ = false;
      try {
        if (auto submitted = submit(std::exchange(deferred_, std::string()), seq_); !submitted)
          deferred_failure_ = std::move(submitted.error());
      } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: the next save retries
      }
    }
  }

  /// Saves `record` (see `sync`); sets `record.updated_at` (and `started_at`, `pid`, `name`
  /// when empty). Buffered events are written first; journal_sync::background instead
  /// leaves them to the next flush_events() (journal_event_sink: the next action's start),
  /// which writes them and then hands this record to the thread — one write() less between
  /// two actions, and the state file never gets ahead of the event log — unless a save is
  /// already waiting for that (a host that saves without flushing): then they are written
  /// here. With journal_sync::background the result reports this save's append; failures of
  /// the background writes are reported by flush() and by the next save that is not
  /// background. That save (e.g. a host's final one, with every_save) waits for the
  /// background thread, stops it, writes the state file and, when that is durable, removes
  /// the checkpoint logs.
  expected<void, little_loops::error> save(journal_record& record) {
    return save_with(record, [&] { return record.to_text(); });
  }
  /// save(record) with `snap` as the record's snapshot (record.snapshot is neither read nor
  /// changed): the same file contents as after `record.snapshot = to_json(snap)`, written
  /// straight from the typed snapshot, without building its JSON (a save per boundary).
  expected<void, little_loops::error> save(journal_record& record, const snapshot& snap) {
    record.accumulated_ms = snap.elapsed_ms;
    return save_with(record, [&] { return record.to_text(snap); });
  }
  /// save(record, snap.materialize()) without copying the snapshot out of its owner (e.g.
  /// `journal.save(record, executor.snapshot_view())` at every boundary).
  expected<void, little_loops::error> save(journal_record& record, const snapshot_view& snap) {
    record.accumulated_ms = snap.elapsed_ms;
    return save_with(record, [&] { return record.to_text(snap); });
  }

 private:
  template <class MakeText>
  expected<void, little_loops::error> save_with(journal_record& record, MakeText make_text) {
    if (sync != journal_sync::background) flush_events();
    record.updated_at = journal_now();
    record.seq = ++save_number_;
    if (record.started_at.empty()) record.started_at = record.updated_at;
    if (record.pid == 0) record.pid = static_cast<long>(::getpid());
    if (record.name.empty()) record.name = name_;
    std::string text;
    try {
      text = make_text();
    } catch (const std::exception& e) {
      return unexpected(little_loops::error{errc::io_error, e.what(), paths_.state.string()});
    }
    if (sync == journal_sync::background) return save_background(std::move(text));

    const bool had_logs = syncer_ != nullptr || logs_[0] >= 0 || logs_[1] >= 0;
    deferred_.clear();  // superseded by this save
    defer_next_sync_ = false;
    std::optional<little_loops::error> sync_failure = std::exchange(deferred_failure_, std::nullopt);
    if (syncer_ && sync == journal_sync::every_save) {
      // The thread writes this record durably after the one it may be busy with: one fsync
      // round trip less than waiting for it and then writing here.
      syncer_->submit(text, ++seq_);
      auto flushed = syncer_->flush();
      syncer_.reset();
      if (!flushed) {  // this record or an earlier one failed there: write it here
        if (auto written = write_file_atomic(paths_.state, text, true); !written) return written;
      }
    } else {
      if (syncer_) {
        if (auto flushed = syncer_->flush(); !flushed) sync_failure = std::move(flushed.error());
        syncer_.reset();
      }
      auto written = write_file_atomic(paths_.state, text, sync == journal_sync::every_save);
      if (!written) return written;
    }
    close_logs();
    // The state file now holds the newest record (durably with every_save): the logs have
    // served their purpose. With `none` they stay (still readable, older).
    if (had_logs && sync == journal_sync::every_save)
      for (const auto& log : paths_.checkpoints) ::unlink(log.c_str());
    if (sync_failure) return unexpected(std::move(*sync_failure));
    return {};
  }

 public:
  /// Waits until every save so far is written to the state file (journal_sync::background;
  /// only writes buffered events otherwise) and reports the last failure of the background
  /// writes.
  expected<void, little_loops::error> flush() {
    flush_events();
    submit_after_events_ = false;
    if (!deferred_.empty()) {
      if (auto submitted = submit(std::exchange(deferred_, std::string()), seq_); !submitted) return submitted;
    }
    if (deferred_failure_) return unexpected(*std::exchange(deferred_failure_, std::nullopt));
    if (!syncer_) return {};
    return syncer_->flush();
  }

  /// True when request_stop() asked this loop to stop.
  [[nodiscard]] bool stop_requested() const noexcept {
    struct stat st;
    return ::stat(paths_.stop.c_str(), &st) == 0;
  }
  /// Removes a stop request.
  void clear_stop_request() const noexcept { ::unlink(paths_.stop.c_str()); }

  /// Removes the state file, the checkpoint logs and the event log (e.g. after archiving a
  /// finished run).
  void remove_files() noexcept {
    pending_events_.clear();
    deferred_.clear();
    submit_after_events_ = false;
    syncer_.reset();
    close_logs();
    ::unlink(paths_.state.c_str());
    for (const auto& log : paths_.checkpoints) ::unlink(log.c_str());
    ::unlink(paths_.events.c_str());
    ::unlink(paths_.stop.c_str());
  }

  [[nodiscard]] const journal_paths& paths() const noexcept { return paths_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

  /// Claims the paths of `scope` (normalised here; empty: the working directory) for this
  /// run, under the journal's lock (taken here when open() has not taken it yet, with
  /// open()'s error when another process holds it): nullopt when the claim is written, or
  /// the live claim of another run that overlaps it (nothing is written then). See the
  /// scope-claim section above. Call again to wait for a conflicting run (e.g. once a
  /// second); release_scope() or the destructor drops the claim.
  expected<std::optional<scope_claim>, little_loops::error> claim_scope(const std::vector<std::string>& scope) {
    if (auto locked = take_lock(); !locked) return unexpected(std::move(locked.error()));
    std::vector<std::string> paths;
    for (const auto& p : scope) {
      if (p.find('\0') != std::string::npos)
        return unexpected(little_loops::error{errc::invalid_loop, "a scope path holds a NUL byte", "scope"});
      // (A claim is JSON text: bytes that are not UTF-8 would not read back as written.)
      if (!detail::is_valid_utf8(p))
        return unexpected(little_loops::error{errc::invalid_loop, "a scope path is not valid UTF-8", "scope"});
      paths.push_back(normalize_scope_path(p));
    }
    if (paths.empty()) paths.push_back(normalize_scope_path("."));
    const std::filesystem::path acquire = dir_ / ".acquire.lock";
    const int fd = detail::open_cloexec(acquire.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW);
    if (fd < 0) return unexpected(detail::journal_io_error(acquire, "cannot open lock file", errno));
    struct closer {
      int fd;
      ~closer() { ::close(fd); }  // releases the flock
    } close_acquire{fd};
    // Claims are made one at a time, each in a few file reads: a holder that keeps the lock
    // for ten seconds is stuck, not busy.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
      if (errno != EWOULDBLOCK && errno != EINTR)
        return unexpected(detail::journal_io_error(acquire, "cannot lock", errno));
      if (std::chrono::steady_clock::now() >= give_up)
        return unexpected(little_loops::error{errc::io_error, "another process has held the scope claims' lock for 10 s", acquire.string()});
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!detail::names_open_file(paths_.lock, lock_fd_))
      return unexpected(little_loops::error{errc::io_error, "the lock file was removed while this run held it", paths_.lock.string()});
    if (auto conflict = find_scope_conflict(dir_, paths, paths_.lock)) return conflict;
    const std::string text =
        json{{"loop_name", name_}, {"scope", paths}, {"pid", static_cast<long>(::getpid())}, {"started_at", journal_now()}}
            .dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > detail::max_scope_claim_bytes)
      return unexpected(little_loops::error{errc::invalid_loop,
                                            fmt::format("the scope is too large to claim ({} bytes of paths; at most {})",
                                                        text.size(), detail::max_scope_claim_bytes),
                                            "scope"});
    if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
      return unexpected(detail::journal_io_error(paths_.lock, "cannot write the scope claim", errno));
    scope_claimed_ = true;
    return std::optional<scope_claim>{};
  }

  /// Drops this run's scope claim (empties the lock file; the lock itself is kept).
  void release_scope() noexcept {
    if (scope_claimed_ && lock_fd_ >= 0) (void)::ftruncate(lock_fd_, 0);
    scope_claimed_ = false;
  }

 private:
  struct log_state {
    std::size_t size = 0;          // bytes in the log
    std::uint64_t last_seq = 0;    // the newest record in it (0: only older runs' records)
  };

  expected<void, little_loops::error> save_background(std::string text) {
    const std::uint64_t seq = ++seq_;
    if (!open_log(current_log_))
      return unexpected(detail::journal_append_error(paths_.checkpoints[current_log_], "the checkpoint log"));
    // Switch logs when this one is long and the other one holds nothing the state file
    // does not durably hold (so emptying it can lose nothing, even in a machine crash).
    const int other = 1 - current_log_;
    const std::uint64_t durable = syncer_ ? syncer_->durable() : 0;
    if (log_info_[current_log_].size >= checkpoint_log_limit && durable > 0 && open_log(other) &&
        durable >= log_info_[other].last_seq && ::ftruncate(logs_[other], 0) == 0) {
      log_info_[other] = log_state{};
      current_log_ = other;
    }
    log_state& log = log_info_[current_log_];
    if (!detail::write_all(logs_[current_log_], text.data(), text.size()))
      return unexpected(detail::journal_io_error(paths_.checkpoints[current_log_], "cannot append checkpoint", errno));
    log.size += text.size();
    log.last_seq = seq;
    if (defer_next_sync_) {  // the first save of a fresh run: see open()
      defer_next_sync_ = false;
      deferred_ = std::move(text);
      return {};
    }
    if (!pending_events_.empty()) {
      if (!submit_after_events_) {  // handed over once the events are written (flush_events)
        deferred_ = std::move(text);
        submit_after_events_ = true;
        return {};
      }
      write_pending_events();  // no flush since the previous save: write them now
    }
    deferred_.clear();  // superseded
    submit_after_events_ = false;
    return submit(std::move(text), seq);
  }

  void write_pending_events() noexcept {
    if (pending_events_.empty()) return;
    if (events_fd_ >= 0) (void)detail::write_all(events_fd_, pending_events_.data(), pending_events_.size());
    pending_events_.clear();
  }

  expected<void, little_loops::error> submit(std::string text, std::uint64_t seq) {
    if (!syncer_) {
      try {
        syncer_ = std::make_unique<detail::journal_syncer>(paths_.state, events_fd_, sync_interval);
      } catch (...) {  // no thread (std::system_error): write the state file here instead
        if (events_fd_ >= 0) ::fdatasync(events_fd_);
        return write_file_atomic(paths_.state, text, true);
      }
    }
    syncer_->submit(std::move(text), seq);
    return {};
  }

  /// Opens checkpoint log `i` for appending (once); false when it cannot be opened.
  bool open_log(int i) noexcept {
    if (logs_[i] >= 0) return true;
    logs_[i] = detail::open_journal_for_append(paths_.checkpoints[i], false);
    if (logs_[i] < 0) return false;
    struct stat st;
    // Records already in it are an earlier process's (last_seq 0: older than any of ours).
    log_info_[i] = log_state{::fstat(logs_[i], &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0, 0};
    return true;
  }

  // One writer per loop: an exclusive lock on `NAME.lock`, held while this journal is open
  // (released when the process ends, however it ends). Taken before anything is touched,
  // so a second run of the same loop cannot truncate or interleave this one's files.
  expected<void, little_loops::error> take_lock() {
    if (lock_fd_ >= 0) return {};
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return unexpected(little_loops::error{errc::io_error, "cannot create journal directory: " + ec.message(), dir_.string()});
    // The lock file is written (the scope claim): never through a symlink or into a file
    // with other names. Locked, it must still be the file the path names (the original's
    // tools remove lock files they take for stale; a run holding a removed one would not
    // keep a second run out); a claim it holds is then a dead run's (the lock proves it).
    for (int attempt = 0;; ++attempt) {
      const int fd = detail::open_cloexec(paths_.lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW);
      if (fd < 0)
        return unexpected(detail::journal_io_error(paths_.lock, errno == ELOOP ? "the lock file is a symbolic link" : "cannot open lock file", errno));
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        ::close(fd);
        return unexpected(little_loops::error{errc::io_error, "the lock file is not a regular file with one name", paths_.lock.string()});
      }
      int rc;
      do {
        rc = ::flock(fd, LOCK_EX | LOCK_NB);
      } while (rc != 0 && errno == EINTR);
      if (rc != 0) {
        const int err = errno;
        ::close(fd);
        if (err == EWOULDBLOCK)
          return unexpected(little_loops::error{
              errc::io_error, "the loop is already running: another process holds its journal",
              paths_.lock.string()});
        return unexpected(detail::journal_io_error(paths_.lock, "cannot lock", err));
      }
      if (!detail::names_open_file(paths_.lock, fd)) {
        ::close(fd);
        if (attempt < 8) continue;  // removed or replaced meanwhile: lock the file there now
        return unexpected(little_loops::error{errc::io_error, "the lock file keeps being replaced", paths_.lock.string()});
      }
      if (st.st_size != 0) (void)::ftruncate(fd, 0);
      lock_fd_ = fd;
      return {};
    }
  }

  void close_logs() noexcept {
    for (int& fd : logs_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
    log_info_ = {};
    current_log_ = 0;
  }

  std::filesystem::path dir_;
  std::string name_;
  journal_paths paths_;
  int events_fd_ = -1;
  int lock_fd_ = -1;  // holds the flock() of paths_.lock while open
  bool scope_claimed_ = false;  // lock_fd_'s file holds this run's scope claim
  std::string pending_events_;
  std::array<int, 2> logs_{-1, -1};
  std::array<log_state, 2> log_info_{};
  int current_log_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t save_number_ = 0;  // the last journal_record::seq given (see open())
  bool defer_next_sync_ = false;
  std::string deferred_;  // a record not handed to the thread yet (see save_background)
  bool submit_after_events_ = false;  // hand deferred_ over when the events are written
  std::optional<little_loops::error> deferred_failure_;  // of a hand-over in flush_events()
  std::unique_ptr<detail::journal_syncer> syncer_;
};

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

/// Runs `executor` to the end, saving `record` (status `running`, snapshot, iteration,
/// current state) atomically after every state boundary, and the final status (see
/// journal_status_for) with the resumable snapshot (null after a terminal or a terminated handoff) at the end,
/// which is durable when it returns (journal.flush()). A stop file (request_stop(); looked for
/// at a boundary at most every 10 ms) or `stop` stops the run at the next boundary, like a
/// cancellation. Journal write failures do not stop the run; the last one is returned in
/// `*write_error` when given.
template <class Executor>
const execution_result& run_journaled(Executor& executor, loop_journal& journal,
                                      journal_record& record, std::stop_token stop = {},
                                      std::optional<little_loops::error>* write_error = nullptr) {
  std::stop_callback forward(stop, [&executor]() noexcept { executor.request_stop(); });
  record.pid = static_cast<long>(::getpid());  // once: getpid() is a system call
  record.captured = json();  // the snapshots hold them until the end
  auto save = [&](std::string_view status, json snap) {
    record.status = std::string(status);
    record.snapshot = std::move(snap);
    if (auto r = journal.save(record); !r && write_error != nullptr) *write_error = r.error();
  };
  auto boundary = [&]() {
    const little_loops::snapshot_view s = executor.snapshot_view();
    record.iteration = s.iteration;
    record.current_state = s.current_state;
    if (record.started_at.empty()) record.started_at = s.started_at;
    record.status = std::string(journal_status::running);
    if (auto r = journal.save(record, s); !r && write_error != nullptr) *write_error = r.error();
  };
  boundary();
  // The stop file is looked for at a boundary at most every 10 ms (a stat() per step would
  // be on the path between two actions; a stop request is a human-scale event).
  using stop_clock = std::chrono::steady_clock;
  stop_clock::time_point next_stop_check{};
  while (executor.step()) {
    boundary();
    if (const auto now = stop_clock::now(); now >= next_stop_check) {
      next_stop_check = now + std::chrono::milliseconds(10);
      if (journal.stop_requested()) executor.request_stop();
    }
  }
  const execution_result& result = executor.result();
  record.iteration = result.iterations;
  record.current_state = result.snapshot ? result.snapshot->current_state : result.final_state;
  record.captured = detail::captured_to_json(result.captured);
  record.accumulated_ms = result.duration_ms;
  const std::string_view status = journal_status_for(result);
  save(status, result.snapshot && status != journal_status::terminated ? to_json(*result.snapshot) : json(nullptr));
  if (auto r = journal.flush(); !r && write_error != nullptr) *write_error = r.error();
  journal.clear_stop_request();
  return result;
}

LITTLE_LOOPS_NAMESPACE_END

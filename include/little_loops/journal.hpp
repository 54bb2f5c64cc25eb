// little_loops — journal: per-loop JSONL event log and atomically written state file, for status/stop/resume/history
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::posix); fsm.hpp never includes it.
//
// Files, per loop NAME in a directory DIR (default `.loops/.running`); NAME is made
// file-system safe (characters other than [A-Za-z0-9._-] become `_`, a leading `.` gets a
// `_` in front):
//   DIR/NAME.state.json    journal_record, replaced atomically (temp file in DIR, fsync,
//                          rename, fsync DIR) at every state boundary
//   DIR/NAME.events.jsonl  one seed-002 event object per line (`{"event","ts",...}`),
//                          appended with one write() per line
//   DIR/NAME.stop          present = a stop was requested (request_stop())

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
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Where journals live unless told otherwise (relative to the working directory).
inline constexpr std::string_view default_journal_dir = ".loops/.running";

/// The files of one loop's journal.
struct journal_paths {
  std::filesystem::path state;   ///< `DIR/NAME.state.json`
  std::filesystem::path events;  ///< `DIR/NAME.events.jsonl`
  std::filesystem::path stop;    ///< `DIR/NAME.stop`
};

/// Status values written by run_journaled() (hosts may write others).
namespace journal_status {
inline constexpr std::string_view running = "running";
inline constexpr std::string_view completed = "completed";      ///< success terminal
inline constexpr std::string_view failed = "failed";            ///< `failure: true` terminal
inline constexpr std::string_view interrupted = "interrupted";  ///< cancelled / stopped / crashed
inline constexpr std::string_view handoff = "awaiting_continuation";  ///< handoff signal
inline constexpr std::string_view max_iterations = "max_iterations";
inline constexpr std::string_view timed_out = "timed_out";
inline constexpr std::string_view error = "error";
}  // namespace journal_status

/// The status a finished run is journaled with.
inline std::string_view journal_status_for(const execution_result& r) noexcept {
  switch (r.terminated_by) {
    case termination::terminal:
      return r.failure ? journal_status::failed : journal_status::completed;
    case termination::max_iterations: return journal_status::max_iterations;
    case termination::timeout: return journal_status::timed_out;
    case termination::cancelled: return journal_status::interrupted;
    case termination::handoff: return journal_status::handoff;
    case termination::error: return journal_status::error;
  }
  return journal_status::error;
}

/// True for statuses a run can be resumed from (it has a snapshot to continue).
inline bool journal_resumable(std::string_view status) noexcept {
  return status == journal_status::running || status == journal_status::interrupted ||
         status == journal_status::handoff || status == journal_status::max_iterations ||
         status == journal_status::timed_out || status == journal_status::error;
}

/// The state file: `{"name","status","pid","loop_path","started_at","updated_at",
/// "iteration","current_state","snapshot","extra"}`.
struct journal_record {
  std::string name;           ///< the loop's name
  std::string status;         ///< see journal_status
  long pid = 0;               ///< the process that owns (or owned) the run
  std::string loop_path;      ///< where the loop definition came from (for resume)
  std::string started_at;     ///< ISO 8601, kept across resumes
  std::string updated_at;     ///< ISO 8601, set by every save
  std::int64_t iteration = 0;
  std::string current_state;  ///< the state that runs next
  json snapshot;              ///< to_json(snapshot); null when there is nothing to resume
  json extra = json::object();  ///< host data (CLI options, overrides, ...)

  /// True when the record says `running` but its process is gone (a crash or kill -9):
  /// set by the readers, which then report the status as `interrupted`.
  bool stale = false;

  [[nodiscard]] json to_json() const {
    json j = json::object();
    j["name"] = name;
    j["status"] = status;
    j["pid"] = pid;
    j["loop_path"] = loop_path;
    j["started_at"] = started_at;
    j["updated_at"] = updated_at;
    j["iteration"] = iteration;
    j["current_state"] = current_state;
    j["snapshot"] = snapshot;
    j["extra"] = extra;
    return j;
  }

  /// Reads a state file's JSON; `name` and `status` are required, the rest optional.
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
    for (auto [key, field, required] :
         {std::tuple<const char*, std::string*, bool>{"name", &r.name, true},
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
    if (const auto it = j.find("iteration"); it != j.end() && !it->is_null()) {
      if (!it->is_number_integer()) return bad("iteration", "expected an integer at \"iteration\"");
      r.iteration = it->get<std::int64_t>();
    }
    if (const auto it = j.find("snapshot"); it != j.end()) r.snapshot = *it;
    if (const auto it = j.find("extra"); it != j.end() && it->is_object()) r.extra = *it;
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

inline int open_cloexec(const char* path, int flags, mode_t mode = 0644) noexcept {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace detail

/// The journal files of `name` in `dir`.
inline journal_paths journal_paths_for(const std::filesystem::path& dir, std::string_view name) {
  const std::string safe = detail::journal_safe_name(name);
  return journal_paths{dir / (safe + ".state.json"), dir / (safe + ".events.jsonl"),
                       dir / (safe + ".stop")};
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

/// True when `pid` names a live process (EPERM counts as alive).
inline bool journal_process_alive(long pid) noexcept {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

/// Reads `DIR/NAME.state.json`. nullopt when there is none; errc::io_error / invalid_snapshot
/// when it cannot be read. A `running` record whose pid is dead comes back `interrupted`
/// with `stale` set (the file itself is not changed).
inline expected<std::optional<journal_record>, little_loops::error> load_journal(
    const std::filesystem::path& dir, std::string_view name) {
  const auto paths = journal_paths_for(dir, name);
  std::error_code ec;
  if (!std::filesystem::exists(paths.state, ec)) return std::optional<journal_record>{};
  std::ifstream in(paths.state, std::ios::binary);
  if (!in) return unexpected(detail::journal_io_error(paths.state, "cannot open", errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    return unexpected(little_loops::error{errc::invalid_snapshot, "journal state is not valid JSON",
                                          paths.state.string()});
  auto record = journal_record::from_json(j);
  if (!record) {
    little_loops::error e = std::move(record.error());
    e.message = paths.state.string() + ": " + e.message;
    return unexpected(std::move(e));
  }
  if (record->status == journal_status::running && !journal_process_alive(record->pid)) {
    record->status = std::string(journal_status::interrupted);
    record->stale = true;
  }
  return std::optional<journal_record>(std::move(*record));
}

/// Every readable journal in `dir`, sorted by file name (unreadable ones are skipped).
inline std::vector<journal_record> list_journals(const std::filesystem::path& dir) {
  std::vector<std::string> stems;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    constexpr std::string_view suffix = ".state.json";
    if (file.size() > suffix.size() && file[0] != '.' &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
      stems.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(stems.begin(), stems.end());
  std::vector<journal_record> out;
  for (const auto& stem : stems) {
    auto r = load_journal(dir, stem);
    if (r && r->has_value()) out.push_back(std::move(**r));
  }
  return out;
}

/// The last `tail` events of a loop's log (all when `tail` is 0), oldest first. Lines that
/// are not JSON objects (e.g. a line cut by a crash) are skipped.
inline std::vector<json> read_journal_events(const std::filesystem::path& dir, std::string_view name,
                                             std::size_t tail = 0) {
  std::vector<json> out;
  std::ifstream in(journal_paths_for(dir, name).events, std::ios::binary);
  if (!in) return out;
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    lines.push_back(std::move(line));
    if (tail != 0 && lines.size() > tail * 2 + 16) lines.pop_front();  // bounded memory
  }
  for (auto& l : lines) {
    json j = json::parse(l, nullptr, false);
    if (!j.is_discarded() && j.is_object()) out.push_back(std::move(j));
  }
  if (tail != 0 && out.size() > tail) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(tail));
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
  auto record = load_journal(dir, name);
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
      journal_process_alive(r.pid))
    outcome.signalled = ::kill(static_cast<pid_t>(r.pid), SIGTERM) == 0;
  return outcome;
}

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
      : dir_(std::move(other.dir_)), name_(std::move(other.name_)), paths_(std::move(other.paths_)),
        events_fd_(std::exchange(other.events_fd_, -1)) {
    durable = other.durable;
  }
  loop_journal& operator=(loop_journal&&) = delete;
  ~loop_journal() {
    if (events_fd_ >= 0) ::close(events_fd_);
  }

  /// fsync the state file and the directory on every save (default). false keeps the
  /// writes atomic against a crash of the process, not of the machine, and is faster.
  bool durable = true;

  /// Creates the directory and opens the event log for appending. `fresh` starts a new run:
  /// the log is truncated; otherwise (resume) it is appended to, after terminating a line
  /// a crash cut short. Either way a leftover stop request is removed.
  expected<void, little_loops::error> open(bool fresh) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return unexpected(little_loops::error{errc::io_error, "cannot create journal directory: " + ec.message(), dir_.string()});
    if (events_fd_ >= 0) ::close(events_fd_);
    events_fd_ = detail::open_cloexec(paths_.events.c_str(),
                                      O_WRONLY | O_CREAT | O_APPEND | (fresh ? O_TRUNC : 0));
    if (events_fd_ < 0) return unexpected(detail::journal_io_error(paths_.events, "cannot open event log", errno));
    if (!fresh) {
      // A crash may have cut the last line: terminate it so the next event starts clean.
      struct stat st;
      if (::fstat(events_fd_, &st) == 0 && st.st_size > 0) {
        const int rfd = detail::open_cloexec(paths_.events.c_str(), O_RDONLY);
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

  /// Appends one event object as a line (a single write, so lines never interleave).
  /// Failures are ignored: journaling never stops a run.
  void append_event(const json& event) noexcept {
    if (events_fd_ < 0) return;
    try {
      line_ = event.dump(-1, ' ', false, json::error_handler_t::replace);
      line_ += '\n';
      (void)detail::write_all(events_fd_, line_.data(), line_.size());
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: drop the event
    }
  }

  /// Writes the state file atomically; sets `record.updated_at` (and `started_at`, `pid`
  /// when empty).
  expected<void, little_loops::error> save(journal_record& record) const {
    record.updated_at = journal_now();
    if (record.started_at.empty()) record.started_at = record.updated_at;
    if (record.pid == 0) record.pid = static_cast<long>(::getpid());
    if (record.name.empty()) record.name = name_;
    std::string text;
    try {
      text = record.to_json().dump(2, ' ', false, json::error_handler_t::replace);
    } catch (const std::exception& e) {
      return unexpected(little_loops::error{errc::io_error, e.what(), paths_.state.string()});
    }
    text += '\n';
    return write_file_atomic(paths_.state, text, durable);
  }

  /// True when request_stop() asked this loop to stop.
  [[nodiscard]] bool stop_requested() const noexcept {
    struct stat st;
    return ::stat(paths_.stop.c_str(), &st) == 0;
  }
  /// Removes a stop request.
  void clear_stop_request() const noexcept { ::unlink(paths_.stop.c_str()); }

  /// Removes the state file and the event log (e.g. after archiving a finished run).
  void remove_files() const noexcept {
    ::unlink(paths_.state.c_str());
    ::unlink(paths_.events.c_str());
    ::unlink(paths_.stop.c_str());
  }

  [[nodiscard]] const journal_paths& paths() const noexcept { return paths_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string name_;
  journal_paths paths_;
  int events_fd_ = -1;
  std::string line_;
};

/// An EventSink that appends every event (seed-002 JSON) to a journal's event log and then
/// forwards it to `Next` (e.g. a progress display).
template <class Next = null_event_sink>
class journal_event_sink {
 public:
  explicit journal_event_sink(loop_journal& journal, Next next = Next{})
      : journal_(&journal), next_(std::move(next)) {}

  void on_event(const loop_event& event) noexcept {
    try {
      journal_->append_event(to_json(event));
    } catch (...) {  // NOLINT(bugprone-empty-catch): journaling never stops a run
    }
    next_.on_event(event);
  }

  [[nodiscard]] Next& next() noexcept { return next_; }

 private:
  loop_journal* journal_;
  Next next_;
};

/// Runs `executor` to the end, saving `record` (status `running`, snapshot, iteration,
/// current state) atomically after every state boundary, and the final status (see
/// journal_status_for) with the resumable snapshot (null after a terminal) at the end. A
/// stop file (request_stop()) or `stop` stops the run at the next boundary, like a
/// cancellation. Journal write failures do not stop the run; the last one is returned in
/// `*write_error` when given.
template <class Executor>
const execution_result& run_journaled(Executor& executor, loop_journal& journal,
                                      journal_record& record, std::stop_token stop = {},
                                      std::optional<little_loops::error>* write_error = nullptr) {
  std::stop_callback forward(stop, [&executor]() noexcept { executor.request_stop(); });
  auto save = [&](std::string_view status, json snap) {
    record.status = std::string(status);
    record.snapshot = std::move(snap);
    record.pid = static_cast<long>(::getpid());
    if (auto r = journal.save(record); !r && write_error != nullptr) *write_error = r.error();
  };
  auto boundary = [&]() {
    little_loops::snapshot s = executor.snapshot();
    record.iteration = s.iteration;
    record.current_state = s.current_state;
    if (record.started_at.empty()) record.started_at = s.started_at;
    save(journal_status::running, to_json(s));
  };
  boundary();
  while (executor.step()) {
    boundary();
    if (journal.stop_requested()) executor.request_stop();
  }
  const execution_result& result = executor.result();
  record.iteration = result.iterations;
  record.current_state = result.snapshot ? result.snapshot->current_state : result.final_state;
  save(journal_status_for(result), result.snapshot ? to_json(*result.snapshot) : json(nullptr));
  journal.clear_stop_request();
  return result;
}

LITTLE_LOOPS_NAMESPACE_END

// little_loops — journal: a loop's journal files, where they are and how they are written
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/journal/detail/posix_files.hpp>
#include <little_loops/journal/detail/process_facts.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

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
  const int fd = detail::open_fd(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL).release();
  if (fd < 0) return unexpected(detail::journal_io_error(tmp, "cannot create temp file", errno));
  bool ok = detail::write_all(fd, content);
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
    const int dfd = detail::open_fd(dir.c_str(), O_RDONLY | O_DIRECTORY).release();
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
  return {};
}

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

LITTLE_LOOPS_NAMESPACE_END

// little_loops — journal: raw POSIX file helpers (whole writes, close-on-exec opens, whole reads)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/posix_io.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

inline little_loops::error journal_io_error(const std::filesystem::path& path, std::string what, int err) {
  return little_loops::error{errc::io_error, what + ": " + std::strerror(err), path.string()};
}

/// Opens a journal file that is written by appending (the event log, a checkpoint log):
/// never through a symbolic link (a link shipped in a repository would have its target
/// overwritten), never a FIFO or device (O_NONBLOCK: opening one must not wait) and never a
/// file with other names (a hard link: the other name would change too). `truncate` empties
/// it, after those checks. -1 with errno set on failure: ELOOP for a symbolic link, EINVAL
/// for a file that is not a regular one with one name (see journal_append_error()).
inline int open_journal_for_append(const std::filesystem::path& path, bool truncate) noexcept {
  const int fd = open_fd(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK).release();
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

/// True when `path` names the open file `fd` (same device and inode).
inline bool names_open_file(const std::filesystem::path& path, int fd) noexcept {
  struct stat by_path {}, by_fd {};
  return ::stat(path.c_str(), &by_path) == 0 && ::fstat(fd, &by_fd) == 0 &&
         by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino;
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

/// Opens and locks (an exclusive flock()) a journal's lock file, `NAME.lock`, emptied: the
/// descriptor that holds the lock. The lock file is written (the scope claim): never
/// through a symlink or into a file with other names. Locked, it must still be the file the
/// path names (the original's tools remove lock files they take for stale; a run holding a
/// removed one would not keep a second run out); a claim it holds is then a dead run's (the
/// lock proves it). errc::io_error when another process holds the lock.
inline expected<int, little_loops::error> lock_journal_file(const std::filesystem::path& path) {
  for (int attempt = 0;; ++attempt) {
    const int fd = open_fd(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW).release();
    if (fd < 0)
      return unexpected(journal_io_error(path, errno == ELOOP ? "the lock file is a symbolic link" : "cannot open lock file", errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
      ::close(fd);
      return unexpected(little_loops::error{errc::io_error, "the lock file is not a regular file with one name", path.string()});
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
            errc::io_error, "the loop is already running: another process holds its journal", path.string()});
      return unexpected(journal_io_error(path, "cannot lock", err));
    }
    if (!names_open_file(path, fd)) {
      ::close(fd);
      if (attempt < 8) continue;  // removed or replaced meanwhile: lock the file there now
      return unexpected(little_loops::error{errc::io_error, "the lock file keeps being replaced", path.string()});
    }
    if (st.st_size != 0) (void)::ftruncate(fd, 0);
    return fd;
  }
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

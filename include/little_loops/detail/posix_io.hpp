// little_loops — raw POSIX descriptors: the owned descriptor, close-on-exec pipes and opens, whole writes
// SPDX-License-Identifier: MIT
#pragma once

// POSIX only; reached from the opt-in adapters (runner, command judge), never from fsm.hpp.

#include <little_loops/config.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// An owned file descriptor.
class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~unique_fd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);  // close() is not retried on EINTR (Linux frees the fd)
    fd_ = fd;
  }
  /// Gives up ownership: the descriptor, which the caller now closes.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

/// Moves `fd` above the standard descriptors (a host that closed 0/1/2 would otherwise get
/// pipe ends there, and `dup2(fd, fd)` would keep close-on-exec set).
inline int lift_fd(int fd) noexcept {
  if (fd < 0 || fd > 2) return fd;
  const int lifted = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return lifted;
}

/// A close-on-exec pipe. Returns false (errno set) on failure.
inline bool make_pipe(unique_fd& read_end, unique_fd& write_end) noexcept {
  int fds[2];
#if defined(__linux__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
#else
  if (::pipe(fds) != 0) return false;
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  ::fcntl(fds[1], F_SETFD, FD_CLOEXEC);
#endif
  fds[0] = lift_fd(fds[0]);
  fds[1] = lift_fd(fds[1]);
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  return read_end.valid() && write_end.valid();
}

/// open() with close-on-exec, never on a standard descriptor (a host that closed stdout
/// would otherwise have a file opened as descriptor 1 receive everything it prints); EINTR
/// is retried. Invalid (errno set) on failure.
inline unique_fd open_fd(const char* path, int flags, mode_t mode = 0644) noexcept {
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
  return unique_fd(fd);
}

/// Writes all of `data` (short writes continued, EINTR retried). False (errno set) on failure.
inline bool write_all(int fd, std::string_view data) noexcept {
  while (!data.empty()) {
    const ssize_t w = ::write(fd, data.data(), data.size());
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

/// Makes a fresh pipe end non-blocking. One fcntl: a new pipe end has no file status flags
/// besides its access mode, which F_SETFL ignores.
inline void set_nonblocking(int fd) noexcept { ::fcntl(fd, F_SETFL, O_NONBLOCK); }

inline std::string errno_text(int err) { return std::string(std::strerror(err)); }

/// write() that never raises SIGPIPE in the host: SIGPIPE is blocked in this thread for
/// the call, and a SIGPIPE it generated is consumed before unblocking.
inline ssize_t write_no_sigpipe(int fd, const char* data, std::size_t n) noexcept {
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigemptyset(&pending);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  ssize_t written;
  do {
    written = ::write(fd, data, n);
  } while (written < 0 && errno == EINTR);
  const int saved = errno;
  if (written < 0 && saved == EPIPE && !was_pending) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved;
  return written;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

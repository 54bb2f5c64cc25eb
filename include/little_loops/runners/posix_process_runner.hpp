// little_loops — POSIX process runner: runs actions with posix_spawn, bounded capture, timeouts, cancellation
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::posix); fsm.hpp never includes it.

#include <little_loops/concepts.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sched.h>
#  include <sys/eventfd.h>
#  include <sys/mman.h>
#  include <sys/syscall.h>
#endif
// A spawn of the runner's own on Linux x86-64 with glibc (see detail::clone_spawn); posix_spawn
// elsewhere, and whenever it cannot be used. LITTLE_LOOPS_NO_CLONE_SPAWN turns it off.
// (Not under ThreadSanitizer, whose clone() interceptor runs fork handlers in the child,
// which shares the parent's memory; not on x32.)
#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define LITTLE_LOOPS_DETAIL_TSAN 1
#  endif
#endif
#if defined(__SANITIZE_THREAD__)
#  define LITTLE_LOOPS_DETAIL_TSAN 1
#endif
#if defined(__linux__) && defined(__GLIBC__) && defined(__x86_64__) && !defined(__ILP32__) && \
    defined(SYS_rt_sigaction) && !defined(LITTLE_LOOPS_NO_CLONE_SPAWN) && !defined(LITTLE_LOOPS_DETAIL_TSAN)
#  define LITTLE_LOOPS_CLONE_SPAWN 1
#else
#  define LITTLE_LOOPS_CLONE_SPAWN 0
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern "C" char** environ;  // NOLINT: POSIX global, declared by <unistd.h> only with _GNU_SOURCE

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Settings of a posix_process_runner. Every field has a working default.
struct posix_runner_options {
  /// argv prefix of shell actions; the action text is appended as one argument. argv[0] is
  /// looked up on PATH. The default is seed 002's `bash -c`, so loops written for the
  /// original keep their bash syntax (`[[ … ]]`, `{1..3}`, `echo -e`, `set -o pipefail`);
  /// `{"/bin/sh", "-c"}` runs them with the system's POSIX shell instead.
  std::vector<std::string> shell_command{"bash", "-c"};
  /// argv prefix of `prompt` actions; the prompt is appended as one argument (no shell).
  /// argv[0] is looked up on PATH. The default is seed 002's Claude CLI invocation.
  std::vector<std::string> prompt_command{"claude", "--dangerously-skip-permissions", "-p"};
  /// argv prefix of `slash_command` actions; empty means "same as prompt_command".
  std::vector<std::string> slash_command;
  /// Working directory of every action; empty inherits the host's.
  std::string working_directory;
  /// Variables set (or overridden) in every action's environment. When any are given (or
  /// inherit_environment is false) the environment block is built once, when the runner is
  /// constructed, from the host's environment at that moment: later setenv()/putenv() calls
  /// of the host are not seen by actions (construct a new runner to pick them up). With
  /// neither, actions get the host's environment as it is at each spawn.
  std::vector<std::pair<std::string, std::string>> environment;
  /// false: actions see only `environment`, not the host's environment.
  bool inherit_environment = true;
  /// Timeout of actions whose request has none (seed 002: 120 s); nullopt = no limit.
  std::optional<std::chrono::milliseconds> default_timeout = std::chrono::seconds(120);
  /// Stop an action that writes nothing (stdout or stderr) for this long; nullopt = off.
  std::optional<std::chrono::milliseconds> idle_timeout;
  /// After SIGTERM to the action's process group, wait this long before SIGKILL.
  std::chrono::milliseconds kill_grace{2000};
  /// Once the direct child has exited, keep reading pipes held open by its descendants
  /// for at most this long.
  std::chrono::milliseconds drain_window{100};
  /// Bytes kept per stream (stdout, stderr). Longer output keeps its first and last halves
  /// with `truncation_marker` between them; the rest is read and dropped.
  std::size_t output_limit = std::size_t{16} << 20;
  /// Inserted where output was cut.
  std::string truncation_marker = "\n[... output truncated by little_loops ...]\n";
  /// After the direct child exits, SIGKILL what is left of its process group (background
  /// jobs). false leaves them running (pipes they hold are still abandoned after
  /// drain_window).
  bool kill_leftover_processes = true;
};

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

/// Makes a fresh pipe end non-blocking. One fcntl: a new pipe end has no file status flags
/// besides its access mode, which F_SETFL ignores.
inline void set_nonblocking(int fd) noexcept { ::fcntl(fd, F_SETFL, O_NONBLOCK); }

inline std::string errno_text(int err) { return std::string(std::strerror(err)); }

/// A byte sink that keeps at most `limit` bytes: the first half verbatim and the most
/// recent half in a ring. Both live in one buffer, `[head | ring]`, that grows to `limit`
/// (plus room for the marker) and no further: the memory of a capped stream is its cap,
/// also when finish() puts the ring in order and the marker between the halves, in place.
class capped_buffer {
 public:
  explicit capped_buffer(std::size_t limit) noexcept
      : head_cap_(limit - limit / 2), tail_cap_(limit / 2) {}

  void append(const char* data, std::size_t n) {
    total_ += n;
    const std::size_t cap = head_cap_ + tail_cap_;
    if (buf_.size() < cap) {
      // Filling: plain appends (head, then the ring's first pass, in order).
      const std::size_t take = std::min(n, cap - buf_.size());
      if (buf_.size() + take > buf_.capacity()) {
        std::size_t want = std::max(buf_.capacity() * 2, buf_.size() + take);
        if (want >= cap) want = cap + marker_room;  // the last growth: room for the marker
        buf_.reserve(want);
      }
      buf_.append(data, take);
      data += take;
      n -= take;
    }
    if (n == 0 || tail_cap_ == 0) return;
    // Full: the ring `[head_cap_, cap)` keeps the most recent bytes; ring_pos_ is its oldest.
    if (n >= tail_cap_) {
      data += n - tail_cap_;
      n = tail_cap_;
    }
    char* ring = buf_.data() + head_cap_;
    const std::size_t first = std::min(n, tail_cap_ - ring_pos_);
    std::memcpy(ring + ring_pos_, data, first);
    std::memcpy(ring, data + first, n - first);
    ring_pos_ = (ring_pos_ + n) % tail_cap_;
  }

  [[nodiscard]] bool truncated() const noexcept { return total_ > head_cap_ + tail_cap_; }
  [[nodiscard]] std::size_t total() const noexcept { return total_; }

  /// The kept bytes, with `marker` where bytes were dropped.
  [[nodiscard]] std::string finish(std::string_view marker) {
    if (!truncated()) return std::move(buf_);  // never wrapped: already in order
    const auto ring = buf_.begin() + static_cast<std::ptrdiff_t>(head_cap_);
    std::rotate(ring, ring + static_cast<std::ptrdiff_t>(ring_pos_), buf_.end());
    ring_pos_ = 0;
    buf_.insert(head_cap_, marker);
    return std::move(buf_);
  }

 private:
  static constexpr std::size_t marker_room = 256;  // the default marker fits
  std::size_t head_cap_;
  std::size_t tail_cap_;
  std::size_t total_ = 0;
  std::size_t ring_pos_ = 0;
  std::string buf_;
};

/// An environment block (`NAME=value` strings plus the null-terminated pointer array).
struct env_block {
  std::vector<std::string> entries;
  std::vector<char*> pointers;
};

/// Builds the environment of spawned processes: the host's (optionally) with `overrides`
/// set on top. Returns null when the host environment can be passed unchanged.
inline std::shared_ptr<const env_block> make_env_block(
    const std::vector<std::pair<std::string, std::string>>& overrides, bool inherit) {
  if (inherit && overrides.empty()) return nullptr;
  auto block = std::make_shared<env_block>();
  auto overridden = [&](std::string_view entry) {
    const auto eq = entry.find('=');
    const std::string_view name = entry.substr(0, eq);
    for (const auto& [k, v] : overrides)
      if (k == name) return true;
    return false;
  };
  if (inherit && environ != nullptr)
    for (char** e = environ; *e != nullptr; ++e)
      if (!overridden(*e)) block->entries.emplace_back(*e);
  for (const auto& [k, v] : overrides) {
    bool seen = false;  // a later duplicate of the same name wins
    for (auto& entry : block->entries)
      if (entry.size() > k.size() && entry.compare(0, k.size(), k) == 0 && entry[k.size()] == '=') {
        entry = k + "=" + v;
        seen = true;
      }
    if (!seen) block->entries.push_back(k + "=" + v);
  }
  block->pointers.reserve(block->entries.size() + 1);
  for (auto& entry : block->entries) block->pointers.push_back(entry.data());
  block->pointers.push_back(nullptr);
  return block;
}

/// Everything run_process needs to start and supervise one process.
struct process_request {
  std::vector<std::string> argv;           ///< argv[0] is searched on PATH
  const char* working_directory = nullptr; ///< null: inherit
  char* const* envp = nullptr;             ///< null: the host's environment
  const std::string* stdin_data = nullptr; ///< null: stdin is /dev/null
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::optional<std::chrono::milliseconds> idle_timeout;
  std::chrono::milliseconds kill_grace{2000};
  std::chrono::milliseconds drain_window{100};
  std::size_t output_limit = std::size_t{16} << 20;
  std::string_view truncation_marker;
  bool kill_leftover_processes = true;
  std::stop_token stop;
};

/// Makes `fd` (an eventfd, or a pipe's write end) readable when a stop is requested (wakes
/// up poll()).
struct stop_notifier {
  int fd;
  void operator()() const noexcept {
    const std::uint64_t one = 1;  // an eventfd takes exactly 8 bytes; a pipe takes any
    ssize_t n;
    do {
      n = ::write(fd, &one, sizeof one);
    } while (n < 0 && errno == EINTR);
  }
};

/// The wake-up descriptor of stop requests, one per thread, made on first use and reused
/// by every action the thread runs: a non-blocking eventfd on Linux, a pipe elsewhere.
class stop_wakeup {
 public:
  /// False when it cannot be created.
  bool ready() noexcept {
    if (read_end_.valid()) return true;
#if defined(__linux__)
    read_end_.reset(lift_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)));
#else
    if (make_pipe(read_end_, write_end_)) {
      set_nonblocking(read_end_.get());
      set_nonblocking(write_end_.get());
    }
#endif
    return read_end_.valid();
  }
  [[nodiscard]] int read_fd() const noexcept { return read_end_.get(); }
  [[nodiscard]] int write_fd() const noexcept {
    return write_end_.valid() ? write_end_.get() : read_end_.get();
  }
  /// Empties it after a stop request woke it (no stop callback may run any more).
  void drain() noexcept {
    char buf[64];
    ssize_t n;
    do {
      n = ::read(read_end_.get(), buf, sizeof buf);
    } while (n > 0 || (n < 0 && errno == EINTR));
  }

 private:
  unique_fd read_end_, write_end_;
};

/// The stdin of actions that get no input: /dev/null, opened once per thread and handed to
/// every child with a dup2 (the child would otherwise open, dup2 and close it before its
/// exec, while posix_spawn keeps the parent waiting: about 1 % of a `sh -c true` here).
/// -1 when it cannot be opened (the child then opens /dev/null itself).
inline int null_input_fd() noexcept {
  thread_local const unique_fd null_input(lift_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
  return null_input.get();
}

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

/// RAII for a posix_spawn attribute object.
struct spawn_attributes {
  posix_spawnattr_t attributes;
  spawn_attributes() noexcept { posix_spawnattr_init(&attributes); }
  spawn_attributes(const spawn_attributes&) = delete;
  spawn_attributes& operator=(const spawn_attributes&) = delete;
  ~spawn_attributes() { posix_spawnattr_destroy(&attributes); }
};

/// The child's file actions (optional chdir; stdin from a pipe or /dev/null; stdout and
/// stderr to pipes), rebuilt only when the descriptors or the directory differ from the
/// last call's.
class spawn_file_actions_cache {
 public:
  spawn_file_actions_cache() noexcept { posix_spawn_file_actions_init(&actions_); }
  spawn_file_actions_cache(const spawn_file_actions_cache&) = delete;
  spawn_file_actions_cache& operator=(const spawn_file_actions_cache&) = delete;
  ~spawn_file_actions_cache() { posix_spawn_file_actions_destroy(&actions_); }

  /// The actions for these descriptors (`in` = -1: the child opens /dev/null) and directory
  /// (nullptr: the host's); nullptr when they cannot be built (out of memory).
  const posix_spawn_file_actions_t* get(int in, int out, int err, const char* cwd) {
    if (valid_ && in == in_ && out == out_ && err == err_ &&
        (cwd == nullptr ? !has_cwd_ : has_cwd_ && cwd_ == cwd))
      return &actions_;
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawn_file_actions_init(&actions_);
    valid_ = false;
    int rc = 0;
#if defined(__GLIBC__) || defined(__APPLE__)
    if (cwd != nullptr) rc = posix_spawn_file_actions_addchdir_np(&actions_, cwd);
#endif
    if (rc == 0)
      rc = in >= 0 ? posix_spawn_file_actions_adddup2(&actions_, in, 0)
                   : posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions_, out, 1);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions_, err, 2);
    if (rc != 0) return nullptr;
    in_ = in;
    out_ = out;
    err_ = err;
    has_cwd_ = cwd != nullptr;
    cwd_ = cwd != nullptr ? cwd : "";
    valid_ = true;
    return &actions_;
  }

 private:
  posix_spawn_file_actions_t actions_;
  bool valid_ = false;
  int in_ = -1, out_ = -1, err_ = -1;
  bool has_cwd_ = false;
  std::string cwd_;
};

/// Where posix_spawnp() finds a program on PATH, remembered from one action to the next.
///
/// posix_spawnp() searches PATH in the child, one execve() per directory until one
/// succeeds, while posix_spawn keeps the parent waiting: each directory before the
/// program's costs a failed exec between two actions. The search is done in the parent
/// instead, with glibc's rule (the first regular file the process may execute), and its
/// answer is reused while PATH is the same and every candidate before it is as it was
/// (still absent, or the same unexecutable file, unchanged): one stat() each, cheaper than
/// a failed exec, and a program installed earlier on PATH since is found, as by a fresh
/// search. With `bash` in the eleventh of twelve directories, the steps of a `bash -c
/// true` loop took 5-20 µs less (of 1.1 ms). A start that fails with the path found is
/// retried with the search in the child. Names with a '/', an unset PATH and a PATH with a
/// relative entry (which the child resolves from its own working directory) are left to
/// posix_spawnp.
class program_lookup_cache {
 public:
  /// The file to hand posix_spawnp for `name`: a full path, or `name` itself when it is
  /// not looked up here or no directory has it (posix_spawnp then reports the failure).
  const char* lookup(const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos) return name.c_str();
    const char* path_env = std::getenv("PATH");
    if (path_env == nullptr) return name.c_str();
    for (auto& e : entries_)
      if (e.name == name && e.path_env == path_env && still_valid(e)) return e.file.c_str();
    forget(name);
    entry fresh;
    fresh.name = name;
    fresh.path_env = path_env;
    std::string_view rest(fresh.path_env);
    for (;;) {
      const auto colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (dir.empty() || dir.front() != '/') return name.c_str();  // relative: the child's
      std::string candidate(dir);
      if (candidate.back() != '/') candidate += '/';
      candidate += name;
      stamp seen = stamp_of(candidate);
      if (seen.err == 0 && S_ISREG(seen.mode) &&
          ::faccessat(AT_FDCWD, candidate.c_str(), X_OK, AT_EACCESS) == 0) {
        fresh.file = std::move(candidate);
        break;
      }
      fresh.before.push_back(std::move(seen));
      if (colon == std::string_view::npos) return name.c_str();  // not found: let it fail
      rest.remove_prefix(colon + 1);
    }
    if (entries_.size() >= max_entries) entries_.erase(entries_.begin());
    entries_.push_back(std::move(fresh));
    return entries_.back().file.c_str();
  }

  /// Drops what is known about `name` (its program failed to start).
  void forget(const std::string& name) noexcept {
    std::erase_if(entries_, [&](const entry& e) { return e.name == name; });
  }

 private:
  static constexpr std::size_t max_entries = 8;
  struct stamp {
    std::string path;
    int err = 0;  // errno of stat(), 0 when the file exists
    dev_t dev = 0;
    ino_t ino = 0;
    mode_t mode = 0;
    timespec ctime{};
    bool operator==(const stamp& o) const noexcept {
      return err == o.err && dev == o.dev && ino == o.ino && mode == o.mode &&
             ctime.tv_sec == o.ctime.tv_sec && ctime.tv_nsec == o.ctime.tv_nsec;
    }
  };
  struct entry {
    std::string name, path_env, file;
    std::vector<stamp> before;  // the candidates that did not qualify, in PATH order
  };

  static stamp stamp_of(const std::string& path) {
    stamp s;
    s.path = path;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      s.err = errno;
      return s;
    }
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.mode = st.st_mode;
    s.ctime = st.st_ctim;
    return s;
  }
  static bool still_valid(const entry& e) {
    for (const auto& seen : e.before)
      if (!(stamp_of(seen.path) == seen)) return false;
    return true;
  }

  std::vector<entry> entries_;
};

/// Opens a descriptor that becomes readable when `pid` exits (Linux pidfd); -1 elsewhere.
inline int open_exit_fd(pid_t pid) noexcept {
#if defined(__linux__) && defined(SYS_pidfd_open)
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return -1;
  return lift_fd(static_cast<int>(fd));  // pidfds are close-on-exec; lift_fd keeps that
#else
  (void)pid;
  return -1;
#endif
}

/// True when `pid` has exited (it stays a zombie: the caller reaps it later).
/// Where a spawned child is, without reaping it: running; exited (an unreaped zombie, ours
/// to reap); or gone: reaped by someone else (a host that ignores SIGCHLD has the kernel reap
/// it at once, or reaps every child itself).
enum class child_state { running, exited, gone };

inline child_state peek_child(pid_t pid) noexcept {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  int rc;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) return errno == ECHILD ? child_state::gone : child_state::running;
  return info.si_pid == pid ? child_state::exited : child_state::running;
}



#if LITTLE_LOOPS_CLONE_SPAWN
// The runner's own spawn: clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) on a stack kept per
// thread. It does what posix_spawn with the runner's attributes does in the child (default
// dispositions for every signal, a process group of its own, stdin/stdout/stderr, the working
// directory, an empty signal mask, exec), and the pidfd comes with the clone: no
// pidfd_open(), and no child stack mapped and unmapped per action (about 13 µs of a 650 µs
// `/bin/sh -c true` on the machine it was measured on). Only a program given by path is
// started here, and only when it starts: anything else (clone refused, a failed chdir or
// exec) is reaped and left to posix_spawnp, which reports it as before.
struct clone_spawn_job {
  const char* path;
  char* const* argv;
  char* const* envp;
  int in, out, err;
  const char* cwd;
  int failed_errno;  // set by the child when it could not get to the program
};

// The child, on the parent's memory until it execs: system calls only (no allocation, no
// locks, nothing instrumented), and no signal handler can run (every signal is blocked
// until the exec, and the dispositions are reset before the mask is emptied).
__attribute__((noinline, no_sanitize("address", "undefined"))) inline int clone_spawn_child(void* arg) noexcept {
  auto* job = static_cast<clone_spawn_job*>(arg);
  struct {
    void* handler;  // SIG_DFL
    unsigned long flags;
    void* restorer;
    unsigned long mask;
  } action{nullptr, 0, nullptr, 0};  // the kernel's struct sigaction (x86-64)
  // As glibc's posix_spawn: every signal at its default but glibc's own two (32, 33), ignored.
  for (long sig = 1; sig <= 64; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    action.handler = sig == 32 || sig == 33 ? reinterpret_cast<void*>(1) /* SIG_IGN */ : nullptr;
    ::syscall(SYS_rt_sigaction, sig, &action, nullptr, sizeof(unsigned long));
  }
  unsigned long empty = 0;
  if (::syscall(SYS_setpgid, 0, 0) != 0 || ::syscall(SYS_dup2, job->in, 0) < 0 ||
      ::syscall(SYS_dup2, job->out, 1) < 0 || ::syscall(SYS_dup2, job->err, 2) < 0 ||
      (job->cwd != nullptr && ::syscall(SYS_chdir, job->cwd) != 0) ||
      ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, nullptr, sizeof empty) != 0) {
    job->failed_errno = errno != 0 ? errno : EINVAL;
    ::syscall(SYS_exit, 127);
  }
  ::syscall(SYS_execve, job->path, job->argv, job->envp);
  job->failed_errno = errno != 0 ? errno : ENOEXEC;
  ::syscall(SYS_exit, 127);
  return 127;
}

/// The child's stack, kept per thread, with a guard page below it.
struct clone_spawn_stack {
  static constexpr std::size_t size = 64 * 1024, guard = 4096;
  char* base = nullptr;
  clone_spawn_stack() noexcept {
    void* p = ::mmap(nullptr, size + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) return;
    base = static_cast<char*>(p);
    (void)::mprotect(base, guard, PROT_NONE);  // an overflow faults, rather than writing below
  }
  ~clone_spawn_stack() {
    if (base != nullptr) ::munmap(base, size + guard);
  }
  clone_spawn_stack(const clone_spawn_stack&) = delete;
  clone_spawn_stack& operator=(const clone_spawn_stack&) = delete;
};

/// Starts `job` (see above): the child's pid when the program runs, with `*pidfd` (-1 on a
/// kernel without CLONE_PIDFD); 0 when it could not get to the program (it is reaped:
/// posix_spawnp is to try); -1 when clone() cannot be used here at all (then never again in
/// this process).
inline pid_t clone_spawn(clone_spawn_job& job, int* pidfd) noexcept {
  static std::atomic<bool> unusable{false};
  if (unusable.load(std::memory_order_relaxed)) return -1;
  thread_local clone_spawn_stack stack;
  if (stack.base == nullptr) return -1;
  // Every signal blocked in this thread across the clone (glibc's own ones too): no handler
  // may run in the child, on this thread's memory.
  unsigned long all = ~0UL, old = 0;
  if (::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all) != 0) return -1;
  job.failed_errno = 0;
  *pidfd = -1;
#  ifndef CLONE_PIDFD
  constexpr int CLONE_PIDFD = 0x00001000;  // Linux 5.2
#  endif
  const pid_t pid = ::clone(clone_spawn_child, stack.base + clone_spawn_stack::size + clone_spawn_stack::guard,
                            CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &job, pidfd);
  const int clone_errno = errno;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof old);
  if (pid < 0) {
    if (clone_errno == EINVAL || clone_errno == ENOSYS || clone_errno == EPERM)
      unusable.store(true, std::memory_order_relaxed);  // (an old kernel, a sandbox)
    return -1;
  }
  if (job.failed_errno == 0) {  // the program runs (never started again)
    if (*pidfd >= 0) *pidfd = lift_fd(*pidfd);  // (close-on-exec, as every pidfd)
    return pid;  // (without a pidfd on a kernel before 5.2, which ignores the flag)
  }
  // It did not get to the program: gone, and posix_spawnp's turn.
  if (*pidfd >= 0) ::close(*pidfd);
  *pidfd = -1;
  int status;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return 0;
}
#endif

/// Spawns `req.argv` in a new process group and supervises it: captures stdout/stderr
/// (capped), feeds stdin, enforces the deadline / idle timeout / stop token (TERM to the
/// group, KILL after the grace period), abandons pipes held by descendants once the child
/// has exited, and reaps the child. Failing to start the program is reported like a shell
/// would (exit 127 not found, 126 not executable); other system failures are errors.
inline expected<action_result, error> run_process(const process_request& req) {
  using clock = std::chrono::steady_clock;
  using std::chrono::milliseconds;
  const auto start = clock::now();
  action_result result;

  if (req.argv.empty() || req.argv.front().empty())
    return unexpected(error{errc::action_failed, "empty command line"});
  // A program receives C strings: a NUL byte would silently cut its argument (and the rest
  // of a shell command) short.
  for (const auto& arg : req.argv)
    if (const auto nul = arg.find('\0'); nul != std::string::npos)
      return unexpected(error{errc::action_failed,
                              "the command line holds a NUL byte (at byte " + std::to_string(nul) +
                                  " of an argument): a program cannot be given it"});
  if (req.stop.stop_requested()) {
    result.cancelled = true;
    result.exit_code = 130;
    result.stderr_output = "Action cancelled";
    return result;
  }

  unique_fd out_r, out_w, err_r, err_w, in_r, in_w;
  if (!make_pipe(out_r, out_w) || !make_pipe(err_r, err_w) ||
      (req.stdin_data != nullptr && !make_pipe(in_r, in_w)))
    return unexpected(error{errc::io_error, "cannot create a pipe: " + errno_text(errno)});

  // The file actions depend only on the descriptor numbers and the working directory, which
  // repeat from one action to the next: they are kept per thread and rebuilt when those
  // change (glibc checks every descriptor of an action against RLIMIT_NOFILE, one
  // getrlimit() system call each, on the path between two actions).
  const char* cwd = req.working_directory != nullptr && *req.working_directory != '\0'
                        ? req.working_directory
                        : nullptr;
#if !defined(__GLIBC__) && !defined(__APPLE__)
  if (cwd != nullptr)
    return unexpected(error{errc::action_failed,
                            "working_directory needs posix_spawn_file_actions_addchdir_np"});
#endif
  thread_local spawn_file_actions_cache actions_cache;
  const posix_spawn_file_actions_t* file_actions =
      actions_cache.get(in_r.valid() ? in_r.get() : null_input_fd(), out_w.get(), err_w.get(), cwd);
  if (file_actions == nullptr)
    return unexpected(error{errc::io_error, "cannot set up the spawn: out of memory"});
  spawn_attributes spawn;

  // Own process group (so the whole tree can be signalled), default signal dispositions
  // (a host ignoring SIGPIPE must not make `yes | head` spin) and an empty signal mask.
  sigset_t defaults, empty_mask;
  sigfillset(&defaults);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
  sigemptyset(&empty_mask);
  posix_spawnattr_setflags(&spawn.attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&spawn.attributes, 0);
  posix_spawnattr_setsigdefault(&spawn.attributes, &defaults);
  posix_spawnattr_setsigmask(&spawn.attributes, &empty_mask);

  std::vector<char*> argv;
  argv.reserve(req.argv.size() + 1);
  for (const auto& arg : req.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  thread_local program_lookup_cache programs;
  const char* program = programs.lookup(req.argv.front());
  char* const* envp = req.envp != nullptr ? req.envp : environ;
  pid_t pid = -1;
  unique_fd exit_fd;
  int spawn_rc = -1;
#if LITTLE_LOOPS_CLONE_SPAWN
  if (const int in_fd = in_r.valid() ? in_r.get() : null_input_fd();
      std::strchr(program, '/') != nullptr && in_fd >= 0) {
    clone_spawn_job job{program, argv.data(), envp, in_fd, out_w.get(), err_w.get(), cwd, 0};
    int pidfd = -1;
    if (const pid_t child = clone_spawn(job, &pidfd); child > 0) {
      pid = child;
      exit_fd.reset(pidfd);
      spawn_rc = 0;
    }
  }
#endif
  if (spawn_rc != 0)
    spawn_rc = ::posix_spawnp(&pid, program, file_actions, &spawn.attributes, argv.data(), envp);
  if ((spawn_rc == ENOENT || spawn_rc == ENOTDIR || spawn_rc == EACCES) && program != argv[0]) {
    // the file found before is gone or no longer executable: search again, in the child
    programs.forget(req.argv.front());
    spawn_rc = ::posix_spawnp(&pid, argv[0], file_actions, &spawn.attributes, argv.data(), envp);
  }
  if (spawn_rc != 0) {
    if (spawn_rc == ENOENT || spawn_rc == ENOTDIR || spawn_rc == EACCES || spawn_rc == ENOEXEC ||
        spawn_rc == EPERM) {
      const bool not_found = spawn_rc == ENOENT || spawn_rc == ENOTDIR;
      result.exit_code = not_found ? 127 : 126;
      result.not_started = true;
      result.stderr_output = "little_loops: cannot run \"" + req.argv.front() + "\"";
      if (req.working_directory != nullptr && *req.working_directory != '\0')
        result.stderr_output += std::string(" in \"") + req.working_directory + "\"";
      result.stderr_output += ": " + errno_text(spawn_rc);
      result.duration = std::chrono::duration_cast<milliseconds>(clock::now() - start);
      return result;
    }
    std::string message = "posix_spawn(" + req.argv.front() + ") failed: " + errno_text(spawn_rc);
    if (spawn_rc == E2BIG) {
      // Usually one huge argument (an action with a large `${…}` value pasted in): Linux
      // refuses any single argument over 32 pages (MAX_ARG_STRLEN, 128 KiB).
      std::size_t longest = 0;
      for (const auto& arg : req.argv) longest = std::max(longest, arg.size());
      message += " (its longest argument is " + std::to_string(longest) +
                 " bytes; Linux takes at most 131072 bytes per argument and about a quarter of "
                 "the stack limit in all: pass large values through a file or stdin)";
    }
    return unexpected(error{errc::action_failed, std::move(message)});
  }
#if !defined(__GLIBC__)
  ::setpgid(pid, pid);  // closes the race where posix_spawn may return before the child's
                        // setpgid (glibc's returns after the exec, with the group set)
#endif

  // With a pidfd the exit is seen there, and the output pipes' write ends stay open here
  // until it is: the pipes cannot reach end-of-file while the child is exiting, so the end
  // of an action is one wake-up (as for a plain wait) rather than one per pipe plus one
  // for the exit. Without a pidfd they are closed now and end-of-file is watched for.
  if (!exit_fd.valid()) exit_fd.reset(open_exit_fd(pid));
  if (!exit_fd.valid()) {
    out_w.reset();
    err_w.reset();
  }
  in_r.reset();
  // The output pipes stay blocking: they are read only after poll() reports them ready,
  // when read() does not wait.
  std::size_t stdin_offset = 0;
  if (in_w.valid()) {
    set_nonblocking(in_w.get());
    if (req.stdin_data->empty()) in_w.reset();
  }

  thread_local stop_wakeup wakeup;
  // On every way out: deregister, then empty the wake-up descriptor if a stop may have
  // written to it (the next action must not see this one's stop).
  struct stop_registration {
    stop_wakeup& wakeup;
    const std::stop_token& token;
    std::optional<std::stop_callback<stop_notifier>> callback;
    void reset() noexcept {
      if (!callback) return;
      callback.reset();
      if (token.stop_requested()) wakeup.drain();
    }
    ~stop_registration() { reset(); }
  } stop_cb{wakeup, req.stop, std::nullopt};
  if (req.stop.stop_possible() && wakeup.ready()) stop_cb.callback.emplace(req.stop, stop_notifier{wakeup.write_fd()});
  const int stop_fd = stop_cb.callback ? wakeup.read_fd() : -1;

  capped_buffer out_buf(req.output_limit), err_buf(req.output_limit);
  enum class stop_reason { none, wall, idle, cancel };
  stop_reason reason = stop_reason::none;
  std::optional<clock::time_point> kill_at;
  bool killed_hard = false;
  bool exited = false;
  std::optional<clock::time_point> drain_until;
  auto last_output = start;

  auto begin_stop = [&](stop_reason why, clock::time_point now) {
    reason = why;
    ::kill(-pid, SIGTERM);
    kill_at = now + req.kill_grace;
  };
  auto read_into = [&](unique_fd& fd, capped_buffer& buf, clock::time_point now) {
    char chunk[65536];
    ssize_t n;
    do {
      n = ::read(fd.get(), chunk, sizeof chunk);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      buf.append(chunk, static_cast<std::size_t>(n));
      last_output = now;
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
      fd.reset();
    }
  };

  for (;;) {
    auto now = clock::now();
    if (!exited && reason == stop_reason::none) {
      if (req.stop.stop_requested())
        begin_stop(stop_reason::cancel, now);
      else if (req.deadline && now >= *req.deadline)
        begin_stop(stop_reason::wall, now);
      else if (req.idle_timeout && now - last_output >= *req.idle_timeout)
        begin_stop(stop_reason::idle, now);
    }
    if (kill_at && !killed_hard && !exited && now >= *kill_at) {
      ::kill(-pid, SIGKILL);
      killed_hard = true;
    }
    // (Gone counts as exited: its pipes end, and the status check below reports it.)
    if (!exited && !exit_fd.valid()) exited = peek_child(pid) != child_state::running;
    if (exited && !drain_until) drain_until = now + req.drain_window;
    if (exited && ((!out_r.valid() && !err_r.valid()) || now >= *drain_until)) break;

    // Sleep until something happens or the nearest deadline.
    std::optional<clock::time_point> wake;
    auto consider = [&](clock::time_point t) {
      if (!wake || t < *wake) wake = t;
    };
    if (!exited && reason == stop_reason::none) {
      if (req.deadline) consider(*req.deadline);
      if (req.idle_timeout) consider(last_output + *req.idle_timeout);
    }
    if (kill_at && !killed_hard && !exited) consider(*kill_at);
    if (drain_until) consider(*drain_until);
    if (!exited && !exit_fd.valid()) consider(now + milliseconds(20));  // no pidfd: poll

    pollfd fds[5];
    nfds_t count = 0;
    int out_i = -1, err_i = -1, in_i = -1, exit_i = -1, stop_i = -1;
    if (out_r.valid()) { out_i = static_cast<int>(count); fds[count++] = {out_r.get(), POLLIN, 0}; }
    if (err_r.valid()) { err_i = static_cast<int>(count); fds[count++] = {err_r.get(), POLLIN, 0}; }
    if (in_w.valid()) { in_i = static_cast<int>(count); fds[count++] = {in_w.get(), POLLOUT, 0}; }
    if (exit_fd.valid() && !exited) { exit_i = static_cast<int>(count); fds[count++] = {exit_fd.get(), POLLIN, 0}; }
    if (stop_fd >= 0 && reason == stop_reason::none && !exited) {
      stop_i = static_cast<int>(count);
      fds[count++] = {stop_fd, POLLIN, 0};
    }

    int timeout_ms = -1;
    if (wake) {
      const auto left = std::chrono::ceil<milliseconds>(*wake - now).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, 60'000));
    }
    const int ready = ::poll(fds, count, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      ::kill(-pid, SIGKILL);  // cannot supervise any more: do not leave it running
      int status;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return unexpected(error{errc::io_error, "poll failed: " + errno_text(errno)});
    }
    if (ready == 0) continue;
    now = clock::now();
    // A pipe that reports hang-up without data is at its end: closed without a read().
    auto service = [&](int i, unique_fd& fd, capped_buffer& buf) {
      if (i < 0 || fds[i].revents == 0) return;
      if ((fds[i].revents & (POLLIN | POLLERR | POLLNVAL)) == 0 && (fds[i].revents & POLLHUP) != 0)
        fd.reset();
      else
        read_into(fd, buf, now);
    };
    service(out_i, out_r, out_buf);
    service(err_i, err_r, err_buf);
    if (in_i >= 0 && fds[in_i].revents != 0) {
      if ((fds[in_i].revents & POLLOUT) != 0) {
        const std::string& data = *req.stdin_data;
        const ssize_t n = write_no_sigpipe(in_w.get(), data.data() + stdin_offset,
                                           std::min<std::size_t>(data.size() - stdin_offset, 65536));
        if (n > 0) stdin_offset += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || stdin_offset >= data.size())
          in_w.reset();
      } else {
        in_w.reset();  // reader gone
      }
    }
    if (exit_i >= 0 && fds[exit_i].revents != 0) {
      exited = true;
      // Our write ends go: the pipes now end as soon as no descendant holds them (usually
      // at once; the next poll() sees it).
      out_w.reset();
      err_w.reset();
    }
    if (stop_i >= 0 && fds[stop_i].revents != 0 && reason == stop_reason::none) {
      if (req.stop.stop_requested())
        begin_stop(stop_reason::cancel, now);
      else
        wakeup.drain();  // not this action's stop (e.g. a forked host shares the descriptor)
    }
  }

  // The child must still be ours to reap. A host that ignores SIGCHLD (the kernel then reaps
  // at once) or reaps every child itself has taken its exit status: how the action ended is
  // unknown, an error (never a success), and its process group is not signalled (with the
  // child gone its id may be reused).
  if (peek_child(pid) != child_state::exited) {
    stop_cb.reset();
    return unexpected(error{errc::action_failed,
                            "the action's exit status was collected elsewhere (the host ignores "
                            "SIGCHLD or reaps every child): how it ended is unknown"});
  }
  // Descendants that outlived the child (and possibly still hold our pipes) go now; the
  // child is still an unreaped zombie, so its process-group id cannot have been reused.
  // After a timeout or a stop the whole group goes, kept background jobs included (the TERM
  // already asked them to).
  if (req.kill_leftover_processes || reason != stop_reason::none) ::kill(-pid, SIGKILL);
  stop_cb.reset();
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);

  if (waited == pid && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (waited == pid && WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = -result.signal;  // as Python's subprocess returncode (seed 002)
  }
  result.truncated = out_buf.truncated() || err_buf.truncated();
  result.output = out_buf.finish(req.truncation_marker);
  result.stderr_output = err_buf.finish(req.truncation_marker);
  switch (reason) {
    case stop_reason::none:
      break;
    case stop_reason::wall:
      result.timed_out = true;
      result.exit_code = 124;
      if (result.stderr_output.empty()) result.stderr_output = "Action timed out";
      break;
    case stop_reason::idle:
      result.timed_out = true;
      result.idle_timeout = true;
      result.exit_code = 124;
      if (result.stderr_output.empty())
        result.stderr_output = "Action timed out (no output for " +
                               std::to_string(req.idle_timeout ? req.idle_timeout->count() : 0) +
                               " ms)";
      break;
    case stop_reason::cancel:
      result.cancelled = true;
      if (result.stderr_output.empty()) result.stderr_output = "Action cancelled";
      break;
  }
  result.duration = std::chrono::duration_cast<milliseconds>(clock::now() - start);
  return result;
}

}  // namespace detail

/// Runs actions as child processes with posix_spawn (models ActionRunner).
///
/// Shell actions run as `shell_command + [text]` (default `bash -c text`); prompt and
/// slash-command actions as `prompt_command + [text]` (default `claude
/// --dangerously-skip-permissions -p text`, no shell). Each action gets its own process group;
/// on timeout (request.timeout or options.default_timeout, and request.deadline — whichever
/// comes first), idle timeout or a stop request the group receives SIGTERM, then SIGKILL
/// after options.kill_grace. Exit status: the exit code, or -signal with `signal` set (as
/// Python's subprocess reports it);
/// timeouts report exit code 124 with `timed_out` (and `idle_timeout`) set. `run` is const
/// and may be called from several threads at once.
class posix_process_runner {
 public:
  posix_process_runner() : posix_process_runner(posix_runner_options{}) {}
  explicit posix_process_runner(posix_runner_options options)
      : options_(std::move(options)),
        env_(detail::make_env_block(options_.environment, options_.inherit_environment)) {}

  /// Runs one action to completion (or timeout / cancellation).
  [[nodiscard]] expected<action_result, error> run(const action_request& request) const {
    const std::vector<std::string>* prefix = &options_.shell_command;
    if (request.kind == action_kind::prompt)
      prefix = &options_.prompt_command;
    else if (request.kind == action_kind::slash_command)
      prefix = options_.slash_command.empty() ? &options_.prompt_command : &options_.slash_command;
    if (prefix->empty())
      return unexpected(error{errc::action_failed, "no command configured for this action kind",
                              std::string(request.state)});

    detail::process_request proc = make_process_request(request.stop);
    proc.argv.reserve(prefix->size() + 1);
    proc.argv.assign(prefix->begin(), prefix->end());
    proc.argv.emplace_back(request.text);

    const auto now = std::chrono::steady_clock::now();
    if (request.timeout)
      proc.deadline = now + *request.timeout;
    else if (options_.default_timeout)
      proc.deadline = now + *options_.default_timeout;
    if (request.deadline && (!proc.deadline || *request.deadline < *proc.deadline))
      proc.deadline = request.deadline;
    return detail::run_process(proc);
  }

  /// The options this runner was built with.
  [[nodiscard]] const posix_runner_options& options() const noexcept { return options_; }

  /// A process request pre-filled with this runner's directory, environment and limits
  /// (used by adapters that spawn other commands, e.g. the command judge).
  [[nodiscard]] detail::process_request make_process_request(std::stop_token stop = {}) const {
    detail::process_request proc;
    proc.working_directory =
        options_.working_directory.empty() ? nullptr : options_.working_directory.c_str();
    proc.envp = env_ ? env_->pointers.data() : nullptr;
    proc.idle_timeout = options_.idle_timeout;
    proc.kill_grace = options_.kill_grace;
    proc.drain_window = options_.drain_window;
    proc.output_limit = options_.output_limit;
    proc.truncation_marker = options_.truncation_marker;
    proc.kill_leftover_processes = options_.kill_leftover_processes;
    proc.stop = std::move(stop);
    return proc;
  }

 private:
  posix_runner_options options_;
  std::shared_ptr<const detail::env_block> env_;
};

static_assert(ActionRunner<posix_process_runner>);
static_assert(ActionRunner<const posix_process_runner>);

LITTLE_LOOPS_NAMESPACE_END

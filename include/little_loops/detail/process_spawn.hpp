// little_loops — starting one action's process: its pipes, posix_spawnp (or the clone spawn), exit watching
// SPDX-License-Identifier: MIT
#pragma once

// POSIX only; reached from the opt-in process runner, never from fsm.hpp.

#include <little_loops/config.hpp>
#include <little_loops/detail/clone_spawn.hpp>
#include <little_loops/detail/posix_io.hpp>
#include <little_loops/detail/process_environment.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/syscall.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

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
  /// Run in a cgroup of its own when ours is delegated to us (see detail::action_cgroup);
  /// only with kill_leftover_processes.
  bool use_cgroup = true;
  std::stop_token stop;
};

/// The pipes of one action: stdout and stderr always, stdin when the action has data to feed.
struct process_pipes {
  unique_fd out_r, out_w, err_r, err_w, in_r, in_w;
};

/// A started child: its pid, and (where the system has one) a descriptor readable at its exit.
struct spawned_child {
  pid_t pid = -1;
  unique_fd exit_fd;
};

/// Why `req` cannot be run at all (nothing to run, or an argument a program cannot receive).
inline std::optional<error> check_command_line(const process_request& req) {
  if (req.argv.empty() || req.argv.front().empty())
    return error{errc::action_failed, "empty command line"};
  // A program receives C strings: a NUL byte would silently cut its argument (and the rest
  // of a shell command) short.
  for (const auto& arg : req.argv)
    if (const auto nul = arg.find('\0'); nul != std::string::npos)
      return error{errc::action_failed, "the command line holds a NUL byte (at byte " + std::to_string(nul) +
                                            " of an argument): a program cannot be given it"};
  return std::nullopt;
}

/// Creates the action's pipes (close-on-exec, above the standard descriptors). False (errno
/// set) on failure.
inline bool open_pipes(const process_request& req, process_pipes& p) noexcept {
  return make_pipe(p.out_r, p.out_w) && make_pipe(p.err_r, p.err_w) &&
         (req.stdin_data == nullptr || make_pipe(p.in_r, p.in_w));
}

/// The stdin of actions that get no input: /dev/null, opened once per thread and handed to
/// every child with a dup2 (the child would otherwise open, dup2 and close it before its
/// exec, while posix_spawn keeps the parent waiting: about 1 % of a `sh -c true` here).
/// -1 when it cannot be opened (the child then opens /dev/null itself).
inline int null_input_fd() noexcept {
  thread_local const unique_fd null_input = open_fd("/dev/null", O_RDONLY);
  return null_input.get();
}

/// RAII for a posix_spawn attribute object.
struct spawn_attributes {
  posix_spawnattr_t attributes;
  spawn_attributes() noexcept { posix_spawnattr_init(&attributes); }
  spawn_attributes(const spawn_attributes&) = delete;
  spawn_attributes& operator=(const spawn_attributes&) = delete;
  ~spawn_attributes() { posix_spawnattr_destroy(&attributes); }
};

/// Own process group (so the whole tree can be signalled), default signal dispositions
/// (a host ignoring SIGPIPE must not make `yes | head` spin) and an empty signal mask.
inline void set_action_attributes(posix_spawnattr_t& attributes) noexcept {
  sigset_t defaults, empty_mask;
  sigfillset(&defaults);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
  sigemptyset(&empty_mask);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &empty_mask);
}

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
/// Starts `program` with clone_spawn when it is given by path and stdin has a descriptor;
/// false (nothing started) leaves the start to posix_spawnp.
inline bool clone_spawn_started(const char* program, char* const* argv, char* const* envp, int in_fd,
                                const process_pipes& pipes, const char* cwd, int cgroup_dir,
                                int cgroup_procs, spawned_child& child) noexcept {
  if (std::strchr(program, '/') == nullptr || in_fd < 0) return false;
  clone_spawn_job job{program, argv,      envp, in_fd, pipes.out_w.get(), pipes.err_w.get(),
                      cwd,     cgroup_dir, cgroup_procs, 0};
  int pidfd = -1;
  const pid_t pid = clone_spawn(job, &pidfd);
  if (pid <= 0) return false;
  child.pid = pid;
  child.exit_fd.reset(pidfd);
  return true;
}
#endif

/// Starts `req.argv` in a new process group on `pipes`: 0 when it runs (`child` set), else
/// posix_spawnp's error number (see spawn_failure). Failures to set the start up are errors.
/// `cgroup_dir` and `cgroup_procs` (-1: none) are the action's cgroup and its cgroup.procs:
/// the clone spawn starts the child in it (clone3), or has it write itself in before its
/// exec; posix_spawn cannot, and leaves it in ours.
inline expected<int, error> spawn_child(const process_request& req, const process_pipes& pipes,
                                        spawned_child& child, int cgroup_dir = -1, int cgroup_procs = -1) {
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
  const int in_fd = pipes.in_r.valid() ? pipes.in_r.get() : null_input_fd();
  thread_local spawn_file_actions_cache actions_cache;
  const posix_spawn_file_actions_t* file_actions =
      actions_cache.get(in_fd, pipes.out_w.get(), pipes.err_w.get(), cwd);
  if (file_actions == nullptr)
    return unexpected(error{errc::io_error, "cannot set up the spawn: out of memory"});
  spawn_attributes spawn;
  set_action_attributes(spawn.attributes);

  std::vector<char*> argv;
  argv.reserve(req.argv.size() + 1);
  for (const auto& arg : req.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  thread_local program_lookup_cache programs;
  const char* program = programs.lookup(req.argv.front());
  char* const* envp = req.envp != nullptr ? req.envp : environ;
  int spawn_rc = -1;
#if LITTLE_LOOPS_CLONE_SPAWN
  if (clone_spawn_started(program, argv.data(), envp, in_fd, pipes, cwd, cgroup_dir, cgroup_procs, child))
    spawn_rc = 0;
#else
  (void)cgroup_dir;
  (void)cgroup_procs;
#endif
  if (spawn_rc != 0)
    spawn_rc = ::posix_spawnp(&child.pid, program, file_actions, &spawn.attributes, argv.data(), envp);
  if ((spawn_rc == ENOENT || spawn_rc == ENOTDIR || spawn_rc == EACCES) && program != argv[0]) {
    // the file found before is gone or no longer executable: search again, in the child
    programs.forget(req.argv.front());
    spawn_rc = ::posix_spawnp(&child.pid, argv[0], file_actions, &spawn.attributes, argv.data(), envp);
  }
#if !defined(__GLIBC__)
  if (spawn_rc == 0)
    ::setpgid(child.pid, child.pid);  // closes the race where posix_spawn may return before the
                                      // child's setpgid (glibc's returns after the exec, with
                                      // the group set)
#endif
  return spawn_rc;
}

/// What a failed start (posix_spawnp's `spawn_rc`) reports: a program that cannot be run
/// ends like a shell's (exit 127 not found, 126 not executable); anything else is an error.
inline expected<action_result, error> spawn_failure(const process_request& req, int spawn_rc,
                                                    std::chrono::steady_clock::time_point start) {
  if (spawn_rc == ENOENT || spawn_rc == ENOTDIR || spawn_rc == EACCES || spawn_rc == ENOEXEC ||
      spawn_rc == EPERM) {
    action_result result;
    const bool not_found = spawn_rc == ENOENT || spawn_rc == ENOTDIR;
    result.exit_code = not_found ? 127 : 126;
    result.not_started = true;
    result.stderr_output = "little_loops: cannot run \"" + req.argv.front() + "\"";
    if (req.working_directory != nullptr && *req.working_directory != '\0')
      result.stderr_output += std::string(" in \"") + req.working_directory + "\"";
    result.stderr_output += ": " + errno_text(spawn_rc);
    result.duration =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
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

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — run_process: one action's process from start to exit status, top-down
// SPDX-License-Identifier: MIT
#pragma once

// POSIX only; reached from the opt-in process runner, never from fsm.hpp.

#include <little_loops/config.hpp>
#include <little_loops/detail/posix_io.hpp>
#include <little_loops/detail/process_capture.hpp>
#include <little_loops/detail/process_cgroup.hpp>
#include <little_loops/detail/process_spawn.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// The result of an action whose stop was requested before it started.
inline action_result cancelled_before_start() {
  action_result result;
  result.cancelled = true;
  result.exit_code = 130;
  result.stderr_output = "Action cancelled";
  return result;
}

/// Reaps the supervised child, first killing what is left of its process group (and of its
/// cgroup) when asked to or after a stop. Its wait status; nullopt when waitpid() does not
/// report it.
inline expected<std::optional<int>, error> reap_child(const process_request& req, pid_t pid,
                                                      stop_reason reason, stop_registration& stop,
                                                      const action_cgroup& cgroup) {
  // The child must still be ours to reap. A host that ignores SIGCHLD (the kernel then reaps
  // at once) or reaps every child itself has taken its exit status: how the action ended is
  // unknown, an error (never a success), and its process group is not signalled (with the
  // child gone its id may be reused).
  if (peek_child(pid) != child_state::exited) {
    stop.reset();
    return unexpected(error{errc::action_failed,
                            "the action's exit status was collected elsewhere (the host ignores "
                            "SIGCHLD or reaps every child): how it ended is unknown"});
  }
  // Descendants that outlived the child (and possibly still hold our pipes) go now; the
  // child is still an unreaped zombie, so its process-group id cannot have been reused.
  // After a timeout or a stop the whole group goes, kept background jobs included (the TERM
  // already asked them to).
  // The cgroup holds those that left the group too (setsid).
  if (req.kill_leftover_processes || reason != stop_reason::none) {
    ::kill(-pid, SIGKILL);
    cgroup.kill();
  }
  stop.reset();
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited != pid) return std::optional<int>{};
  return std::optional<int>{status};
}

/// Marks how a stopped action ended (timeouts: exit code 124), with a default message when
/// it wrote nothing to stderr.
inline void report_stop(action_result& result, stop_reason reason, const process_request& req) {
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
}

/// The action's result from its wait status and what supervision captured.
inline action_result finish_result(const process_request& req, std::optional<int> status,
                                   process_supervisor& supervised,
                                   std::chrono::steady_clock::time_point start) {
  action_result result;
  if (status && WIFEXITED(*status)) {
    result.exit_code = WEXITSTATUS(*status);
  } else if (status && WIFSIGNALED(*status)) {
    result.signal = WTERMSIG(*status);
    result.exit_code = -result.signal;  // as Python's subprocess returncode (seed 002)
  }
  result.truncated = supervised.out().truncated() || supervised.err().truncated();
  if (result.truncated) result.output_limit = req.output_limit;
  result.output = supervised.out().finish(req.truncation_marker);
  result.stderr_output = supervised.err().finish(req.truncation_marker);
  report_stop(result, supervised.reason(), req);
  result.duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  return result;
}

/// Spawns `req.argv` in a new process group (and, where ours is delegated to us, a cgroup of
/// its own, removed at the end) and supervises it: captures stdout/stderr
/// (capped), feeds stdin, enforces the deadline / idle timeout / stop token (TERM to the
/// group, KILL after the grace period), abandons pipes held by descendants once the child
/// has exited, and reaps the child. Failing to start the program is reported like a shell
/// would (exit 127 not found, 126 not executable); other system failures are errors.
inline expected<action_result, error> run_process(const process_request& req) {
  const auto start = std::chrono::steady_clock::now();
  if (auto refused = check_command_line(req)) return unexpected(std::move(*refused));
  if (req.stop.stop_requested()) return cancelled_before_start();

  process_pipes pipes;
  if (!open_pipes(req, pipes))
    return unexpected(error{errc::io_error, "cannot create a pipe: " + errno_text(errno)});
  // (Declared before the child: whatever path this returns by, the cgroup's processes are
  // killed and the cgroup removed.) Only the clone spawn can place the child in it.
  const bool contain = LITTLE_LOOPS_CLONE_SPAWN && req.use_cgroup && req.kill_leftover_processes;
  const action_cgroup cgroup = action_cgroup::create(contain ? delegated_cgroup() : std::string());
  spawned_child child;
  const auto spawned = spawn_child(req, pipes, child, cgroup.directory_fd(), cgroup.procs_fd());
  if (!spawned) return unexpected(spawned.error());
  if (*spawned != 0) return spawn_failure(req, *spawned, start);
  prepare_capture(req, pipes, child);

  thread_local stop_wakeup wakeup;
  stop_registration stop(wakeup, req.stop);
  process_supervisor supervised(req, child, pipes, stop, start);
  if (auto ran = supervised.run(); !ran) return unexpected(ran.error());
  const auto status = reap_child(req, child.pid, supervised.reason(), stop, cgroup);
  if (!status) return unexpected(status.error());
  return finish_result(req, *status, supervised, start);
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

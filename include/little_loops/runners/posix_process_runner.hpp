// little_loops — POSIX process runner: runs actions with posix_spawn, bounded capture, timeouts, cancellation
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::posix); fsm.hpp never includes it. The work is
// done in detail/: run_process.hpp (one action, top-down), process_spawn.hpp (starting it),
// clone_spawn.hpp (the Linux spawn of its own), process_capture.hpp (supervising it),
// process_environment.hpp (environment block, PATH lookup), process_cgroup.hpp (cgroup
// containment) and posix_io.hpp (descriptors).

#include <little_loops/concepts.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/process_cgroup.hpp>
#include <little_loops/detail/process_environment.hpp>
#include <little_loops/detail/run_process.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// How the processes of one action are held together, so that cleanup can kill them all.
enum class process_containment {
  /// A cgroup of its own per action where this process's cgroup v2 group is delegated to it
  /// (writable; Linux); the cgroup is killed and removed at the action's end, so a process
  /// that left the action's process group (`setsid`) goes too. Elsewhere: process_group.
  automatic,
  /// The action's process group alone (a process that starts a session of its own escapes).
  process_group,
};

/// Whether actions get cgroups of their own under process_containment::automatic here: this
/// process's cgroup v2 group is delegated to it (found through /proc/self/mountinfo and
/// /proc/self/cgroup), and the runner's own spawn is used (Linux x86-64 with glibc).
[[nodiscard]] inline bool cgroup_containment_available() {
  return LITTLE_LOOPS_CLONE_SPAWN && !detail::delegated_cgroup().empty();
}

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
  /// The option that gives a prompt or slash-command action its agent (a state's `agent:`,
  /// action_request::agent): the argv is then the prefix, this option, the agent and the
  /// text (`claude --dangerously-skip-permissions -p --agent NAME TEXT`, as the reference's
  /// Claude runner passes it). Empty: the agent is not passed.
  std::string agent_option = "--agent";
  /// argv prefix of `mcp_tool` actions: the action's `server/tool` and its params (JSON) are
  /// appended as two arguments, as the reference runs `mcp-call SERVER/TOOL PARAMS`.
  std::vector<std::string> mcp_command{"mcp-call"};
  /// Timeout of `mcp_tool` actions whose request has none (the reference's 30 s).
  std::optional<std::chrono::milliseconds> mcp_default_timeout = std::chrono::seconds(30);
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
  /// How an action's processes are held together (see process_containment); cgroups are
  /// used only with kill_leftover_processes.
  process_containment containment = process_containment::automatic;
};

class posix_process_runner;

namespace detail {
/// A process request pre-filled with `runner`'s directory, environment and limits (used by
/// adapters that spawn other commands, e.g. the command judge).
process_request make_process_request(const posix_process_runner& runner, std::stop_token stop = {});
}  // namespace detail

/// Runs actions as child processes with posix_spawn (models ActionRunner).
///
/// Shell actions run as `shell_command + [text]` (default `bash -c text`); prompt and
/// slash-command actions as `prompt_command + [text]` (default `claude
/// --dangerously-skip-permissions -p text`, no shell), with `agent_option` and the agent
/// before the text when the request names one, and `LL_AUTOMATION=1`,
/// `LL_AUTOMATION_PROFILE=<name>` in the environment when it names an automation profile;
/// mcp_tool actions as `mcp_command + [text, params]` (default `mcp-call SERVER/TOOL JSON`,
/// timeout 30 s unless the request has one). Each action gets its own process group
/// (and, see process_containment, its own cgroup where ours is delegated to us); on timeout (request.timeout or options.default_timeout, and request.deadline — whichever
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
    else if (request.kind == action_kind::mcp_tool)
      prefix = &options_.mcp_command;
    if (prefix->empty())
      return unexpected(error{errc::action_failed,
                              "not run: no command is configured for " +
                                  std::string(to_string(request.kind)) + " actions",
                              std::string(request.state)});

    detail::process_request proc = detail::make_process_request(*this, request.stop);
    const std::string working_dir(request.working_dir);  // a sub-loop's worktree
    if (!working_dir.empty()) proc.working_directory = working_dir.c_str();
    proc.argv.reserve(prefix->size() + 3);
    proc.argv.assign(prefix->begin(), prefix->end());
    const bool prompt = request.kind == action_kind::prompt || request.kind == action_kind::slash_command;
    if (prompt && !request.agent.empty() && !options_.agent_option.empty()) {
      proc.argv.push_back(options_.agent_option);
      proc.argv.emplace_back(request.agent);
    }
    proc.argv.emplace_back(request.text);
    if (request.kind == action_kind::mcp_tool)
      proc.argv.emplace_back(request.params.empty() ? std::string_view("{}") : request.params);
    // A pruning profile: LL_AUTOMATION=1 and LL_AUTOMATION_PROFILE=<name> on top of the
    // environment actions get (what automation-aware hooks of the agent CLI read).
    std::optional<detail::env_block> profiled;
    if (prompt && !request.automation_profile.empty()) {
      profiled = detail::build_env_block(
          proc.envp != nullptr ? proc.envp : environ,
          {{"LL_AUTOMATION", "1"}, {"LL_AUTOMATION_PROFILE", std::string(request.automation_profile)}});
      proc.envp = profiled->pointers.data();
    }

    const auto now = std::chrono::steady_clock::now();
    const auto& fallback =
        request.kind == action_kind::mcp_tool ? options_.mcp_default_timeout : options_.default_timeout;
    if (request.timeout)
      proc.deadline = now + *request.timeout;
    else if (fallback)
      proc.deadline = now + *fallback;
    if (request.deadline && (!proc.deadline || *request.deadline < *proc.deadline))
      proc.deadline = request.deadline;
    return detail::run_process(proc);
  }

  /// The options this runner was built with.
  [[nodiscard]] const posix_runner_options& options() const noexcept { return options_; }

 private:
  friend detail::process_request detail::make_process_request(const posix_process_runner&, std::stop_token);

  posix_runner_options options_;
  std::shared_ptr<const detail::env_block> env_;
};

static_assert(ActionRunner<posix_process_runner>);
static_assert(ActionRunner<const posix_process_runner>);

namespace detail {
inline process_request make_process_request(const posix_process_runner& runner, std::stop_token stop) {
  const posix_runner_options& options = runner.options_;
  process_request proc;
  proc.working_directory =
      options.working_directory.empty() ? nullptr : options.working_directory.c_str();
  proc.envp = runner.env_ ? runner.env_->pointers.data() : nullptr;
  proc.idle_timeout = options.idle_timeout;
  proc.kill_grace = options.kill_grace;
  proc.drain_window = options.drain_window;
  proc.output_limit = options.output_limit;
  proc.truncation_marker = options.truncation_marker;
  proc.kill_leftover_processes = options.kill_leftover_processes;
  proc.use_cgroup = options.containment == process_containment::automatic;
  proc.stop = std::move(stop);
  return proc;
}
}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END

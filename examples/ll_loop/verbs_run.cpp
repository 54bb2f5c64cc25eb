// little_loops — ll-loop: run, resume (real processes, journal, signals) and simulate
// SPDX-License-Identifier: MIT
#include "display.hpp"
#include "inputs.hpp"
#include "learning_registry.hpp"
#include "loading.hpp"
#include "verbs.hpp"

#include <little_loops/evaluators.hpp>
#include <little_loops/executor.hpp>
#include <little_loops/journal.hpp>
#include <little_loops/judges/command_judge.hpp>
#include <little_loops/runners/posix_process_runner.hpp>
#include <little_loops/scripted_runner.hpp>
#include <little_loops/snapshot.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stop_token>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <spawn.h>
#include <unistd.h>

namespace ll_loop {

namespace {

// Every action of a run carries LL_LOOP_RUN_ID=<id of the run> in its environment (set once
// in the runner's environment: nothing per step). When ll-loop dies without cleaning up
// (kill -9, a crash), the action it was running lives on in its own process group;
// `resume` finds such leftovers by this variable and stops them before it runs the state
// again, so the same action never runs twice at once.
constexpr std::string_view run_id_variable = "LL_LOOP_RUN_ID";

std::string new_run_id() {
  return fmt::format("{}-{}", ::getpid(),
                     std::chrono::system_clock::now().time_since_epoch().count());
}

// Processes (other than this one, its group and its parent) whose environment holds
// LL_LOOP_RUN_ID=<run_id>; zombies (empty environ) and other users' processes (unreadable)
// are skipped.
std::vector<pid_t> processes_of_run(const std::string& run_id) {
  const std::string entry = fmt::format("{}={}", run_id_variable, run_id);
  const pid_t self = ::getpid();
  const pid_t parent = ::getppid();
  const pid_t own_group = ::getpgrp();
  std::vector<pid_t> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (pid == self || pid == parent || ::getpgid(pid) == own_group) continue;
    std::ifstream in(it->path() / "environ", std::ios::binary);
    if (!in) continue;
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::size_t pos = 0; pos < env.size();) {
      std::size_t end_of = env.find('\0', pos);
      if (end_of == std::string::npos) end_of = env.size();
      if (std::string_view(env).substr(pos, end_of - pos) == entry) {
        out.push_back(pid);
        break;
      }
      pos = end_of + 1;
    }
  }
  return out;
}

// Stops what a dead run left running: SIGTERM to each leftover's process group and to
// itself, then SIGKILL after `grace` for whatever is still there. Returns how many were found.
std::size_t stop_leftovers_of_run(const std::string& run_id,
                                  std::chrono::milliseconds grace = std::chrono::seconds(2)) {
  std::vector<pid_t> left = processes_of_run(run_id);
  const std::size_t found = left.size();
  const pid_t own_group = ::getpgrp();
  for (const int sig : {SIGTERM, SIGKILL}) {
    if (left.empty()) break;
    for (const pid_t pid : left) {
      const pid_t group = ::getpgid(pid);
      if (group > 1 && group != own_group) ::kill(-group, sig);
      ::kill(pid, sig);
    }
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      left = processes_of_run(run_id);
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------
// Ctrl-C / SIGTERM: the handler only writes a byte to a self-pipe; a watcher thread turns it
// into a stop request on the executor (stop_source is not async-signal-safe). The first
// stop asks the action to end (SIGTERM, then SIGKILL after the runner's grace); a second
// signal kills the action's process group at once, says so, and ends ll-loop if the run
// does not end by itself within 2 s; a third gets the default action.

std::atomic<int> g_signal_pipe_write{-1};
std::atomic<int> g_signal_count{0};

extern "C" void on_stop_signal(int sig) {
  const int saved = errno;
  const int count = g_signal_count.fetch_add(1);
  const int fd = g_signal_pipe_write.load();
  if (count >= 2 || fd < 0) {
    std::signal(sig, SIG_DFL);
    ::raise(sig);
  }
  const char byte = count == 0 ? 's' : 'k';
  [[maybe_unused]] const auto n = ::write(fd, &byte, 1);
  errno = saved;
}

/// Installs the handlers for its lifetime; calls `source.request_stop()` from a watcher
/// thread when SIGINT/SIGTERM arrives or the stop-request file appears.
class stop_signals {
 public:
  stop_signals(std::stop_source source, fs::path stop_file, std::string run_id)
      : source_(std::move(source)), stop_file_(std::move(stop_file)), run_id_(std::move(run_id)) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    g_signal_count = 0;
    g_signal_pipe_write = write_fd_;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
    ::sigaction(SIGHUP, &sa, &old_hup_);
    watcher_ = std::thread([this] { watch(); });
  }
  stop_signals(const stop_signals&) = delete;
  stop_signals& operator=(const stop_signals&) = delete;
  ~stop_signals() {
    if (write_fd_ < 0) return;
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGHUP, &old_hup_, nullptr);
    g_signal_pipe_write = -1;
    done_ = true;
    const char byte = 'q';
    [[maybe_unused]] const auto n = ::write(write_fd_, &byte, 1);
    if (watcher_.joinable()) watcher_.join();
    ::close(read_fd_);
    ::close(write_fd_);
  }
  [[nodiscard]] bool signalled() const noexcept { return signalled_; }

 private:
  void watch() {
    while (!done_) {
      pollfd p{read_fd_, POLLIN, 0};
      const int n = ::poll(&p, 1, 200);  // also look for the stop file 5× a second
      if (n > 0) {
        char byte = 0;
        if (::read(read_fd_, &byte, 1) != 1) continue;
        if (byte == 's') {
          signalled_ = true;
          source_.request_stop();
        } else if (byte == 'k') {
          kill_action();
        }
        continue;
      }
      std::error_code ec;
      if (!stop_file_.empty() && fs::exists(stop_file_, ec)) {
        signalled_ = true;
        source_.request_stop();
      }
    }
  }

  // The second interrupt: SIGKILL to the running action's process group, said on stderr;
  // the run then ends as interrupted, or ll-loop exits with 130 after 2 s if it does not.
  void kill_action() {
    signalled_ = true;
    source_.request_stop();
    const std::size_t killed = stop_leftovers_of_run(run_id_, std::chrono::milliseconds(0));
    say_note(killed == 0 ? std::string("Interrupted again: no action process was left to kill")
                         : fmt::format("Interrupted again: killed the running action's process "
                                       "group ({} process{})",
                                       killed, killed == 1 ? "" : "es"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done_ && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!done_) std::_Exit(130);
  }

  std::stop_source source_;
  fs::path stop_file_;
  std::string run_id_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
  std::atomic<bool> done_{false};
  std::atomic<bool> signalled_{false};
  std::thread watcher_;
};

// ---------------------------------------------------------------------------------------
// The sink of a real run: progress display + event journal.

/// The last action that failed (non-zero exit, timeout, signal): `last_failed_action` of
/// `--json`, with the last lines of its stderr.
struct failed_action {
  bool seen = false;
  std::string state;
  int exit_code = 0;
  std::vector<std::string> stderr_tail;
};

struct display_forward {
  progress_display* display = nullptr;
  failed_action* failed = nullptr;
  void on_event(const ll::loop_event& event) noexcept {
    if (display != nullptr) display->on_event(event);
    const auto* done = std::get_if<ll::action_complete_event>(&event);
    if (failed == nullptr || done == nullptr || (done->exit_code == 0 && !done->timed_out && done->signal == 0))
      return;
    try {
      *failed = {true, std::string(done->state), done->exit_code, last_lines(done->stderr_output, 5)};
    } catch (...) {  // NOLINT(bugprone-empty-catch): a report must not stop the run
    }
  }
};

using run_sink = ll::journal_event_sink<display_forward>;

load_failure failure_of(const ll::error& e, const loaded_loop& loaded) {
  load_failure f;
  f.message = e.message;
  f.diagnostics = e.details;
  for (const auto& d : e.details) f.lines.push_back(loaded.describe(d));
  f.path = loaded.path;
  return f;
}

/// Everything `run` and `resume` share.
struct run_settings {
  std::string shown_name;             ///< what the user typed (for messages)
  loaded_loop loaded;
  ll::json context_overrides = ll::json::object();
  std::optional<long long> max_iterations;
  bool no_llm = false;
  bool quiet = false;
  bool verbose = false;               ///< show every action's output
  bool as_json = false;
  bool queue = false;                 ///< wait for a conflicting scope instead of refusing
  fs::path journal_dir{std::string(ll::default_journal_dir)};
  std::optional<std::vector<std::string>> shell_command;   ///< argv words (split_command_words)
  std::optional<std::vector<std::string>> prompt_command;
  std::optional<std::vector<std::string>> judge_command;
  std::optional<long long> output_limit;
  std::optional<ll::snapshot> resume_from;
  std::string started_at;             ///< kept across resumes
  std::string run_dir;                ///< `.loops/runs/<instance>/`, kept across resumes
};

/// What `run` and `resume` change in the loop before its validation: `--max-iterations`
/// and `--no-llm`. True when `--no-llm` turned off an LLM the loop enables.
bool apply_run_settings(ll::fsm_loop& loop, const run_settings& s) {
  if (s.max_iterations) loop.max_iterations = static_cast<int>(*s.max_iterations);
  const bool turned_off = s.no_llm && loop.llm.enabled;
  if (s.no_llm) loop.llm.enabled = false;
  return turned_off;
}

/// The load's warnings (stderr); without `llm-disabled` when `--no-llm` caused it.
void say_load_warnings(const loaded_loop& loaded, bool llm_turned_off) {
  for (const auto& d : loaded.diagnostics)
    if (d.level == ll::severity::warning && !(llm_turned_off && d.code == "llm-disabled"))
      say_warning(d.path.empty() ? d.message : fmt::format("{}: {}", d.path, d.message));
}

int exit_code_for(const ll::execution_result& r) {
  if (r.terminated_by == ll::termination::terminal) return r.failure ? exit_failure_terminal : exit_ok;
  return exit_failed;
}

// The `--json` result: the fixed key set, `error` null when the run has none
// (to_json(execution_result) leaves it out then, as the original's to_dict does).
ll::json result_json(const ll::execution_result& r, ll::loop_dialect dialect) {
  const ll::json full = ll::to_json(r);
  ll::json out = ll::json::object();
  for (const char* key : {"final_state", "iterations", "terminated_by", "duration_ms", "captured"})
    out[key] = full.at(key);
  const auto error = full.find("error");
  out["error"] = error != full.end() ? *error : ll::json(nullptr);
  out["dialect"] = ll::to_string(dialect);
  return out;
}

/// The end of a run, for every outcome. The first line is the Python original's, whatever
/// the outcome (`Loop completed: <final> (N iterations, T)`, or after `resume`
/// `Resumed and completed: …`); when the run did not end in a success terminal, indented
/// lines say how it ended (and how to go on), and an error's text follows on stderr.
///   Loop completed: broken (2 iterations, 0.0s)
///     ✗ failure terminal
///   Loop completed: check (4 iterations, 0.0s)
///     stopped by max_iterations
///   Loop completed: build (2 iterations, 3.1s)
///     interrupted at build
///     Resume with: ll-loop resume my-loop
///   Loop completed: plan (1 iterations, 0.2s)
///     context handoff: <the continuation, on one line>
///     Resume with: ll-loop resume my-loop (continues at build)
/// (`on_handoff: spawn` adds `Continuation session started (pid N)`; `on_handoff: terminate`
/// says `on_handoff: terminate: the run ends here (not resumable)` instead of how to resume.)
void print_run_summary(const ll::execution_result& result, const std::string& resume_state,
                       const std::string& loop_name, bool resumed, const style& out_style,
                       std::optional<pid_t> continuation_pid = std::nullopt) {
  say(fmt::format("{}: {} ({} iterations, {})", resumed ? "Resumed and completed" : "Loop completed",
                  result.final_state, result.iterations,
                  format_duration_summary(result.duration_ms)));
  const std::string cross = out_style.red("\u2717");
  switch (result.terminated_by) {
    case ll::termination::terminal:
      if (result.failure) say(fmt::format("  {} failure terminal", cross));
      break;
    case ll::termination::cancelled:
      say(fmt::format("  interrupted at {}", resume_state));
      say(fmt::format("  Resume with: ll-loop resume {}", loop_name));
      break;
    case ll::termination::handoff:
      say(fmt::format("  context handoff: {}", one_line(result.signal_payload, 500)));
      if (result.on_handoff == ll::handoff_policy::terminate) {
        say("  on_handoff: terminate: the run ends here (not resumable)");
        break;
      }
      if (continuation_pid)
        say(fmt::format("  Continuation session started (pid {})", *continuation_pid));
      say(fmt::format("  Resume with: ll-loop resume {} (continues at {})", loop_name,
                      resume_state));
      break;
    case ll::termination::error:
      say(fmt::format("  {} stopped by error", cross));
      break;
    case ll::termination::max_iterations:
    case ll::termination::timeout:
      say(fmt::format("  stopped by {}", ll::to_string(result.terminated_by)));
      break;
  }
  if (result.error) say_error(result.error->message);
}

/// Claims the loop's scope (its `scope:` with context values filled in; none: the working
/// directory) in the journal directory, as the original's LockManager: false, after saying
/// why, when another running loop's scope overlaps it (with --queue: after waiting up to an
/// hour for it, a look every second) or the claim cannot be made.
bool claim_loop_scope(ll::loop_journal& journal, const ll::fsm_loop& loop, const run_settings& s,
                      const ll::json& injected, const std::function<void(const ll::error&)>& report) {
  // The scope sees the injected context too (`scope: ["${context.run_dir}"]`).
  ll::json context = loop.context;
  for (auto it = injected.begin(); it != injected.end(); ++it)
    if (context.is_object() && !context.contains(it.key())) context[it.key()] = it.value();
  const std::vector<std::string> scope = ll::resolve_scope(loop.scope, context);
  using clock = std::chrono::steady_clock;
  const auto give_up = clock::now() + std::chrono::hours(1);
  bool announced = false;
  for (;;) {
    auto claimed = journal.claim_scope(scope, loop.singleton);
    if (!claimed) {
      if (claimed.error().code == ll::errc::io_error)
        report(claimed.error());
      else
        say_error(fmt::format("Invalid scope: {}", claimed.error().message));
      return false;
    }
    if (!claimed->has_value()) return true;
    const ll::scope_claim& other = **claimed;
    if (!s.queue) {
      say_error(fmt::format("Scope conflict with running loop: {}", other.loop_name));
      say_note(fmt::format("  Conflicting scope: {}", python_repr(ll::json(other.scope))));
      say_note("  Use --queue to wait for it to finish");
      return false;
    }
    if (!announced) {
      say_note(fmt::format("Waiting for conflicting loop '{}' to finish...", other.loop_name));
      announced = true;
    }
    if (clock::now() >= give_up) {
      say_error("Timeout waiting for scope to become available");
      return false;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

/// `on_handoff: spawn`: starts `command + [prompt]` (the prompt command) detached — its own
/// session, stdin/stdout/stderr on /dev/null, not waited for — with the original's prompt:
/// `Continue loop execution. Run: ll-loop resume NAME`, then a blank line and the
/// continuation when there is one. The pid, or why it could not be started.
ll::expected<pid_t, std::string> spawn_continuation(const std::vector<std::string>& command,
                                                    const std::string& loop_name,
                                                    const std::string& continuation) {
  std::string prompt = "Continue loop execution. Run: ll-loop resume " + loop_name;
  if (!continuation.empty()) prompt += "\n\n" + continuation;
  std::vector<std::string> words = command;
  words.push_back(std::move(prompt));
  for (const auto& w : words)
    if (w.find('\0') != std::string::npos) return ll::unexpected(std::string("a NUL byte in the command"));
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return ll::unexpected(fmt::format("cannot start {}: {}", words.front(), std::strerror(rc)));
  return pid;
}

/// True, after saying so, when the journal says another live process runs the loop.
bool running_elsewhere(const fs::path& journal_dir, const std::string& name) {
  auto existing = ll::load_journal_summary(journal_dir, name);
  if (!existing || !existing->has_value()) return false;
  const ll::journal_record& r = **existing;
  // (A record without a pid, the original's, names no process that could be running.)
  if (r.status != ll::journal_status::running || r.pid <= 0 || r.pid == static_cast<long>(::getpid()))
    return false;
  say_error(fmt::format("Loop already running: {} (pid {})", name, r.pid));
  return true;
}

/// The action runner's options: the run's settings, and LL_LOOP_RUN_ID in the environment.
ll::posix_runner_options runner_options(const run_settings& s, const std::string& run_id) {
  ll::posix_runner_options opts;
  opts.environment.emplace_back(std::string(run_id_variable), run_id);
  if (s.shell_command) opts.shell_command = *s.shell_command;
  if (s.prompt_command) opts.prompt_command = *s.prompt_command;
  // --no-llm: no prompt or slash-command action runs (each is the `error` verdict).
  if (s.no_llm) opts.prompt_command.clear();
  if (s.output_limit) opts.output_limit = static_cast<std::size_t>(*s.output_limit);
  return opts;
}

/// `text` without leading and trailing white space.
std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1));
}

/// `text` as one POSIX shell word.
std::string shell_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// `worktree:` of sub-loop states: a scratch git worktree under .loops/worktrees/, attached
/// to the existing branch (`git worktree add`), removed when the child ends (`git worktree
/// remove --force`; the branch stays). git runs through `runner`, in the working directory.
/// A relative `run_dir` of the child is anchored here, so the child writes where its parent
/// reads.
void give_worktrees(ll::executor_options& options, const ll::posix_process_runner& runner) {
  const auto git = [&runner](const std::string& text) -> ll::expected<ll::action_result, ll::error> {
    ll::action_request req;
    req.state = "worktree";
    req.text = text;
    req.timeout = std::chrono::seconds(120);
    return runner.run(req);
  };
  options.attach_worktree = [git](std::string_view branch, ll::json& child) -> ll::expected<std::string, std::string> {
    std::string safe(branch);
    for (char& c : safe)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '-';
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::array<char, 32> stamp{};
    std::strftime(stamp.data(), stamp.size(), "%Y%m%d-%H%M%S", &local);
    const fs::path dir = fs::absolute(fs::path(".loops") / "worktrees" / fmt::format("{}-subloop-{}", stamp.data(), safe));
    std::error_code ec;
    fs::create_directories(dir.parent_path(), ec);
    auto r = git(fmt::format("git worktree add {} {}", shell_quoted(dir.string()), shell_quoted(branch)));
    if (!r) return ll::unexpected(r.error().message);
    if (r->exit_code != 0)
      return ll::unexpected(trimmed(r->stderr_output.empty() ? r->output : r->stderr_output));
    if (const auto run_dir = child.find("run_dir"); run_dir != child.end() && run_dir->is_string())
      *run_dir = fs::absolute(run_dir->get<std::string>()).string();
    return dir.string();
  };
  options.detach_worktree = [git](std::string_view path) {
    auto r = git("git worktree remove --force " + shell_quoted(path));
    if (!r || r->exit_code != 0)
      say_error(fmt::format("could not remove the worktree {}: {}", path,
                            r ? trimmed(r->stderr_output) : r.error().message));
  };
}

/// The LLM judge's options: a command with the prompt on stdin (default: the Claude CLI),
/// cancelled by `stop` (Ctrl-C cancels a running judge command too).
ll::command_judge_options judge_options(const run_settings& s, std::stop_token stop) {
  ll::command_judge_options opts;
  if (s.judge_command) opts.command = *s.judge_command;
  opts.stop = std::move(stop);
  return opts;
}

/// The record a run starts from: where the loop came from and the run settings `resume`
/// reuses unless it is given its own.
ll::journal_record initial_record(const run_settings& s, const std::string& run_id) {
  ll::journal_record record;
  record.name = s.loaded.loop().name;
  record.pid = static_cast<long>(::getpid());
  record.loop_path = s.loaded.path.string();
  record.started_at = s.started_at;
  record.extra = {{"context", s.context_overrides}, {"no_llm", s.no_llm}, {"run_id", run_id}};
  if (!s.run_dir.empty()) record.extra["run_dir"] = s.run_dir;
  if (s.max_iterations) record.extra["max_iterations"] = *s.max_iterations;
  if (s.shell_command) record.extra["shell_command"] = *s.shell_command;
  if (s.prompt_command) record.extra["prompt_command"] = *s.prompt_command;
  if (s.judge_command) record.extra["judge_command"] = *s.judge_command;
  if (s.output_limit) record.extra["output_limit"] = *s.output_limit;
  return record;
}

/// How the run ended, in the final record's `extra` (for `status` and `resume`).
void record_ending(ll::journal_record& record, const ll::execution_result& result) {
  record.extra["terminated_by"] = std::string(ll::to_string(result.terminated_by));
  record.extra["error"] = result.error ? ll::json(result.error->message) : ll::json(nullptr);
  if (result.signal && *result.signal == ll::signal_kind::handoff)
    record.extra["continuation"] = result.signal_payload;
}

/// on_handoff: spawn starts a detached session told to resume the run, once the run's
/// final record is written and its journal closed (lock and scope claim released), so the
/// session can resume at once; then the original's `handoff_spawned` event is appended.
/// The session's pid; nullopt for any other ending, or after saying why it did not start.
std::optional<pid_t> spawn_handoff_session(ll::loop_journal& journal, const run_settings& s,
                                           const ll::execution_result& result, const std::string& state) {
  if (result.terminated_by != ll::termination::handoff || result.on_handoff != ll::handoff_policy::spawn)
    return std::nullopt;
  if (auto closed = journal.close(); !closed) say_warning(fmt::format("journal: {}", ll::to_string(closed.error())));
  if (s.no_llm) {  // the session would be an LLM agent
    say_warning(fmt::format("on_handoff: spawn: no session started (--no-llm); resume with: ll-loop "
                            "resume {}", s.loaded.loop().name));
    return std::nullopt;
  }
  std::vector<std::string> command = s.prompt_command ? *s.prompt_command : ll::posix_runner_options{}.prompt_command;
  // As the original: an unattended session does not get the default's permission bypass
  // (a --prompt-command given is used as it is).
  if (!s.prompt_command) std::erase(command, std::string("--dangerously-skip-permissions"));
  const std::string& name = s.loaded.loop().name;
  auto spawned = spawn_continuation(command, name, result.signal_payload);
  if (!spawned) {
    say_error(fmt::format("on_handoff: spawn: {}", spawned.error()));
    return std::nullopt;
  }
  (void)ll::append_journal_event(s.journal_dir, name,
                                 ll::json{{"event", "handoff_spawned"},
                                          {"ts", ll::journal_now()},
                                          {"pid", static_cast<long>(*spawned)},
                                          {"state", state}});
  return *spawned;
}

/// The run's outcome on stdout: the `--json` object, or the summary (not with --quiet).
void report_run(const run_settings& s, const ll::execution_result& result, const ll::journal_record& record,
                const style& out_style, std::optional<pid_t> continuation_pid, const failed_action& failed) {
  if (s.as_json) {
    ll::json out = result_json(result, ll::dialect_of(s.loaded.loop()));
    out["failure"] = result.failure;
    out["status"] = record.status;
    if (failed.seen)
      out["last_failed_action"] = {{"state", failed.state},
                                   {"exit_code", failed.exit_code},
                                   {"stderr_tail", failed.stderr_tail}};
    if (continuation_pid) out["continuation_pid"] = static_cast<long>(*continuation_pid);
    fmt::print("{}\n", json_text(out, 2));
  } else if (!s.quiet) {
    say("");
    print_run_summary(result, record.current_state, s.loaded.loop().name, s.resume_from.has_value(),
                      out_style, continuation_pid);
  }
}

/// What ll-loop adds to ll::run_journaled(): the header once the run has started, Ctrl-C /
/// SIGTERM and the stop file watched during the steps, how the run ended in the final
/// record (written durably, see below), and a warning for each journal write failure.
struct run_hooks {
  const run_settings& s;
  ll::loop_journal& journal;
  progress_display& display;
  const style& out_style;
  std::stop_source stop;
  std::optional<stop_signals> signals;
  std::optional<ll::error> journal_failure;  ///< the first journal write that failed
  std::string run_id;                        ///< LL_LOOP_RUN_ID of the run's actions

  ll::journaled_run_hooks make() {
    ll::journaled_run_hooks hooks;
    hooks.started = [this] { started(); };
    hooks.finished = [this](const ll::execution_result& result, ll::journal_record& record) {
      signals.reset();
      display.flush();  // (loop_complete has written it; this covers any other way out)
      // The final record: the state file written durably here, the checkpoint logs removed.
      journal.sync = ll::journal_sync::every_save;
      record_ending(record, result);
    };
    hooks.write_failed = [this](const ll::error& e) {
      display.flush();
      if (!journal_failure) {
        say_error(fmt::format("cannot journal the run, so it stops before its next step: {}", ll::to_string(e)));
        journal_failure = e;
      } else {
        say_warning(fmt::format("journal: {}", ll::to_string(e)));
      }
    };
    return hooks;
  }

 private:
  void started() {
    if (!s.quiet && !s.as_json && !s.resume_from) {
      say(fmt::format("Running loop: {}", out_style.bold(s.loaded.loop().name)));
      say(fmt::format("Max iterations: {}", s.loaded.loop().max_iterations));
      if (s.no_llm) say("--no-llm: prompt and slash-command actions are not run");
      say("");
    }
    // The stop file (`ll-loop stop`): the watcher thread looks for it 5× a second; between
    // two actions run_journaled looks for it at most every 10 ms (not one stat() per step).
    signals.emplace(stop, journal.paths().stop, run_id);
  }
};

int execute(run_settings& s) {
  const ll::fsm_loop& loop = s.loaded.loop();
  // Refuse to run the same loop twice at once.
  if (running_elsewhere(s.journal_dir, loop.name)) return exit_failed;

  const std::string run_id = new_run_id();
  ll::posix_process_runner runner(runner_options(s, run_id));
  std::stop_source stop;
  ll::basic_evaluator<ll::command_judge> evaluator{ll::command_judge(judge_options(s, stop.get_token()))};

  ll::loop_journal journal(s.journal_dir, loop.name);
  const auto report_journal_error = [&](const ll::error& e) {
    // Another process started this loop since the check above: its journal is locked.
    if (e.path == journal.paths().lock.string() && e.message.find("already running") != std::string::npos) {
      // Names that differ only in characters a file name cannot keep share journal files.
      if (auto owner = ll::journal_name_collision(s.journal_dir, loop.name))
        say_error(fmt::format("Loop already running: {}, whose journal files loop {} shares (loop names "
                              "that differ only in characters other than letters, digits, '.', '_' "
                              "and '-' share their journal files): rename one of the loops",
                              *owner, loop.name));
      else
        say_error(fmt::format("Loop already running: {} (another process holds its journal)", loop.name));
    } else
      say_error(fmt::format("cannot journal the run: {}", ll::to_string(e)));
  };
  // Before the journal is opened (which starts a fresh event log): a refused run leaves
  // the loop's last run as it was.
  if (s.run_dir.empty()) s.run_dir = make_run_dir(loop, false);
  ll::executor_options options;
  options.injected_context = injected_context(loop, s.run_dir);
  options.learning_registry = learning_registry_here();
  give_worktrees(options, runner);
  child_loops children;
  children.give_to(options, s.loaded.path);
  if (!claim_loop_scope(journal, loop, s, options.injected_context, report_journal_error))
    return exit_failed;
  if (auto opened = journal.open(!s.resume_from.has_value()); !opened) {
    report_journal_error(opened.error());
    return exit_failed;
  }

  const style out_style = style::for_stream(stdout);
  progress_display display(stdout, out_style, loop);
  display.set_verbose(s.verbose);
  failed_action failed;
  run_sink sink(journal, display_forward{(s.quiet || s.as_json) ? nullptr : &display, &failed});
  auto made = ll::make_executor(s.loaded.compiled, runner, evaluator, sink, std::move(options));
  if (s.resume_from) {
    if (auto ok = made->resume(*s.resume_from); !ok) {
      say_error(fmt::format("Cannot resume {}: {}", loop.name, ok.error().message));
      return exit_failed;
    }
  }

  ll::journal_record record = initial_record(s, run_id);
  // State boundaries: each record is appended to the journal's checkpoint log before the
  // next action starts (a killed ll-loop loses nothing finished); the state file and its
  // fsyncs are written by the journal's background thread, off the loop's path (a machine
  // crash goes back at most one fsync round trip).
  journal.sync = ll::journal_sync::background;
  run_hooks hooks{s, journal, display, out_style, stop, std::nullopt, std::nullopt, run_id};
  const ll::execution_result& result = ll::run_journaled(*made, journal, record, stop.get_token(), hooks.make());
  const std::optional<pid_t> continuation_pid = spawn_handoff_session(journal, s, result, record.current_state);
  report_run(s, result, record, out_style, continuation_pid, failed);
  if (hooks.journal_failure) return exit_journal_failed;
  return exit_code_for(result);
}

/// `run --dry-run`: the Python original's print_execution_plan, line for line:
///
///   Execution plan for: <name>
///
///   States:
///     [<state>] [TERMINAL]
///       action: <first 70 characters>...
///       evaluate: <type>
///       on_success -> <target>
///       on_failure -> <target>
///       on_error -> <target>
///       next -> <target>
///       route:
///         <verdict> -> <target>
///         _ -> <target>
///
///   Initial state: <initial>
///   Max iterations: <n>
///   Timeout: <seconds>s                      (only when the loop has one)
///
/// Our routing model onto that format: every routing key is printed as written in the file,
/// so each line maps back to one key. The `on_<verdict>` shorthands come first,
/// on_success / on_failure / on_error in the original's order, then any other verdict's
/// shorthand (on_target, on_blocked, …) in document order; then `next`; then the route
/// table in document order, its `_error` entry and its `_` default last (as the original
/// prints `_`); then `on_maintain -> <target>` (maintain mode's way on from this state, which
/// the original's plan leaves out). Shorthands a route table or `next` shadows are still
/// listed (validation warns about them); the executor's precedence is next → route entry →
/// `_error` → `_` → on_<verdict> (in a `next:` state only on_error still counts: an action
/// that exits non-zero or yields `error` goes there instead of `next`). A terminal marked `failure: true` shows
/// ` [TERMINAL] [FAILURE]`. The action is shown on one line (newlines as spaces) and, as in
/// the original, cut at 70 characters with "..." appended.
void print_execution_plan(const ll::fsm_loop& loop) {
  // Names and targets from the file go through terminal_safe, as everywhere on a terminal.
  const auto safe = [](std::string_view text) { return terminal_safe(text); };
  std::string out = fmt::format("Execution plan for: {}\n\nStates:\n", safe(loop.name));
  for (const auto& [name, state] : loop.states) {
    out += fmt::format("  [{}]{}{}\n", safe(name), state.terminal ? " [TERMINAL]" : "",
                       state.terminal && state.failure ? " [FAILURE]" : "");
    if (state.action) out += fmt::format("    action: {}\n", one_line(*state.action, 70));
    if (state.evaluate) out += fmt::format("    evaluate: {}\n", ll::to_string(state.evaluate->type));
    constexpr std::array<std::string_view, 3> first{"success", "failure", "error"};
    for (const std::string_view verdict : first)
      if (const auto it = state.on.find(std::string(verdict)); it != state.on.end())
        out += fmt::format("    on_{} -> {}\n", verdict, safe(it->second));
    for (const auto& [verdict, target] : state.on)
      if (std::find(first.begin(), first.end(), verdict) == first.end())
        out += fmt::format("    on_{} -> {}\n", safe(verdict), safe(target));
    if (state.next) out += fmt::format("    next -> {}\n", safe(*state.next));
    if (state.route) {
      out += "    route:\n";
      for (const auto& [verdict, target] : state.route->routes)
        out += fmt::format("      {} -> {}\n", safe(verdict), safe(target));
      if (state.route->error_target) out += fmt::format("      _error -> {}\n", safe(*state.route->error_target));
      if (state.route->default_target) out += fmt::format("      _ -> {}\n", safe(*state.route->default_target));
    }
    if (state.on_maintain) out += fmt::format("    on_maintain -> {}\n", safe(*state.on_maintain));
  }
  out += fmt::format("\nInitial state: {}\nMax iterations: {}\n", safe(loop.initial), loop.max_iterations);
  if (loop.timeout) out += fmt::format("Timeout: {}s\n", *loop.timeout);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

// `--max-iterations N` of run and resume: a positive integer.
bool read_max_iterations(const parsed_args& args, run_settings& s) {
  const auto v = args.value("max-iterations");
  if (!v) return true;
  s.max_iterations = parse_count(*v);
  if (!s.max_iterations || *s.max_iterations < 1 || *s.max_iterations > 1000000000) {
    print_usage_line(args);
    std::fprintf(stderr, "ll-loop %s: error: argument --max-iterations: invalid value: '%s' "
                         "(a positive integer, at most 1000000000)\n", args.verb.c_str(), v->c_str());
    return false;
  }
  return true;
}

bool read_common_run_options(const parsed_args& args, run_settings& s) {
  s.quiet = args.has("quiet");
  s.verbose = args.has("verbose");
  s.as_json = args.has("json");
  s.queue = args.has("queue");
  if (auto dir = args.value("journal-dir")) s.journal_dir = *dir;
  for (auto [option, target] : {std::pair{"shell-command", &s.shell_command},
                                 std::pair{"prompt-command", &s.prompt_command},
                                 std::pair{"judge-command", &s.judge_command}}) {
    const auto text = args.value(option);
    if (!text) continue;
    std::string why;
    auto words = split_command_words(*text, why);
    if (words && words->empty()) why = "empty command";
    if (!words || words->empty()) {
      print_usage_line(args);
      std::fprintf(stderr, "ll-loop %s: error: argument --%s: %s: %s\n", args.verb.c_str(), option,
                   why.c_str(), text->c_str());
      return false;
    }
    *target = std::move(*words);
  }
  if (auto v = args.value("output-limit")) {
    s.output_limit = parse_count(*v);
    if (!s.output_limit || *s.output_limit == 0) {
      print_usage_line(args);
      std::fprintf(stderr, "ll-loop %s: error: argument --output-limit: expected a positive "
                           "number of bytes, got '%s'\n", args.verb.c_str(), v->c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int verb_run(const parsed_args& args) {
  run_settings s;
  s.shown_name = args.positional(0);
  if (!read_common_run_options(args, s)) return exit_usage;
  auto overrides = parse_context_overrides(args.all("context"));
  if (!overrides) {
    std::fprintf(stderr,
                 "ll-loop run: error: Invalid --context format: '%s' (expected KEY=VALUE)\n",
                 overrides.error().c_str());
    return exit_bad_context;
  }
  s.context_overrides = *overrides;
  if (!read_max_iterations(args, s)) return exit_usage;
  s.no_llm = args.has("no-llm");
  const bool dry_run = args.has("dry-run");
  if (dry_run && s.as_json) {
    print_usage_line(args);
    std::fprintf(stderr, "ll-loop run: error: argument --dry-run: not allowed with argument "
                         "--json\n");
    return exit_usage;
  }
  const bool chatty = !s.quiet && !s.as_json;
  std::vector<std::string> dropped_input;
  bool llm_turned_off = false;
  auto loaded = load_loop(s.shown_name, s.context_overrides, [&](ll::fsm_loop& loop) {
    if (args.positionals.size() > 1)
      dropped_input = apply_positional_input(loop, args.positional(1), s.context_overrides);
    llm_turned_off = apply_run_settings(loop, s);
  });
  // As in the Python original, the compile is announced before it happens (so the line also
  // precedes a compile error), with the path as typed or as resolved from a name.
  if (chatty && !(loaded ? loaded->paradigm : loaded.error().paradigm).empty())
    say(fmt::format("Auto-compiling paradigm file: {}",
                    (loaded ? loaded->shown_path : loaded.error().path).string()));
  if (!loaded) {
    report_load_failure(loaded.error(), s.shown_name);
    return exit_failed;
  }
  if (chatty) say_load_warnings(*loaded, llm_turned_off);
  warn_dropped_input_keys(dropped_input);
  if (!check_required_inputs(loaded->loop(), "run", s.shown_name)) return exit_failed;
  if (dry_run) {
    // The plan shows the loop as it would run: --max-iterations applies (as in the original).
    print_execution_plan(loaded->loop());
    return exit_ok;
  }
  s.loaded = std::move(*loaded);
  return execute(s);
}

namespace {

/// A snapshot built from the original's state file (read into `extra["original"]` by
/// journal_record::from_json): its current state and iteration, captured values, previous
/// result and run time, with the loop's own context and digest.
ll::snapshot snapshot_from_original(const ll::journal_record& r, const ll::fsm_loop& loop) {
  ll::snapshot s;
  s.loop_name = loop.name;
  s.digest = ll::loop_digest(loop);
  s.current_state = r.current_state;
  s.iteration = r.iteration;
  s.context = loop.context;
  s.started_at = r.started_at;
  const ll::json& o = r.extra.at("original");  // present: see resumes_original()
  auto text = [](const ll::json& obj, const char* key) {
    const auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto integer = [](const ll::json& obj, const char* key) -> std::int64_t {
    const auto it = obj.find(key);
    return it != obj.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
  };
  if (const auto it = o.find("captured"); it != o.end() && it->is_object())
    for (auto c = it->begin(); c != it->end(); ++c) {
      if (!c->is_object()) continue;
      ll::captured_record rec;
      rec.output = text(*c, "output");
      rec.stderr_output = text(*c, "stderr");
      rec.exit_code = static_cast<int>(integer(*c, "exit_code"));
      rec.duration_ms = integer(*c, "duration_ms");
      rec.verdict = text(*c, "verdict");
      s.captured[c.key()] = std::move(rec);
    }
  if (const auto it = o.find("prev_result"); it != o.end() && it->is_object()) {
    ll::prev_record prev;
    prev.state = text(*it, "state");
    prev.output = text(*it, "output");
    prev.exit_code = static_cast<int>(integer(*it, "exit_code"));
    if (const auto last = o.find("last_result"); last != o.end() && last->is_object()) {
      prev.verdict = text(*last, "verdict");
      if (const auto d = last->find("details"); d != last->end() && d->is_object()) prev.details = *d;
    } else {
      prev.evaluated = false;
    }
    s.prev = std::move(prev);
  }
  s.elapsed_ms = integer(o, "accumulated_ms");
  return s;
}

}  // namespace

namespace {

/// True when `record` is the original's state file, which has no snapshot: one is built
/// from its fields (snapshot_from_original).
bool resumes_original(const ll::journal_record& record) {
  return record.snapshot.is_null() && record.extra.contains("original") && !record.current_state.empty();
}

/// The journal record of `s.shown_name`; as in the original, the name may also be the loop
/// itself (a file, or a name in .loops/), whose runs are journaled under the name inside it.
/// nullopt after saying why (a load or journal error, or nothing to resume).
std::optional<ll::journal_record> find_resume_record(const run_settings& s) {
  auto loaded_record = ll::load_journal(s.journal_dir, s.shown_name);
  if ((!loaded_record || !loaded_record->has_value()) && resolve_loop_path(s.shown_name)) {
    auto loop = load_loop(s.shown_name, ll::json::object());
    if (!loop) {  // as the original, which loads and validates the loop first
      report_load_failure(loop.error(), s.shown_name);
      return std::nullopt;
    }
    if (loop->loop().name != s.shown_name) {
      auto by_name = ll::load_journal(s.journal_dir, loop->loop().name);
      if (by_name && by_name->has_value()) loaded_record = std::move(by_name);
    }
  }
  if (!loaded_record) {
    say_error(ll::to_string(loaded_record.error()));
    return std::nullopt;
  }
  if (!loaded_record->has_value()) {
    say_error(fmt::format("Nothing to resume for: {}{}", s.shown_name,
                          collision_note(s.journal_dir, s.shown_name)));
    return std::nullopt;
  }
  return std::move(**loaded_record);
}

/// True when `record` can be resumed; false after saying why not. The readers mark dead
/// owners stale; a record without a pid (the original's) cannot be checked and is resumed,
/// as the original resumes a `running` state.
bool check_resumable(const ll::journal_record& record, const std::string& shown_name) {
  if (record.status == ll::journal_status::running && record.pid > 0) {
    say_error(fmt::format("Loop is still running: {} (pid {})", shown_name, record.pid));
    return false;
  }
  if (!ll::journal_resumable(record.status) || (record.snapshot.is_null() && !resumes_original(record))) {
    say_error(fmt::format("Nothing to resume for: {} (status: {})", shown_name, record.status));
    return false;
  }
  return true;
}

/// The snapshot `record` holds; nullopt after saying why it cannot be read.
std::optional<ll::snapshot> stored_snapshot(const ll::journal_record& record, const std::string& shown_name) {
  auto read = ll::snapshot_from_json(record.snapshot);
  if (!read) {
    say_error(fmt::format("Cannot resume {}: bad snapshot: {}", shown_name, ll::to_string(read.error())));
    return std::nullopt;
  }
  return std::move(*read);
}

/// A crashed run's ll-loop (kill -9, a crash) may have left its action running: stops what
/// carries the run's LL_LOOP_RUN_ID.
void stop_crashed_run_leftovers(const ll::journal_record& record) {
  const auto it = record.extra.find("run_id");
  if (it == record.extra.end() || !it->is_string()) return;
  if (const std::size_t n = stop_leftovers_of_run(it->get<std::string>()))
    say_warning(fmt::format("stopped {} process{} the crashed run (pid {}) left running", n,
                            n == 1 ? "" : "es", record.pid));
}

/// The run settings a journaled run stored in `extra`, for those `resume` was not given.
void reuse_run_settings(run_settings& s, const ll::json& extra) {
  if (auto it = extra.find("context"); it != extra.end() && it->is_object()) s.context_overrides = *it;
  if (auto it = extra.find("max_iterations");
      !s.max_iterations && it != extra.end() && it->is_number_integer())
    s.max_iterations = it->get<long long>();
  if (auto it = extra.find("no_llm"); it != extra.end() && it->is_boolean()) s.no_llm = it->get<bool>();
  if (auto it = extra.find("run_dir"); it != extra.end() && it->is_string()) s.run_dir = it->get<std::string>();
  auto stored_words = [&](const char* key, std::optional<std::vector<std::string>>& target) {
    const auto it = extra.find(key);
    if (target || it == extra.end() || !it->is_array() || it->empty()) return;
    std::vector<std::string> words;
    for (const auto& w : *it) {
      if (!w.is_string()) return;
      words.push_back(w.get<std::string>());
    }
    target = std::move(words);
  };
  stored_words("shell_command", s.shell_command);
  stored_words("prompt_command", s.prompt_command);
  stored_words("judge_command", s.judge_command);
  if (auto it = extra.find("output_limit"); !s.output_limit && it != extra.end() &&
                                            it->is_number_integer() && it->get<long long>() > 0)
    s.output_limit = it->get<long long>();
}

/// The loop `record` ran, loaded again; nullopt after saying why it cannot be. The journal
/// holds the absolute path; it is loaded (and so shown in messages) relative to the cwd
/// when the file is under it, which gives back what was typed for a run started from the
/// same directory. The run journals the absolute path again. The original's state file
/// names no loop file: the loop is found by its name.
std::optional<loaded_loop> reload_loop(const ll::journal_record& record, const run_settings& s) {
  const bool chatty = !s.quiet && !s.as_json;
  const std::string shown_path = record.loop_path.empty() ? record.name : display_path(record.loop_path);
  const auto adjust = [&s](ll::fsm_loop& loop) { (void)apply_run_settings(loop, s); };
  auto loaded = record.loop_path.empty() ? load_loop(shown_path, s.context_overrides, adjust)
                                         : load_loop_file(shown_path, s.context_overrides, adjust);
  if (chatty && !(loaded ? loaded->paradigm : loaded.error().paradigm).empty())
    say(fmt::format("Auto-compiling paradigm file: {}", shown_path));
  if (!loaded) {
    report_load_failure(loaded.error(), shown_path);
    return std::nullopt;
  }
  return std::move(*loaded);
}

}  // namespace

namespace {

/// True, after saying how to go on, when `record`'s run ended at its iteration cap and the
/// cap it would resume with (`--max-iterations`, the run's, or the loop's) leaves no step.
bool stopped_at_cap(const ll::journal_record& record, long long cap, const std::string& shown_name) {
  const auto how = record.extra.find("terminated_by");
  if (how == record.extra.end() || *how != "max_iterations" || cap > record.iteration) return false;
  say_error(fmt::format("{} stopped at its iteration cap ({} iterations). Resume with "
                        "--max-iterations N (more than {})",
                        shown_name, record.iteration, record.iteration));
  return true;
}

}  // namespace

int verb_resume(const parsed_args& args) {
  run_settings s;
  s.shown_name = args.positional(0);
  if (!read_common_run_options(args, s)) return exit_usage;
  if (!read_max_iterations(args, s)) return exit_usage;  // e.g. to go on after the cap
  const std::optional<ll::journal_record> record = find_resume_record(s);
  if (!record || !check_resumable(*record, s.shown_name)) return exit_failed;
  std::optional<ll::snapshot> snap;
  if (!resumes_original(*record)) {
    snap = stored_snapshot(*record, s.shown_name);
    if (!snap) return exit_failed;
  }
  if (record->stale) stop_crashed_run_leftovers(*record);
  reuse_run_settings(s, record->extra);
  auto loaded = reload_loop(*record, s);
  if (!loaded) return exit_failed;
  if (stopped_at_cap(*record, loaded->loop().max_iterations, s.shown_name))
    return exit_failed;
  if (record->status == ll::journal_status::handoff && !s.quiet && !s.as_json) {
    if (auto it = record->extra.find("continuation"); it != record->extra.end() && it->is_string())
      say(fmt::format("Resuming from context handoff (iteration {})...\nContext: {}\n",
                      record->iteration, one_line(it->get<std::string>(), 500)));
  }
  if (!snap) snap = snapshot_from_original(*record, loaded->loop());
  s.loaded = std::move(*loaded);
  s.resume_from = std::move(*snap);
  s.started_at = record->started_at;
  return execute(s);
}

// ---------------------------------------------------------------------------------------
// simulate

namespace {

/// What a simulated action prints: `[simulated output for: ACTION]`, as the original's; an
/// MCP tool call an empty response envelope with the call (`{"simulated": "SERVER/TOOL"}`),
/// which mcp_result reads as the exit code says.
std::string simulated_output(const ll::action_request& request) {
  if (request.kind == ll::action_kind::mcp_tool)
    return ll::json{{"simulated", std::string(request.text)}}.dump(-1, ' ', false, ll::json::error_handler_t::replace);
  constexpr std::string_view head = "[simulated output for: ";  // appended: once per step
  std::string out;
  out.reserve(head.size() + request.text.size() + 1);
  out.append(head).append(request.text) += ']';
  return out;
}

/// What a simulated action is, in the trace.
std::string_view simulated_kind(ll::action_kind kind) {
  switch (kind) {
    case ll::action_kind::shell: return "shell command";
    case ll::action_kind::mcp_tool: return "MCP tool call";
    case ll::action_kind::prompt:
    case ll::action_kind::slash_command: break;
  }
  return "slash command";
}

/// Scripted exit codes of `--scenario` (call index is 0-based).
int scenario_exit_code(std::string_view scenario, std::size_t index) {
  if (scenario == "all-fail") return 1;
  if (scenario == "all-error") return 2;
  if (scenario == "first-fail") return index == 0 ? 1 : 0;
  if (scenario == "alternating") return index % 2 == 0 ? 1 : 0;
  return 0;  // all-pass
}

/// What the original prints after `[AUTO] Result:` for a scenario's call (0-based index).
std::string_view scenario_label(std::string_view scenario, std::size_t index) {
  if (scenario == "all-fail") return "Failure (scenario: all-fail)";
  if (scenario == "all-error") return "Error (scenario: all-error)";
  if (scenario == "first-fail") return index == 0 ? "Failure" : "Success";
  if (scenario == "alternating") return index % 2 == 0 ? "Failure" : "Success";
  return "Success (scenario: all-pass)";
}

/// The library's scripted_runner with the `--scenario` as the last fallback. As the
/// original's SimulationActionRunner, each call is traced (`[SIMULATED] Would execute …`,
/// `[AUTO] Result: …` for a scenario) and a simulated action outputs
/// `[simulated output for: ACTION]`; a `--responses` answer is used as it is.
class simulation_runner {
 public:
  simulation_runner(ll::scripted_runner script, bool has_responses, bool has_default,
                    std::optional<std::string> scenario, bool print)
      : script_(std::move(script)),
        has_responses_(has_responses),
        has_default_(has_default),
        scenario_(std::move(scenario)),
        print_(print) {}

  ll::expected<ll::action_result, ll::error> run(const ll::action_request& request) {
    if (request.probe) {  // a stall evaluator's probe: its `by_action` entry, else nothing changed
      if (print_) fmt::print("    [SIMULATED] Probe: {}\n", one_line(request.text, 200));
      auto answer = probes_.run(request);
      if (probes_.last_call_scripted()) return answer;
      return ll::action_result{};
    }
    const std::size_t index = calls_++;
    if (print_)
      fmt::print("    [SIMULATED] Would execute ({}): {}\n", simulated_kind(request.kind),
                 one_line(request.text, 200));
    if (print_ && request.kind == ll::action_kind::mcp_tool)
      fmt::print("    [SIMULATED] Params: {}\n", one_line(request.params, 200));
    if (print_ && !request.agent.empty())
      fmt::print("    [SIMULATED] Agent: {}\n", one_line(request.agent, 80));
    if (print_ && !request.automation_profile.empty())
      fmt::print("    [SIMULATED] Automation profile: {}\n", one_line(request.automation_profile, 80));
    if (has_responses_) {
      auto scripted = script_.run(request);  // keeps the script's own counters in step
      if (script_.last_call_scripted() || has_default_) return scripted;
      if (!scenario_) return scripted;  // nothing matched: exit 0, no output
    }
    ll::action_result r;
    r.output = simulated_output(request);
    if (scenario_) {
      r.exit_code = scenario_exit_code(*scenario_, index);
      if (print_) fmt::print("    [AUTO] Result: {}\n", scenario_label(*scenario_, index));
    }
    return r;
  }
  [[nodiscard]] std::size_t calls() const noexcept { return calls_; }
  /// Probes are answered from `probes` (by action text), never from the script's turns.
  void answer_probes_with(ll::scripted_runner probes) { probes_ = std::move(probes); }

 private:
  ll::scripted_runner script_;
  ll::scripted_runner probes_;
  bool has_responses_ = false;
  bool has_default_;
  std::optional<std::string> scenario_;
  bool print_ = true;
  std::size_t calls_ = 0;
};

/// A resilience policy's action in the simulate trace (waits are skipped, not slept).
void print_resilience(const ll::resilience_event& e) {
  std::string line = fmt::format("    Policy: {}", e.kind);
  if (!e.error_class.empty()) line += fmt::format(" ({})", terminal_safe(e.error_class));
  if (e.kind == "retry")
    line += fmt::format(", attempt {}, wait {:.1f}s skipped", e.attempt, static_cast<double>(e.delay_ms) / 1000.0);
  if (!e.target.empty() && e.kind != "retry") line += fmt::format(" \u2192 {}", terminal_safe(e.target));
  if (!e.message.empty()) line += ": " + one_line(e.message, 200);
  fmt::print("{}\n", line);
}

/// simulate's clock: real time, but a wait (backoff, a retry's delay) is counted, not slept.
class simulation_clock final : public ll::executor_clock {
 public:
  std::chrono::steady_clock::time_point now() noexcept override { return std::chrono::steady_clock::now(); }
  ll::event_time wall_now() noexcept override { return std::chrono::system_clock::now(); }
  void sleep_for(std::chrono::nanoseconds d, std::stop_token) override {
    ++waits;
    skipped += d;
  }
  std::size_t waits = 0;
  std::chrono::nanoseconds skipped{0};
};

/// The trace printed by `simulate` (the Python original's layout).
struct simulation_sink {
  bool print = true;
  std::FILE* events_out = nullptr;
  std::vector<std::string> visited;
  std::string line;  // reused for every event line

  /// Quiet without --events: nothing to show or write, so the executor skips the events.
  [[nodiscard]] bool wants_events() const noexcept { return print || events_out != nullptr; }

  void on_event(const ll::loop_event& event) noexcept {
    try {
      if (events_out != nullptr) {
        line.clear();
        ll::append_json_line(line, event);
        std::fwrite(line.data(), 1, line.size(), events_out);
      }
      std::visit(
          [&](const auto& e) {
            using E = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<E, ll::state_enter_event>) {
              if (print) visited.emplace_back(e.state);  // for the summary (not with --json)
              if (print) fmt::print("\n[{}] State: {}\n", e.iteration, terminal_safe(e.state));
            } else if constexpr (std::is_same_v<E, ll::action_start_event>) {
              if (print) fmt::print("    Action: {}\n", one_line(e.action, 70));
            } else if constexpr (std::is_same_v<E, ll::evaluate_event>) {
              if (print) {
                std::string upper(e.verdict);
                for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                fmt::print("    Evaluator: {}\n    Result: {}\n", terminal_safe(e.type), terminal_safe(upper));
              }
            } else if constexpr (std::is_same_v<E, ll::route_event>) {
              if (print)
                fmt::print("    Transition: {} \u2192 {}\n", terminal_safe(e.from), terminal_safe(e.to));
            } else if constexpr (std::is_same_v<E, ll::error_event>) {
              if (print) fmt::print("    Error ({}): {}\n", e.kind, one_line(e.message, 200));
            } else if constexpr (std::is_same_v<E, ll::resilience_event>) {
              if (print) print_resilience(e);
            } else if constexpr (std::is_same_v<E, ll::throttle_event>) {
              if (print) fmt::print("    Throttle: {}\n", throttle_line(e));
            } else if constexpr (std::is_same_v<E, ll::learning_event>) {
              if (print) fmt::print("    Learning: {}\n", learning_line(e));
            }
          },
          event);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a display failure must not stop the run
    }
  }
};

/// A `--responses` file: the scripted runner it describes, and which calls it answers.
struct simulation_responses {
  ll::scripted_runner script;
  ll::scripted_runner probes;  ///< the `by_action` answers alone, for probes
  bool has_default = false;
};

/// Reads `--responses FILE`; nullopt after saying why it cannot be used.
std::optional<simulation_responses> read_responses(const std::string& file) {
  // As loop files: a regular file of at most max_document_file_bytes (never a FIFO).
  auto text = ll::read_text_file(file);
  if (!text) {
    say_error(fmt::format("cannot read responses file: {}: {}", file, text.error().message));
    return std::nullopt;
  }
  auto doc = ll::parse_json_text(*text);
  if (!doc) {
    say_error(fmt::format("{}: {}", file, doc.error().message));
    return std::nullopt;
  }
  const ll::json& mapped = *doc;
  auto built = ll::scripted_runner::from_json(mapped);
  if (!built) {
    const ll::error& e = built.error();
    say_error(fmt::format("{}: {}{}{}", file, e.path, e.path.empty() ? "" : ": ", e.message));
    return std::nullopt;
  }
  simulation_responses r;
  r.script = std::move(*built);
  r.has_default = mapped.contains("default");
  if (auto it = mapped.find("by_action"); it != mapped.end())  // checked above
    r.probes = *ll::scripted_runner::from_json(ll::json{{"by_action", *it}});
  return r;
}

/// Where `--events` goes: stdout for `-`, else a file this closes.
struct events_output {
  std::FILE* out = nullptr;
  bool owned = false;
  events_output() = default;
  events_output(const events_output&) = delete;
  events_output& operator=(const events_output&) = delete;
  ~events_output() {
    if (owned) std::fclose(out);
  }
  /// Opens `target`; false after saying why it cannot be written.
  bool open(const std::optional<std::string>& target) {
    if (!target) return true;
    if (*target == "-") {
      out = stdout;
      return true;
    }
    out = std::fopen(target->c_str(), "w");
    if (out == nullptr) {
      say_error(fmt::format("cannot write events file: {}", *target));
      return false;
    }
    owned = true;
    return true;
  }
  /// Closes the file; false after saying why the events could not all be written.
  bool close(const std::string& target) {
    if (!owned) return true;
    owned = false;
    const bool failed = std::ferror(out) != 0;
    if (std::fclose(out) != 0 || failed) {
      say_error(fmt::format("cannot write the events to {}: {}", target, std::strerror(errno)));
      return false;
    }
    return true;
  }
};

/// The iteration cap of a simulation: `--max-iterations`, else the loop's, at most 20.
/// The loop's own cap when it was lowered to 20.
std::optional<int> limit_simulation(ll::fsm_loop& loop, std::optional<long long> max_iterations) {
  if (max_iterations) {
    loop.max_iterations = static_cast<int>(*max_iterations);
  } else if (loop.max_iterations > 20) {
    const int own = loop.max_iterations;
    loop.max_iterations = 20;
    return own;
  }
  return std::nullopt;
}

/// The `(...)` of the `=== SIMULATION: NAME (...) ===` header.
std::string simulation_mode(const std::optional<std::string>& scenario,
                            const std::optional<std::string>& responses_file) {
  std::string mode = scenario ? fmt::format("scenario={}", *scenario) : std::string{};
  if (responses_file) mode += fmt::format("{}responses={}", mode.empty() ? "" : ", ", *responses_file);
  if (mode.empty()) mode = "every action exits 0";
  return mode;
}

double seconds_of(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

/// The `=== Summary ===` of a simulation (the original's layout).
void print_simulation_summary(const ll::execution_result& result, const std::vector<std::string>& visited,
                              std::size_t calls) {
  std::string path;
  for (const auto& v : visited) path += fmt::format("{}{}", path.empty() ? "" : " \u2192 ", terminal_safe(v));
  fmt::print("\n=== Summary ===\n");
  fmt::print("States visited: {}\n", path);
  fmt::print("Iterations: {}\n", result.iterations);
  fmt::print("Would have executed {} commands\n", calls);
  fmt::print("Terminated by: {}\n", ll::to_string(result.terminated_by));
  fmt::print("Final state: {}\n", terminal_safe(result.final_state));
  if (result.error) fmt::print("Error: {}\n", terminal_safe(result.error->message));
}

/// The runner of a simulation: the `--responses` script (if any), then the `--scenario`.
simulation_runner make_simulation_runner(std::optional<simulation_responses> responses,
                                         std::optional<std::string> scenario, bool print) {
  const bool has_responses = responses.has_value();
  simulation_responses r = responses ? std::move(*responses) : simulation_responses{};
  r.script.record(false);  // nothing reads the calls: memory stays flat however long the run
  r.probes.record(false);
  simulation_runner runner(std::move(r.script), has_responses, r.has_default, std::move(scenario), print);
  runner.answer_probes_with(std::move(r.probes));
  return runner;
}

}  // namespace

int verb_simulate(const parsed_args& args) {
  const std::string name = args.positional(0);
  const bool as_json = args.has("json");
  const std::optional<std::string> events_target = args.value("events");
  const bool quiet = args.has("quiet") || as_json || (events_target && *events_target == "-");
  auto overrides = parse_context_overrides(args.all("context"));
  if (!overrides) {
    std::fprintf(stderr,
                 "ll-loop simulate: error: Invalid --context format: '%s' (expected KEY=VALUE)\n",
                 overrides.error().c_str());
    return exit_bad_context;
  }
  run_settings limits;
  if (!read_max_iterations(args, limits)) return exit_usage;
  std::vector<std::string> dropped_input;
  std::optional<int> limited_from;
  auto loaded = load_loop(name, *overrides, [&](ll::fsm_loop& loop) {
    if (args.positionals.size() > 1)
      dropped_input = apply_positional_input(loop, args.positional(1), *overrides);
    limited_from = limit_simulation(loop, limits.max_iterations);
  });
  if (!loaded) {
    report_load_failure(loaded.error(), name);
    return exit_failed;
  }
  warn_dropped_input_keys(dropped_input);
  const ll::fsm_loop& loop = loaded->loop();
  if (!check_required_inputs(loop, "simulate", name)) return exit_failed;
  if (limited_from && !quiet)
    say(fmt::format("Limiting simulation to 20 iterations (loop config: {})", *limited_from));
  const std::optional<std::string> responses_file = args.value("responses");
  std::optional<simulation_responses> responses;
  if (responses_file && !(responses = read_responses(*responses_file))) return exit_failed;
  const std::optional<std::string> scenario = args.value("scenario");
  simulation_runner runner = make_simulation_runner(std::move(responses), scenario, !quiet);
  events_output events;
  if (!events.open(events_target)) return exit_failed;
  simulation_sink sink;
  sink.print = !quiet;
  sink.events_out = events.out;
  ll::default_evaluator evaluator;
  // No output signals: the original's simulate builds its executor without a signal
  // detector, so a simulated output such as `[simulated output for: echo FATAL_ERROR: x]`
  // routes like any other.
  ll::executor_options options;
  options.signals.clear();
  options.learning_registry = learning_registry_here();  // read only, as a probe is
  options.injected_context = injected_context(loop, make_run_dir(loop, true));
  child_loops children;  // run for real, with the same scripted runner
  children.give_to(options, loaded->path);
  // A sub-loop's worktree is announced, not made: its actions are simulated anyway.
  options.attach_worktree = [print = !quiet](std::string_view branch, ll::json&) -> ll::expected<std::string, std::string> {
    if (print) fmt::print("    [SIMULATED] Would attach a worktree to branch {}\n", terminal_safe(branch));
    return "(worktree of " + std::string(branch) + ")";
  };
  simulation_clock clock;
  options.clock = &clock;
  options.random_source = [] { return 0.5; };  // jitter: the middle of its range, every time
  auto made = ll::make_executor(loaded->compiled, runner, evaluator, sink, std::move(options));
  if (!quiet)
    fmt::print("=== SIMULATION: {} ({}) ===\n", terminal_safe(loop.name),
               terminal_safe(simulation_mode(scenario, responses_file)));
  const ll::execution_result& result = made->run();
  if (events_target && !events.close(*events_target)) return exit_failed;
  if (as_json) {
    // After JSON Lines events on stdout, the result is one more line (still JSON Lines).
    const bool events_on_stdout = events_target && *events_target == "-";
    ll::json out = result_json(result, ll::dialect_of(loop));
    if (clock.waits != 0)  // the waits simulate did not sleep (backoff, retries)
      out["skipped_waits"] = {{"count", clock.waits}, {"seconds", seconds_of(clock.skipped)}};
    fmt::print("{}\n", json_text(out, events_on_stdout ? -1 : 2));
  } else if (!quiet) {
    print_simulation_summary(result, made->sink().visited, made->runner().calls());
    if (clock.waits != 0)
      fmt::print("Skipped waits: {} ({:g}s not slept)\n", clock.waits, seconds_of(clock.skipped));
  }
  std::fflush(stdout);
  // A simulated run that ended in an error fails, as `run` does (a limit does not: a
  // simulation is capped at 20 iterations by default).
  return result.terminated_by == ll::termination::error ? exit_failed : exit_ok;
}

}  // namespace ll_loop

// ---------------------------------------------------------------------------------------
// test: one state, for real (the Python original's `ll-loop test`)

namespace ll_loop {
namespace {

/// Runs shell actions with the process runner; prompt and slash-command actions are not
/// run (no agent is started by a test): they yield `[simulated output for: ACTION]` and
/// `--exit-code` (default 0), as in the original.
class test_runner {
 public:
  test_runner(ll::posix_process_runner& real, int simulated_exit_code)
      : real_(&real), simulated_exit_code_(simulated_exit_code) {}

  ll::expected<ll::action_result, ll::error> run(const ll::action_request& request) {
    if (request.kind == ll::action_kind::shell) {
      auto r = real_->run(request);
      if (r) last_ = *r;
      return r;
    }
    simulated_ = true;
    ll::action_result r;
    r.output = simulated_output(request);
    r.exit_code = simulated_exit_code_;
    last_ = r;
    return r;
  }
  [[nodiscard]] const std::optional<ll::action_result>& last() const noexcept { return last_; }
  [[nodiscard]] bool simulated() const noexcept { return simulated_; }

 private:
  ll::posix_process_runner* real_;
  int simulated_exit_code_;
  std::optional<ll::action_result> last_;
  bool simulated_ = false;
};

/// What `test` reports of its one step (copied out of the events).
struct test_sink {
  std::string action;
  std::optional<std::string> evaluator_type;
  std::string verdict;
  ll::json details = ll::json::object();
  std::optional<std::string> target;
  std::vector<std::string> errors;

  void on_event(const ll::loop_event& event) noexcept {
    try {
      std::visit(
          [&](const auto& e) {
            using E = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<E, ll::action_start_event>) {
              action = std::string(e.action);
              fmt::print("Action: {}\n\n", action);
              std::fflush(stdout);
            } else if constexpr (std::is_same_v<E, ll::evaluate_event>) {
              evaluator_type = std::string(e.type);
              verdict = std::string(e.verdict);
              if (e.details != nullptr && e.details->is_object()) details = *e.details;
            } else if constexpr (std::is_same_v<E, ll::route_event>) {
              target = std::string(e.to);
            } else if constexpr (std::is_same_v<E, ll::error_event>) {
              errors.push_back(fmt::format("{}: {}", e.kind, e.message));
            }
          },
          event);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a display failure must not stop the test
    }
  }
};

/// The first `max_lines` lines of `text` (trimmed), with a count of the rest; "(empty)".
std::string test_preview(std::string_view text, std::size_t max_lines) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "(empty)";
  text = text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
  std::size_t lines = 1, cut = std::string_view::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') continue;
    if (lines == max_lines && cut == std::string_view::npos) cut = i;
    ++lines;
  }
  // (Shown on a terminal: control characters and escape sequences of the output made
  // visible, as in `run`.)
  if (cut != std::string_view::npos)
    return fmt::format("{}\n... ({} more lines)", terminal_safe(text.substr(0, cut), true),
                       lines - max_lines);
  if (text.size() > 500) return fmt::format("{}...", terminal_safe(text.substr(0, 500), true));
  return terminal_safe(text, true);
}

/// `--exit-code N` (0-255): the exit code of a simulated prompt action; nullopt after a
/// usage error.
std::optional<int> read_simulated_exit_code(const parsed_args& args) {
  const auto v = args.value("exit-code");
  if (!v) return 0;
  const auto code = parse_count(*v);
  if (!code || *code > 255) {
    print_usage_line(args);
    std::fprintf(stderr, "ll-loop test: error: argument --exit-code: invalid value: '%s' (an "
                         "integer 0-255)\n", v->c_str());
    return std::nullopt;
  }
  return static_cast<int>(*code);
}

/// The state `test` runs; nullptr after saying which states there are.
ll::state_config* find_test_state(ll::fsm_loop& loop, const std::string& target) {
  const auto state = loop.states.find(target);
  if (state != loop.states.end()) return &state->second;
  std::string names;
  for (const auto& entry : loop.states) names += fmt::format("{}{}", names.empty() ? "" : ", ", entry.first);
  say_error(fmt::format("State '{}' not found. Available: {}", target, names));
  return nullptr;
}

/// True, after saying so, when the state has nothing to test (a terminal, no action).
bool nothing_to_test(const ll::state_config& state, const std::string& target) {
  if (state.terminal) {
    fmt::print("State '{}' is a terminal state (nothing to test)\n", terminal_safe(target));
    return true;
  }
  if (!state.action) {
    fmt::print("State '{}' has no action to test\n\n"
               "\u2713 Loop structure is valid (no check action to execute)\n", terminal_safe(target));
    return true;
  }
  return false;
}

/// The loop reduced to one step from `target`: no journal, no maintain restart, no
/// on_max_iterations state. Without `evaluate:` the exit code decides, prompt actions
/// included, as the original's `ll-loop test` evaluates (`evaluate_exit_code`, "exit_code
/// (default)"): no judge runs. True when the exit code was made the evaluator.
bool reduce_to_one_step(ll::fsm_loop& loop, ll::state_config& state, const std::string& target, bool no_llm) {
  const bool by_exit_code = !state.evaluate && !state.next;
  if (by_exit_code) {
    ll::evaluate_config exit_code_config;
    exit_code_config.type = ll::evaluator_type::exit_code;
    state.evaluate = exit_code_config;
  }
  loop.initial = target;
  loop.max_iterations = 1;
  loop.on_max_iterations.reset();
  loop.maintain = false;
  if (no_llm) loop.llm.enabled = false;
  return by_exit_code;
}

/// The action's exit code and output (the first lines of each).
void print_test_action(const test_runner& runner, int simulated_exit_code, bool exit_code_given) {
  if (runner.simulated())
    fmt::print("[SIMULATED] prompt action not run; exit code {}{}\n\n", simulated_exit_code,
               exit_code_given ? " (--exit-code)" : "");
  const std::optional<ll::action_result>& result = runner.last();
  if (!result) return;
  fmt::print("Exit code: {}\n", result->exit_code);
  if (result->timed_out) fmt::print("Timed out\n");
  fmt::print("Output:\n{}\n", test_preview(result->output, 10));
  if (!result->stderr_output.empty()) fmt::print("Stderr:\n{}\n", test_preview(result->stderr_output, 5));
  fmt::print("\n");
}

/// The evaluator and its verdict (with its details); returns the verdict the step routed by.
std::string print_test_verdict(const test_sink& sink, bool by_exit_code, const ll::execution_result& r) {
  std::string verdict = sink.verdict;
  if (!sink.evaluator_type) {
    // A `next:` state without `evaluate:` is not evaluated (seed 002).
    if (verdict.empty() && !r.error) verdict = "success";
    fmt::print("Evaluator: none (next:)\n");
    return verdict;
  }
  const std::string shown = by_exit_code ? std::string("exit_code (default)") : *sink.evaluator_type;
  std::string upper = verdict;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  fmt::print("Evaluator: {}\nVerdict: {}\n", terminal_safe(shown), terminal_safe(upper));
  for (auto it = sink.details.begin(); it != sink.details.end(); ++it) {
    if (by_exit_code && it.key() == "exit_code") continue;
    fmt::print("  {}: {}\n", terminal_safe(it.key()),
               terminal_safe(it->is_string() ? it->get<std::string>()
                                             : it->dump(-1, ' ', false, ll::json::error_handler_t::replace)));
  }
  return verdict;
}

/// For an `output_contains` state: the part of the output the pattern matched and its line,
/// or, when nothing matched and the pattern anchors with `^` or `$`, that those anchor at the
/// whole output (Python's re.search), with the `(?m)` that anchors them at each line.
void print_test_match(const test_sink& sink, const test_runner& runner, const ll::state_config& state) {
  if (sink.evaluator_type != "output_contains" || !runner.last() || !state.evaluate ||
      state.evaluate->source)
    return;
  const auto pattern = sink.details.find("pattern");
  if (pattern == sink.details.end() || !pattern->is_string()) return;
  const std::string& text = pattern->get_ref<const std::string&>();
  const std::string& output = runner.last()->output;
  if (const auto at = ll::pattern_matcher(text).find(output)) {
    const auto line = 1 + std::count(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(at->first), '\n');
    fmt::print("  matched: \"{}\" (line {} of the output)\n",
               one_line(std::string_view(output).substr(at->first, at->second), 120), line);
  } else if ((text.find('^') != std::string::npos || text.find('$') != std::string::npos) &&
             text.find("(?m)") == std::string::npos) {
    fmt::print("  note: ^ and $ anchor at the start and end of the whole output, not of each "
               "line; write (?m){} to anchor at each line\n", terminal_safe(text));
  }
}

/// Where the step would go, its errors and the conclusion; the exit code of `test`.
int print_test_conclusion(const test_sink& sink, const std::string& target, const std::string& verdict) {
  fmt::print("\n");
  if (sink.target)
    fmt::print("Would transition: {} \u2192 {}\n", terminal_safe(target), terminal_safe(*sink.target));
  else
    fmt::print("Would transition: {} \u2192 (no route for '{}')\n", terminal_safe(target),
               terminal_safe(verdict));
  for (const auto& e : sink.errors) fmt::print("Error: {}\n", one_line(e, 300));
  fmt::print("\n");
  const bool has_error = verdict == "error" || sink.details.contains("error") || !sink.target;
  if (has_error) {
    fmt::print("\u26a0 Loop has issues - review the error details above\n");
    return exit_failed;
  }
  fmt::print("\u2713 Loop appears to be configured correctly\n");
  return exit_ok;
}

}  // namespace

int verb_test(const parsed_args& args) {
  const std::string name = args.positional(0);
  run_settings s;
  if (!read_common_run_options(args, s)) return exit_usage;
  auto overrides = parse_context_overrides(args.all("context"));
  if (!overrides) {
    std::fprintf(stderr,
                 "ll-loop test: error: Invalid --context format: '%s' (expected KEY=VALUE)\n",
                 overrides.error().c_str());
    return exit_bad_context;
  }
  const std::optional<int> simulated_exit_code = read_simulated_exit_code(args);
  if (!simulated_exit_code) return exit_usage;
  auto loaded = load_loop(name, *overrides);
  if (!loaded) {
    report_load_failure(loaded.error(), name);
    return exit_failed;
  }
  // The one-step loop derived from the loop as written (validated by the load, which
  // refuses what `validate` refuses) is another loop: make_executor() checks it in turn.
  ll::fsm_loop loop = loaded->loop();
  const std::string target = args.value("state").value_or(loop.initial);
  ll::state_config* state = find_test_state(loop, target);
  if (state == nullptr) return exit_failed;
  fmt::print("## Test Iteration: {}\n\nState: {}\n", terminal_safe(loop.name), terminal_safe(target));
  if (nothing_to_test(*state, target)) return exit_ok;
  const bool by_exit_code = reduce_to_one_step(loop, *state, target, args.has("no-llm"));

  ll::posix_runner_options opts;
  if (s.shell_command) opts.shell_command = *s.shell_command;
  if (s.output_limit) opts.output_limit = static_cast<std::size_t>(*s.output_limit);
  const std::string run_id = new_run_id();  // so a second Ctrl-C finds the action
  opts.environment.emplace_back(std::string(run_id_variable), run_id);
  ll::posix_process_runner process_runner(std::move(opts));
  test_runner runner(process_runner, *simulated_exit_code);
  std::stop_source stop;
  ll::basic_evaluator<ll::command_judge> evaluator{ll::command_judge(judge_options(s, stop.get_token()))};
  auto made = ll::make_executor(loop, runner, evaluator, test_sink{});
  if (!made) {
    report_load_failure(failure_of(made.error(), *loaded), name);
    return exit_failed;
  }
  auto& ex = *made;
  std::fflush(stdout);
  {
    std::stop_callback forward(stop.get_token(), [&ex]() noexcept { ex.request_stop(); });
    stop_signals signals(stop, {}, run_id);
    ex.step();
  }
  print_test_action(ex.runner(), *simulated_exit_code, args.value("exit-code").has_value());
  if (stop.stop_requested()) {
    say_error("interrupted");
    return exit_failed;
  }
  const std::string verdict = print_test_verdict(ex.sink(), by_exit_code, ex.result());
  print_test_match(ex.sink(), ex.runner(), *state);
  return print_test_conclusion(ex.sink(), target, verdict);
}

}  // namespace ll_loop

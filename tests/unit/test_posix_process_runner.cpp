// little_loops — tests of the POSIX process runner (runners/posix_process_runner.hpp)
// SPDX-License-Identifier: MIT
#include <little_loops/runners/posix_process_runner.hpp>

#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include <little_loops/concepts.hpp>

namespace ll = little_loops;
using namespace std::chrono_literals;

namespace {

ll::action_result run_shell(const ll::posix_process_runner& runner, std::string_view text,
                            std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                            std::stop_token stop = {}) {
  ll::action_request req;
  req.state = "test";
  req.text = text;
  req.kind = ll::action_kind::shell;
  req.timeout = timeout;
  req.stop = std::move(stop);
  auto r = runner.run(req);
  REQUIRE(r.has_value());
  return *r;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

/// Waits up to 2 s for `pid` to disappear (it may still be a zombie of init for a moment).
bool gone_soon(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    if (!process_exists(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

long max_rss_kb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

TEST_CASE("posix_process_runner models ActionRunner") {
  static_assert(ll::ActionRunner<ll::posix_process_runner>);
  static_assert(ll::ActionRunner<const ll::posix_process_runner>);
}

TEST_CASE("exit codes and captured streams") {
  const ll::posix_process_runner runner;
  auto ok = run_shell(runner, "echo hello; echo oops >&2");
  CHECK(ok.exit_code == 0);
  CHECK(ok.output == "hello\n");
  CHECK(ok.stderr_output == "oops\n");
  CHECK_FALSE(ok.abnormal());
  CHECK_FALSE(ok.truncated);

  auto three = run_shell(runner, "exit 3");
  CHECK(three.exit_code == 3);
  CHECK(three.signal == 0);
  CHECK_FALSE(three.timed_out);

  auto missing = run_shell(runner, "definitely-not-a-command-xyz");
  CHECK(missing.exit_code == 127);
  CHECK(missing.stderr_output.find("not found") != std::string::npos);
}

TEST_CASE("output written up to the exit is captured whole on both streams") {
  // More than a pipe holds (read while the action runs) and a last part still in the pipes
  // when the child exits (read after its exit is seen).
  const ll::posix_process_runner runner;
  for (int i = 0; i < 20; ++i) {
    auto r = run_shell(runner, "head -c 100000 /dev/zero | tr '\\0' a; printf end; printf 'e%s' rr >&2");
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.size() == 100003);
    CHECK(r.output.substr(r.output.size() - 4) == "aend");
    CHECK(r.stderr_output == "err");
  }
}

TEST_CASE("a program that does not exist reports 127 like sh; not executable reports 126") {
  ll::posix_runner_options opts;
  opts.prompt_command = {"/nonexistent/little-loops-cli"};
  const ll::posix_process_runner runner(opts);
  ll::action_request req;
  req.text = "hello";
  req.kind = ll::action_kind::prompt;
  auto r = runner.run(req);
  REQUIRE(r.has_value());
  CHECK(r->exit_code == 127);
  CHECK(r->not_started);
  CHECK(r->abnormal());  // nothing ran: its (empty) output is not judged
  CHECK(r->stderr_output.find("/nonexistent/little-loops-cli") != std::string::npos);

  opts.prompt_command = {"/etc/hostname"};
  auto r2 = ll::posix_process_runner(opts).run(req);
  REQUIRE(r2.has_value());
  CHECK(r2->exit_code == 126);
  CHECK(r2->not_started);

  // A command the shell cannot find is the shell's exit 127: it ran.
  auto shell = run_shell(ll::posix_process_runner(), "/nonexistent/tool");
  CHECK(shell.exit_code == 127);
  CHECK_FALSE(shell.not_started);
}

TEST_CASE("an action over the kernel's per-argument limit is an error that says so") {
  const ll::posix_process_runner runner;
  ll::action_request req;
  const std::string huge = "echo " + std::string(200000, 'x');  // one sh -c argument, > 128 KiB
  req.text = huge;
  auto r = runner.run(req);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ll::errc::action_failed);
  CAPTURE(r.error().message);
  CHECK(r.error().message.find("Argument list too long") != std::string::npos);
  CHECK(r.error().message.find("longest argument is 200005 bytes") != std::string::npos);
  const std::string large = "echo " + std::string(100000, 'x');  // under the limit: runs
  req.text = large;
  auto ok = runner.run(req);
  REQUIRE(ok.has_value());
  CHECK(ok->output.size() == 100001);
}

TEST_CASE("prompt actions pass the text as one argument, without a shell") {
  ll::posix_runner_options opts;
  opts.prompt_command = {"/bin/sh", "-c", "printf '%s|' \"$@\"", "fake-claude", "-p"};
  const ll::posix_process_runner runner(opts);
  ll::action_request req;
  req.text = "fix it; rm -rf / $(boom) 'quoted'";
  req.kind = ll::action_kind::prompt;
  auto r = runner.run(req);
  REQUIRE(r.has_value());
  CHECK(r->output == "-p|fix it; rm -rf / $(boom) 'quoted'|");

  req.kind = ll::action_kind::slash_command;  // falls back to prompt_command
  req.text = "/ll:check";
  auto s = runner.run(req);
  REQUIRE(s.has_value());
  CHECK(s->output == "-p|/ll:check|");
}

TEST_CASE("a prompt action's agent comes before its text; its automation profile is in its environment") {
  ll::posix_runner_options opts;
  opts.prompt_command = {"/bin/sh", "-c",
                         "printf '%s|' \"$@\"; printf '[%s:%s:%s]' \"${LL_AUTOMATION-unset}\" "
                         "\"${LL_AUTOMATION_PROFILE-unset}\" \"$KEEP\"",
                         "fake-claude", "-p"};
  opts.environment = {{"KEEP", "kept"}};
  ll::action_request req;
  req.text = "review";
  req.kind = ll::action_kind::slash_command;
  req.agent = "loop-specialist";
  req.automation_profile = "tight";
  auto r = ll::posix_process_runner(opts).run(req);
  REQUIRE(r.has_value());
  CHECK(r->output == "-p|--agent|loop-specialist|review|[1:tight:kept]");

  req.agent = {};
  req.automation_profile = {};
  auto plain = ll::posix_process_runner(opts).run(req);
  REQUIRE(plain.has_value());
  CHECK(plain->output == "-p|review|[unset:unset:kept]");

  opts.agent_option.clear();  // a prompt command without an agent option
  req.agent = "loop-specialist";
  auto unnamed = ll::posix_process_runner(opts).run(req);
  REQUIRE(unnamed.has_value());
  CHECK(unnamed->output == "-p|review|[unset:unset:kept]");

  // A shell action is given neither.
  req.kind = ll::action_kind::shell;
  req.automation_profile = "tight";
  req.text = "printf '%s' \"${LL_AUTOMATION-unset}\"";
  auto shell = ll::posix_process_runner(opts).run(req);
  REQUIRE(shell.has_value());
  CHECK(shell->output == "unset");
}

TEST_CASE("an mcp_tool action runs as mcp_command, its tool and its params; 30 s by default") {
  CHECK(ll::posix_runner_options{}.mcp_command == std::vector<std::string>{"mcp-call"});
  CHECK(ll::posix_runner_options{}.mcp_default_timeout == std::chrono::seconds(30));
  ll::posix_runner_options opts;
  opts.mcp_command = {"/bin/sh", "-c", "printf '%s|' \"$@\"", "fake-mcp-call"};
  opts.mcp_default_timeout = std::chrono::milliseconds(200);
  opts.default_timeout = std::chrono::seconds(60);
  ll::action_request req;
  req.kind = ll::action_kind::mcp_tool;
  req.text = "playwright/screenshot";
  req.params = R"({"url":"http://x"})";
  req.agent = "not-for-mcp";
  auto r = ll::posix_process_runner(opts).run(req);
  REQUIRE(r.has_value());
  CHECK(r->output == "playwright/screenshot|{\"url\":\"http://x\"}|");
  req.params = {};
  auto empty = ll::posix_process_runner(opts).run(req);
  REQUIRE(empty.has_value());
  CHECK(empty->output == "playwright/screenshot|{}|");
  // Without a timeout of its own the call gets mcp_default_timeout, not default_timeout.
  opts.mcp_command = {"/bin/sh", "-c", "sleep 5", "fake-mcp-call"};
  const auto start = std::chrono::steady_clock::now();
  auto slow = ll::posix_process_runner(opts).run(req);
  REQUIRE(slow.has_value());
  CHECK(slow->timed_out);
  CHECK(slow->exit_code == 124);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(4));
}

TEST_CASE("killed by a signal: signal set, exit code -sig (Python's returncode)") {
  const ll::posix_process_runner runner;
  auto r = run_shell(runner, "kill -KILL $$");
  CHECK(r.signal == SIGKILL);
  CHECK(r.exit_code == -SIGKILL);
  CHECK(r.abnormal());
  CHECK_FALSE(r.timed_out);
  // A shell that reports its child's death exits normally with 128+sig: not a signal.
  auto shell = run_shell(runner, "sh -c 'kill -TERM $$'; exit $?");
  CHECK(shell.signal == 0);
  CHECK(shell.exit_code == 128 + SIGTERM);
}

TEST_CASE("shell actions run with bash -c by default (seed 002), configurable") {
  const ll::posix_process_runner runner;
  auto r = run_shell(runner, "[[ 1 == 1 ]] && echo {1..3} && echo -e 'a\\tb'");
  CHECK(r.exit_code == 0);
  CHECK(r.output == "1 2 3\na\tb\n");
  ll::posix_runner_options opts;
  opts.shell_command = {"/bin/sh", "-c"};
  const ll::posix_process_runner posix(opts);
  CHECK(run_shell(posix, "printf '%s' \"$0\"").output == "/bin/sh");
}

TEST_CASE("working directory and extra environment") {
  const auto dir = std::filesystem::temp_directory_path() / "ll_runner_cwd_test";
  std::filesystem::create_directories(dir);
  ll::posix_runner_options opts;
  opts.working_directory = dir.string();
  opts.environment = {{"LL_TEST_VAR", "forty two"}, {"HOME", "/nowhere"}};
  const ll::posix_process_runner runner(opts);
  auto r = run_shell(runner, "pwd; echo \"$LL_TEST_VAR\"; echo \"$HOME\"; echo \"${PATH:+has-path}\"");
  CHECK(r.output == std::filesystem::canonical(dir).string() + "\nforty two\n/nowhere\nhas-path\n");

  opts.inherit_environment = false;
  opts.environment = {{"ONLY", "1"}};
  auto clean = run_shell(ll::posix_process_runner(opts), "echo \"${ONLY}-${HOME:-no-home}\"");
  CHECK(clean.output == "1-no-home\n");

  opts.working_directory = (dir / "missing").string();
  auto bad = run_shell(ll::posix_process_runner(opts), "true");
  CHECK(bad.exit_code == 127);
  CHECK(bad.stderr_output.find("missing") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("stdin of actions is /dev/null") {
  const ll::posix_process_runner runner;
  auto r = run_shell(runner, "cat; echo done", 5s);
  CHECK(r.output == "done\n");
  CHECK_FALSE(r.timed_out);
  // The same /dev/null for each action (one descriptor kept by the runner's thread), read-only.
  for (int i = 0; i < 2; ++i) {
    auto fd0 = run_shell(runner, "readlink /proc/$$/fd/0; echo x 2>/dev/null >&0 || echo read-only");
    CHECK(fd0.output == "/dev/null\nread-only\n");
  }
}

TEST_CASE("output is capped with a marker, head and tail kept") {
  ll::posix_runner_options opts;
  opts.output_limit = 100;
  opts.truncation_marker = "<CUT>";
  const ll::posix_process_runner runner(opts);
  auto r = run_shell(runner, "i=0; while [ $i -lt 100 ]; do printf '%03d' $i; i=$((i+1)); done; printf END");
  CHECK(r.truncated);
  CHECK(r.output_limit == 100);  // where it was cut: a fact of the result
  CHECK(r.exit_code == 0);
  REQUIRE(r.output.size() == 100 + 5);
  CHECK(r.output.substr(0, 9) == "000001002");
  CHECK(r.output.substr(50, 5) == "<CUT>");
  CHECK(r.output.substr(r.output.size() - 6) == "099END");

  auto exact = run_shell(runner, "printf '%0100d' 7");
  CHECK_FALSE(exact.truncated);
  CHECK(exact.output_limit == 0);
  CHECK(exact.output.size() == 100);

  auto err = run_shell(runner, "printf '%0200d' 1 >&2");
  CHECK(err.truncated);
  CHECK(err.output.empty());
  CHECK(err.stderr_output.find("<CUT>") == 50);
}

TEST_CASE("capped_buffer keeps the head and the latest tail, in one buffer of the cap's size") {
  // Against a model: the first limit - limit/2 bytes, the marker, the last limit/2 bytes.
  std::mt19937 rng(7);
  const std::string marker = "<cut>";
  for (int round = 0; round < 400; ++round) {
    const std::size_t limit = rng() % 40;
    ll::detail::capped_buffer buf(limit);
    std::string all;
    const int chunks = static_cast<int>(rng() % 12);
    for (int c = 0; c < chunks; ++c) {
      std::string chunk(rng() % 30, '\0');
      for (char& ch : chunk) ch = static_cast<char>('a' + rng() % 26);
      buf.append(chunk.data(), chunk.size());
      all += chunk;
    }
    const std::size_t head = limit - limit / 2, tail = limit / 2;
    const std::string expected =
        all.size() <= limit ? all : all.substr(0, head) + marker + all.substr(all.size() - tail);
    CAPTURE(limit);
    CAPTURE(all);
    CHECK(buf.truncated() == (all.size() > limit));
    CHECK(buf.total() == all.size());
    CHECK(buf.finish(marker) == expected);
  }
}

TEST_CASE("100 MB of output: drained to the end, memory bounded by the cap") {
  ll::posix_runner_options opts;
  opts.output_limit = 1 << 20;
  const ll::posix_process_runner runner(opts);
  const long before = max_rss_kb();
  auto r = run_shell(runner, "head -c 100000000 /dev/zero; echo; echo tail-marker", 60s);
  const long after = max_rss_kb();
  CHECK(r.exit_code == 0);
  CHECK(r.truncated);
  CHECK(r.output.size() == (1u << 20) + opts.truncation_marker.size());
  CHECK(r.output.substr(r.output.size() - 12) == "tail-marker\n");
  CHECK(after - before < 16 * 1024);  // KiB: far below the 100 MB that went through

  auto yes = run_shell(runner, "yes | head -c 50000000 | wc -c", 60s);
  CHECK(yes.output == "50000000\n");
}

TEST_CASE("wall-clock timeout and idle timeout are reported distinctly") {
  const ll::posix_process_runner runner;
  const auto t0 = std::chrono::steady_clock::now();
  auto wall = run_shell(runner, "while true; do echo tick; sleep 0.05; done", 400ms);
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  CHECK(wall.timed_out);
  CHECK_FALSE(wall.idle_timeout);
  CHECK_FALSE(wall.cancelled);
  CHECK(wall.exit_code == 124);
  CHECK(wall.output.find("tick") == 0);

  ll::posix_runner_options opts;
  opts.idle_timeout = 300ms;
  const ll::posix_process_runner idle_runner(opts);
  auto idle = run_shell(idle_runner, "echo start; sleep 30", 10s);
  CHECK(idle.timed_out);
  CHECK(idle.idle_timeout);
  CHECK(idle.exit_code == 124);
  CHECK(idle.output == "start\n");
  CHECK(idle.stderr_output.find("no output") != std::string::npos);

  // Steady output keeps an idle timeout from firing.
  auto busy = run_shell(idle_runner, "for i in 1 2 3 4 5 6; do echo $i; sleep 0.1; done", 10s);
  CHECK_FALSE(busy.timed_out);
  CHECK(busy.exit_code == 0);
}

TEST_CASE("the loop deadline stops an action like a timeout") {
  const ll::posix_process_runner runner;
  ll::action_request req;
  req.text = "sleep 30";
  req.timeout = 60s;
  req.deadline = std::chrono::steady_clock::now() + 200ms;
  auto r = runner.run(req);
  REQUIRE(r.has_value());
  CHECK(r->timed_out);
  CHECK(r->duration < 5s);
}

TEST_CASE("TERM is followed by KILL after the grace period") {
  ll::posix_runner_options opts;
  opts.kill_grace = 200ms;
  const ll::posix_process_runner runner(opts);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_shell(runner, "trap '' TERM; echo ready; sleep 30", 300ms);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
}

TEST_CASE("a grandchild holding the pipe neither blocks the result nor survives") {
  const auto pid_file = std::filesystem::temp_directory_path() / "ll_runner_grandchild.pid";
  std::filesystem::remove(pid_file);
  const ll::posix_process_runner runner;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string cmd = "sleep 100 & echo $! > '" + pid_file.string() + "'; echo parent-done";
  auto r = run_shell(runner, cmd, 30s);
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.output == "parent-done\n");
  std::string text;
  {
    FILE* f = std::fopen(pid_file.c_str(), "r");
    REQUIRE(f != nullptr);
    char buf[32] = {};
    CHECK(std::fgets(buf, sizeof buf, f) != nullptr);
    std::fclose(f);
    text = buf;
  }
  const pid_t grandchild = static_cast<pid_t>(std::atol(text.c_str()));
  REQUIRE(grandchild > 0);
  CHECK(gone_soon(grandchild));
  std::filesystem::remove(pid_file);
}

TEST_CASE("a timeout kills the whole process group") {
  const auto pid_file = std::filesystem::temp_directory_path() / "ll_runner_group.pid";
  std::filesystem::remove(pid_file);
  const ll::posix_process_runner runner;
  const std::string cmd = "sleep 100 > /dev/null 2>&1 & echo $! > '" + pid_file.string() + "'; sleep 100";
  auto r = run_shell(runner, cmd, 300ms);
  CHECK(r.timed_out);
  FILE* f = std::fopen(pid_file.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[32] = {};
  CHECK(std::fgets(buf, sizeof buf, f) != nullptr);
  std::fclose(f);
  const pid_t grandchild = static_cast<pid_t>(std::atol(buf));
  REQUIRE(grandchild > 0);
  CHECK(gone_soon(grandchild));
  std::filesystem::remove(pid_file);
}

TEST_CASE("leftover background jobs can be kept") {
  const auto pid_file = std::filesystem::temp_directory_path() / "ll_runner_keep.pid";
  ll::posix_runner_options opts;
  opts.kill_leftover_processes = false;
  const ll::posix_process_runner runner(opts);
  auto r = run_shell(runner, "sleep 100 > /dev/null 2>&1 & echo $! > '" + pid_file.string() + "'", 10s);
  CHECK(r.exit_code == 0);
  FILE* f = std::fopen(pid_file.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[32] = {};
  CHECK(std::fgets(buf, sizeof buf, f) != nullptr);
  std::fclose(f);
  const pid_t job = static_cast<pid_t>(std::atol(buf));
  REQUIRE(job > 0);
  CHECK(process_exists(job));
  ::kill(job, SIGKILL);
  std::filesystem::remove(pid_file);

  // After a timeout the whole group goes all the same, a job that ignores TERM included.
  ll::action_request req;
  const std::string stubborn_job =
      "(trap '' TERM; exec sleep 100 > /dev/null 2>&1) & echo $! > '" + pid_file.string() +
      "'; wait";  // the shell dies of the TERM at once; its job does not
  req.text = stubborn_job;
  req.timeout = std::chrono::milliseconds(300);
  auto timed = runner.run(req);
  REQUIRE(timed.has_value());
  CHECK(timed->timed_out);
  f = std::fopen(pid_file.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf2[32] = {};
  CHECK(std::fgets(buf2, sizeof buf2, f) != nullptr);
  std::fclose(f);
  const pid_t stubborn = static_cast<pid_t>(std::atol(buf2));
  REQUIRE(stubborn > 0);
  CHECK(gone_soon(stubborn));
  std::filesystem::remove(pid_file);
}

TEST_CASE("a NUL byte in the command line is an error, not a command cut short") {
  const ll::posix_process_runner runner;
  ll::action_request req;
  static constexpr char with_nul[] = "echo first; echo second\0; echo third";
  const std::string text(with_nul, sizeof with_nul - 1);
  req.text = text;
  auto r = runner.run(req);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ll::errc::action_failed);
  CHECK(r.error().message.find("NUL byte") != std::string::npos);
}

TEST_CASE("cancellation from another thread") {
  const ll::posix_process_runner runner;
  std::stop_source source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    source.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_shell(runner, "echo started; sleep 30", 30s, source.get_token());
  canceller.join();
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK(r.cancelled);
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == SIGTERM);
  CHECK(r.output == "started\n");

  // Already cancelled: nothing is started.
  auto pre = run_shell(runner, "echo never", 30s, source.get_token());
  CHECK(pre.cancelled);
  CHECK(pre.output.empty());

  // The stop reached this thread's (reused) wake-up descriptor: the next actions, with
  // tokens that are not stopped, run to their end.
  std::stop_source fresh;
  for (int i = 0; i < 3; ++i) {
    auto next = run_shell(runner, "sleep 0.05; echo next", 30s, fresh.get_token());
    CHECK_FALSE(next.cancelled);
    CHECK(next.exit_code == 0);
    CHECK(next.output == "next\n");
  }
  // A stop requested while the action runs, then again a run that is not stopped.
  std::stop_source second;
  std::thread stopper([&] {
    std::this_thread::sleep_for(100ms);
    second.request_stop();
  });
  auto stopped = run_shell(runner, "sleep 30", 30s, second.get_token());
  stopper.join();
  CHECK(stopped.cancelled);
  auto after = run_shell(runner, "sleep 0.05; echo after", 30s, fresh.get_token());
  CHECK_FALSE(after.cancelled);
  CHECK(after.output == "after\n");
}

#if LITTLE_LOOPS_CLONE_SPAWN
TEST_CASE("the runner's own spawn: the program runs with a pidfd; anything that stops it short is reaped and left to posix_spawnp") {
  namespace d = ll::detail;
  char sh[] = "/bin/sh", dash_c[] = "-c", script[] = "exit 7";
  char* argv[] = {sh, dash_c, script, nullptr};
  const int null_fd = d::null_input_fd();
  d::clone_spawn_job job{"/bin/sh", argv, environ, null_fd, null_fd, null_fd, nullptr, -1, -1, 0};
  int pidfd = -1;
  const pid_t pid = d::clone_spawn(job, &pidfd);
  REQUIRE(pid > 0);
  REQUIRE(pidfd > 2);
  CHECK((::fcntl(pidfd, F_GETFD) & FD_CLOEXEC) != 0);
  CHECK(::getpgid(pid) == pid);  // its own process group, set before clone_spawn returns
  pollfd p{pidfd, POLLIN, 0};
  CHECK(::poll(&p, 1, 10000) == 1);  // readable at its exit
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WEXITSTATUS(status) == 7);
  ::close(pidfd);

  // Could not exec, could not chdir: 0, the child already reaped, no descriptor left open.
  for (const char* cwd : {static_cast<const char*>(nullptr), "/nonexistent-dir-of-little-loops"}) {
    job.path = cwd == nullptr ? "/etc/hostname" : "/bin/sh";
    job.cwd = cwd;
    CHECK(d::clone_spawn(job, &pidfd) == 0);
    CHECK(pidfd == -1);
    CHECK(job.failed_errno != 0);  // (no program: ENOEXEC or EACCES; no directory: ENOENT)
    if (cwd != nullptr) CHECK(job.failed_errno == ENOENT);
    CHECK(::waitpid(-1, &status, WNOHANG) == -1);
    CHECK(errno == ECHILD);
  }
}
#endif

TEST_CASE("no zombies are left behind") {
  const ll::posix_process_runner runner;
  for (int i = 0; i < 20; ++i) (void)run_shell(runner, "exit 0");
  int status = 0;
  CHECK(::waitpid(-1, &status, WNOHANG) == -1);  // ECHILD: every child was reaped
  CHECK(errno == ECHILD);
}

TEST_CASE("stdin data is fed without deadlock and a vanished reader raises no SIGPIPE") {
  const ll::posix_process_runner runner;
  auto req = ll::detail::make_process_request(runner);
  std::string big(1 << 20, 'x');
  req.argv = {"/bin/sh", "-c", "wc -c"};
  req.stdin_data = &big;
  req.deadline = std::chrono::steady_clock::now() + 30s;
  auto r = ll::detail::run_process(req);
  REQUIRE(r.has_value());
  CHECK(r->output.find("1048576") != std::string::npos);

  req.argv = {"/bin/sh", "-c", "exec 0<&-; echo closed"};
  auto gone = ll::detail::run_process(req);
  REQUIRE(gone.has_value());
  CHECK(gone->output == "closed\n");
}

TEST_CASE("consecutive actions each get their own stdin and working directory") {
  // The spawn's file actions are reused while the descriptors and directory repeat: changing
  // either between actions must change what the next action sees.
  const ll::posix_process_runner runner;
  const auto dir = std::filesystem::temp_directory_path();
  const std::string cwd = dir.string();
  const std::string data = "fed\n";
  auto req = ll::detail::make_process_request(runner);
  req.deadline = std::chrono::steady_clock::now() + 30s;
  req.argv = {"/bin/sh", "-c", "pwd -P; cat"};  // -P: physical, like current_path()
  for (int round = 0; round < 2; ++round) {
    req.stdin_data = nullptr;
    req.working_directory = nullptr;
    auto plain = ll::detail::run_process(req);
    REQUIRE(plain.has_value());
    CHECK(plain->output == std::filesystem::current_path().string() + "\n");  // stdin is /dev/null
    req.stdin_data = &data;
    req.working_directory = cwd.c_str();
    auto fed = ll::detail::run_process(req);
    REQUIRE(fed.has_value());
    CHECK(fed->output == std::filesystem::canonical(dir).string() + "\nfed\n");
    const std::string root = "/";
    req.working_directory = root.c_str();
    auto at_root = ll::detail::run_process(req);
    REQUIRE(at_root.has_value());
    CHECK(at_root->output == "/\nfed\n");
  }
}

TEST_CASE("runner descriptors are not inherited by actions") {
  const ll::posix_process_runner runner;
  // Every descriptor the action sees beyond 0/1/2 must be one the host itself lets children
  // inherit (a test harness may pass some down); none of the runner's pipes may leak.
  auto r = run_shell(runner, "ls /proc/$$/fd; true");  // the shell's descriptors, listed by a
                                                       // child (`; true`: bash does not exec ls)
  REQUIRE(!r.output.empty());
  std::size_t pos = 0;
  int extra = 0;
  while (pos < r.output.size()) {
    const auto nl = r.output.find('\n', pos);
    const std::string line = r.output.substr(pos, nl - pos);
    pos = nl + 1;
    const int fd = std::atoi(line.c_str());
    if (fd <= 2) continue;
    ++extra;
    const int flags = ::fcntl(fd, F_GETFD);
    INFO("descriptor " << fd);
    CHECK(flags >= 0);
    CHECK((flags & FD_CLOEXEC) == 0);
  }
  MESSAGE("inherited descriptors beyond stdio: " << extra);
}

TEST_CASE("a host that ignores SIGCHLD: the lost exit status is an error, never a success") {
  // The kernel reaps the children of a process that ignores SIGCHLD: `exit 3` and a signal
  // death cannot be told from a success, so the runner says it does not know.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGCHLD, &ignore, &old) == 0);
  const ll::posix_process_runner runner;
  ll::action_request req;
  // Many times: the child may be reaped before or after the runner opens its pidfd (then
  // it has none, and must not wait for ever for an exit it can no longer see).
  for (int round = 0; round < 40; ++round)
    for (const char* text : {"exit 3", "kill -KILL $$", "true"}) {
      CAPTURE(text);
      req.text = text;
      auto r = runner.run(req);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == ll::errc::action_failed);
      CHECK(r.error().message.find("SIGCHLD") != std::string::npos);
    }
  REQUIRE(::sigaction(SIGCHLD, &old, nullptr) == 0);
  // The runner's view of a child, without reaping it: running, exited (ours to reap), or
  // gone (reaped by someone else: then no exit can be waited for any more).
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  REQUIRE(child > 0);
  CHECK(ll::detail::peek_child(child) == ll::detail::child_state::running);
  ::kill(child, SIGKILL);
  for (int i = 0; i < 200 && ll::detail::peek_child(child) == ll::detail::child_state::running; ++i)
    std::this_thread::sleep_for(5ms);
  CHECK(ll::detail::peek_child(child) == ll::detail::child_state::exited);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(ll::detail::peek_child(child) == ll::detail::child_state::gone);
  auto fine = run_shell(runner, "exit 3");
  CHECK(fine.exit_code == 3);
}

TEST_CASE("actions get default signal dispositions and an empty mask, whatever the host set") {
  // A host that ignores SIGPIPE (common), ignores SIGUSR1, handles SIGUSR2 and blocks SIGHUP
  // must not pass any of that on (`yes | head` would spin with SIGPIPE ignored).
  struct sigaction ignore {}, handle {}, old_pipe {}, old_usr1 {}, old_usr2 {};
  ignore.sa_handler = SIG_IGN;
  handle.sa_handler = [](int) {};
  REQUIRE(::sigaction(SIGPIPE, &ignore, &old_pipe) == 0);
  REQUIRE(::sigaction(SIGUSR1, &ignore, &old_usr1) == 0);
  REQUIRE(::sigaction(SIGUSR2, &handle, &old_usr2) == 0);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGHUP);
  REQUIRE(::pthread_sigmask(SIG_BLOCK, &block, &old_mask) == 0);

  const ll::posix_process_runner runner;
  // `exec`: the spawned process itself reads its own status (dispositions and mask survive
  // exec). Reading the shell's status from a child would race with the shell's own
  // fork-time signal blocking.
  auto r = run_shell(runner, "exec grep -E '^Sig(Ign|Blk|Cgt):' /proc/self/status");

  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  ::sigaction(SIGUSR2, &old_usr2, nullptr);

  REQUIRE(r.exit_code == 0);
  auto mask_of = [&](std::string_view key) {
    const auto at = r.output.find(key);
    REQUIRE(at != std::string::npos);
    return std::stoull(r.output.substr(at + key.size()), nullptr, 16);
  };
  auto bit = [](int sig) { return 1ULL << (sig - 1); };
  const unsigned long long ignored = mask_of("SigIgn:");
  const unsigned long long blocked = mask_of("SigBlk:");
  const unsigned long long caught = mask_of("SigCgt:");
  CHECK((ignored & bit(SIGPIPE)) == 0);
  CHECK((ignored & bit(SIGUSR1)) == 0);
  CHECK(ignored == (bit(32) | bit(33)));  // only glibc's own two, as its posix_spawn leaves them
  CHECK((caught & bit(SIGUSR2)) == 0);
  CHECK((blocked & bit(SIGHUP)) == 0);
  CHECK(blocked == 0);
}

namespace {

/// A temporary directory tree and PATH for the duration of a test case (restored after).
struct path_sandbox {
  std::filesystem::path root;
  std::string saved_path;
  bool had_path;
  path_sandbox() : root(std::filesystem::temp_directory_path() / ("ll_path_test_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
    const char* p = std::getenv("PATH");
    had_path = p != nullptr;
    if (p != nullptr) saved_path = p;
  }
  path_sandbox(const path_sandbox&) = delete;
  path_sandbox& operator=(const path_sandbox&) = delete;
  ~path_sandbox() {
    if (had_path)
      ::setenv("PATH", saved_path.c_str(), 1);
    else
      ::unsetenv("PATH");
    std::filesystem::remove_all(root);
  }
  /// Writes a script printing `tag` (executable unless `executable` is false).
  std::filesystem::path program(const std::string& dir, const std::string& name, const std::string& tag,
                                bool executable = true) const {
    std::filesystem::create_directories(root / dir);
    const auto file = root / dir / name;
    // Atomically replaced, as installers do: a file being written is never executed.
    const auto tmp = root / dir / (name + ".tmp");
    {
      std::FILE* f = std::fopen(tmp.c_str(), "w");
      REQUIRE(f != nullptr);
      std::fputs(("#!/bin/sh\necho " + tag + "\n").c_str(), f);
      std::fclose(f);
    }
    std::filesystem::permissions(tmp, executable ? std::filesystem::perms(0755) : std::filesystem::perms(0644));
    std::filesystem::rename(tmp, file);
    return file;
  }
  std::string dir(const std::string& d) const { return (root / d).string(); }
};

}  // namespace

TEST_CASE("program lookup: the first executable regular file on PATH, as posix_spawnp finds it") {
  path_sandbox box;
  box.program("a", "ll-prog", "a", false);            // not executable: skipped
  std::filesystem::create_directories(box.root / "b" / "ll-prog");  // a directory: skipped
  const auto c = box.program("c", "ll-prog", "c");
  box.program("d", "ll-prog", "d");
  ::setenv("PATH", (box.dir("missing") + ":" + box.dir("a") + ":" + box.dir("b") + "/:" + box.dir("c") +
                    ":" + box.dir("d")).c_str(), 1);
  ll::detail::program_lookup_cache cache;
  const std::string name = "ll-prog";
  CHECK(std::string(cache.lookup(name)) == c.string());
  CHECK(cache.lookup(name) == cache.lookup(name));  // reused, not searched again

  SUBCASE("not looked up: a name with a slash, a relative PATH entry, no PATH, not found") {
    const std::string with_slash = "./ll-prog";
    CHECK(cache.lookup(with_slash) == with_slash.c_str());
    ::setenv("PATH", (box.dir("missing") + "::" + box.dir("c")).c_str(), 1);  // "" is the cwd
    CHECK(cache.lookup(name) == name.c_str());
    ::setenv("PATH", ("bin:" + box.dir("c")).c_str(), 1);
    CHECK(cache.lookup(name) == name.c_str());
    ::unsetenv("PATH");
    CHECK(cache.lookup(name) == name.c_str());
    ::setenv("PATH", box.dir("missing").c_str(), 1);
    CHECK(cache.lookup(name) == name.c_str());
  }
  SUBCASE("a program installed earlier on PATH is found at once") {
    const auto b2 = box.program("missing", "ll-prog", "new");
    CHECK(std::string(cache.lookup(name)) == b2.string());
  }
  SUBCASE("a skipped file made executable is found at once") {
    std::filesystem::permissions(box.root / "a" / "ll-prog", std::filesystem::perms(0755));
    CHECK(std::string(cache.lookup(name)) == (box.root / "a" / "ll-prog").string());
  }
  SUBCASE("another PATH is searched anew") {
    ::setenv("PATH", box.dir("d").c_str(), 1);
    CHECK(std::string(cache.lookup(name)) == (box.root / "d" / "ll-prog").string());
  }
  SUBCASE("forget drops the answer (the runner's retry after a failed start)") {
    std::filesystem::remove(c);  // its directory's candidates are not watched: only those before
    CHECK(std::string(cache.lookup(name)) == c.string());
    cache.forget(name);
    CHECK(std::string(cache.lookup(name)) == (box.root / "d" / "ll-prog").string());
  }
}

TEST_CASE("actions find their program on PATH as it is when each one starts") {
  path_sandbox box;
  box.program("late", "ll-shell", "late");
  ::setenv("PATH", (box.dir("early") + ":" + box.dir("late") + ":" + box.saved_path).c_str(), 1);
  ll::posix_runner_options opts;
  opts.shell_command = {"ll-shell"};
  const ll::posix_process_runner runner(opts);
  CHECK(run_shell(runner, "x").output == "late\n");
  box.program("early", "ll-shell", "early");  // installed before `late` on PATH
  CHECK(run_shell(runner, "x").output == "early\n");
  std::filesystem::remove(box.root / "early" / "ll-shell");  // gone: the next one on PATH runs
  CHECK(run_shell(runner, "x").output == "late\n");
  std::filesystem::remove(box.root / "late" / "ll-shell");
  CHECK(run_shell(runner, "x").exit_code == 127);
  box.program("late", "ll-shell", "back");
  CHECK(run_shell(runner, "x").output == "back\n");

  // A found file without "#!" fails to start as after a search by posix_spawnp (ENOEXEC:
  // glibc runs no /bin/sh fallback), and argv[0] stays the name the program was given.
  {
    std::FILE* f = std::fopen((box.root / "late" / "ll-plain").c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("echo plain\n", f);
    std::fclose(f);
    std::filesystem::permissions(box.root / "late" / "ll-plain", std::filesystem::perms(0755));
  }
  opts.shell_command = {"ll-plain"};
  const auto plain = run_shell(ll::posix_process_runner(opts), "x");
  CHECK(plain.exit_code == 126);
  CHECK(plain.stderr_output.find("Exec format error") != std::string::npos);
  CHECK(run_shell(ll::posix_process_runner{}, "printf '%s' \"$0\"").output == "bash");
}

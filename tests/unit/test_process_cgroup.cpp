// little_loops — tests of the process runner's containment: cgroups where delegated, process groups elsewhere
// SPDX-License-Identifier: MIT
#include <little_loops/runners/posix_process_runner.hpp>

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

namespace ll = little_loops;
using namespace std::chrono_literals;

namespace {

/// Whether `pid` is alive (a zombie, killed and not yet reaped by its new parent, is not).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return ::kill(pid, 0) == 0;
  const auto paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() || (text[paren + 2] != 'Z' && text[paren + 2] != 'X');
}

/// Waits up to 2 s for `pid` to die.
bool dies_soon(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    if (!alive(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

/// Runs `text` as a shell action of `runner`, which must exit 0; the pid it prints.
pid_t run_printing_pid(const ll::posix_process_runner& runner, const std::string& text) {
  ll::action_request req;
  req.state = "test";
  req.text = text;
  req.kind = ll::action_kind::shell;
  req.timeout = 10s;
  auto r = runner.run(req);
  REQUIRE(r.has_value());
  CHECK(r->exit_code == 0);
  return static_cast<pid_t>(std::atol(r->output.c_str()));
}

/// The cgroups the runner made under `parent` that are still there.
int leftover_cgroups(const std::string& parent) {
  int found = 0;
  const std::string prefix = "little_loops-" + std::to_string(::getpid()) + "-";
  for (const auto& entry : std::filesystem::directory_iterator(parent))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ++found;
  return found;
}

// A process in a session of its own, in the background; the action prints its pid once it
// has left the action's process group, and exits.
const std::string escapee_file = (std::filesystem::temp_directory_path() /
                                  ("ll_cgroup_escapee." + std::to_string(::getpid()))).string();
const std::string escapee = "rm -f '" + escapee_file + "'; setsid sh -c 'echo $$ > \"$0\"; exec sleep 300' '" +
                            escapee_file + "' > /dev/null 2>&1 < /dev/null & while [ ! -s '" + escapee_file +
                            "' ]; do sleep 0.01; done; cat '" + escapee_file + "'";

const bool no_cgroups = !ll::cgroup_containment_available();

}  // namespace

TEST_CASE("the cgroup directory is found through mountinfo and /proc/self/cgroup") {
  const std::string mountinfo =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "41 31 0:38 / /sys/fs/cgroup/my\\040unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n";
  CHECK(ll::detail::cgroup_v2_directory(mountinfo, "4:memory:/x\n0::/\n") == "/sys/fs/cgroup/my unified");
  CHECK(ll::detail::cgroup_v2_directory(mountinfo, "0::/user.slice/app\n") ==
        "/sys/fs/cgroup/my unified/user.slice/app");
  // Hybrid or v1-only: no `0::` line, or no cgroup2 mount.
  CHECK_FALSE(ll::detail::cgroup_v2_directory(mountinfo, "4:memory:/x\n").has_value());
  CHECK_FALSE(ll::detail::cgroup_v2_directory("35 31 0:32 / /m rw - cgroup cgroup rw\n", "0::/\n").has_value());
  // A mount of part of the hierarchy holds only the groups below its root.
  const std::string part = "50 1 0:40 /ci/job /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  CHECK(ll::detail::cgroup_v2_directory(part, "0::/ci/job/step\n") == "/sys/fs/cgroup/step");
  CHECK(ll::detail::cgroup_v2_directory(part, "0::/ci/job\n") == "/sys/fs/cgroup");
  CHECK_FALSE(ll::detail::cgroup_v2_directory(part, "0::/ci/jobs\n").has_value());
}

TEST_CASE("process_group containment: background jobs die, and no cgroup is made") {
  // Runs everywhere: the fallback, chosen here by the option (as where no cgroup is delegated).
  ll::posix_runner_options opts;
  opts.containment = ll::process_containment::process_group;
  const ll::posix_process_runner runner(opts);
  const pid_t job = run_printing_pid(runner, "sleep 300 > /dev/null 2>&1 & echo $!");
  REQUIRE(job > 0);
  CHECK(dies_soon(job));
  // A process in a session of its own is out of reach of the group: the limitation that
  // cgroups lift.
  const pid_t escaped = run_printing_pid(runner, escapee);
  REQUIRE(escaped > 0);
  std::this_thread::sleep_for(50ms);
  CHECK(alive(escaped));
  ::kill(escaped, SIGKILL);
  if (!ll::detail::delegated_cgroup().empty()) CHECK(leftover_cgroups(ll::detail::delegated_cgroup()) == 0);
}

TEST_CASE("cgroup containment: a process that left with setsid dies with the action" *
          doctest::skip(no_cgroups) * doctest::description("needs a delegated cgroup v2 group")) {
  const ll::posix_process_runner runner;
  const pid_t escaped = run_printing_pid(runner, escapee);
  REQUIRE(escaped > 0);
  CHECK(dies_soon(escaped));
  CHECK(leftover_cgroups(ll::detail::delegated_cgroup()) == 0);  // removed after the action

  // The action runs inside its cgroup (a child of ours), from its first instruction.
  ll::action_request req;
  req.text = "cat /proc/self/cgroup";
  req.kind = ll::action_kind::shell;
  auto r = runner.run(req);
  REQUIRE(r.has_value());
  CHECK(r->output.find("0::") != std::string::npos);
  CHECK(r->output.find("/little_loops-" + std::to_string(::getpid()) + "-") != std::string::npos);
}

TEST_CASE("cgroup containment: a timeout kills the escaped process too" * doctest::skip(no_cgroups) *
          doctest::description("needs a delegated cgroup v2 group")) {
  const auto pid_file = std::filesystem::temp_directory_path() / "ll_cgroup_timeout.pid";
  std::filesystem::remove(pid_file);
  const ll::posix_process_runner runner;
  ll::action_request req;
  req.kind = ll::action_kind::shell;
  const std::string text =
      "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > '" + pid_file.string() + "'; sleep 300";
  req.text = text;
  req.timeout = 300ms;
  auto r = runner.run(req);
  REQUIRE(r.has_value());
  CHECK(r->timed_out);
  std::ifstream in(pid_file);
  pid_t escaped = 0;
  in >> escaped;
  REQUIRE(escaped > 0);
  CHECK(dies_soon(escaped));
  std::filesystem::remove(pid_file);
}

#if LITTLE_LOOPS_CLONE_SPAWN
TEST_CASE("the clone spawn places the child in the cgroup: by clone3, or by the child's own write" *
          doctest::skip(no_cgroups) * doctest::description("needs a delegated cgroup v2 group")) {
  namespace d = ll::detail;
  for (const bool by_clone3 : {true, false}) {
    CAPTURE(by_clone3);
    auto cgroup = d::action_cgroup::create(d::delegated_cgroup());
    REQUIRE(cgroup.active());
    const auto out = std::filesystem::temp_directory_path() / ("ll_cgroup_spawn." + std::to_string(::getpid()));
    const std::string script = "cat /proc/self/cgroup > '" + out.string() + "'";
    char sh[] = "/bin/sh", dash_c[] = "-c";
    char* argv[] = {sh, dash_c, const_cast<char*>(script.c_str()), nullptr};
    const int null_fd = d::null_input_fd();
    d::clone_spawn_job job{"/bin/sh", argv, environ, null_fd, null_fd, null_fd, nullptr,
                           by_clone3 ? cgroup.directory_fd() : -1, cgroup.procs_fd(), 0};
    int pidfd = -1;
    const pid_t pid = d::clone_spawn(job, &pidfd);
    REQUIRE(pid > 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (pidfd >= 0) ::close(pidfd);
    CHECK(WEXITSTATUS(status) == 0);
    std::ifstream in(out);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name = cgroup.directory().substr(cgroup.directory().rfind('/'));
    CHECK(text.find("0::") != std::string::npos);
    CHECK(text.find(name + "\n") != std::string::npos);
    std::filesystem::remove(out);
  }
}
#endif

TEST_CASE("kill_cgroup without cgroup.kill: freeze, kill each pid, thaw" * doctest::skip(no_cgroups) *
          doctest::description("needs a delegated cgroup v2 group")) {
  auto cgroup = ll::detail::action_cgroup::create(ll::detail::delegated_cgroup());
  REQUIRE(cgroup.active());
  // A process moved into the cgroup after it started, as its forks would be.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::execlp("sleep", "sleep", "300", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(ll::detail::write_cgroup_file(cgroup.directory(), "cgroup.procs", std::to_string(child)));
  ll::detail::kill_cgroup(cgroup.directory(), /*use_kill_file=*/false);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  const std::string dir = cgroup.directory();
  cgroup.remove();
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("empty cgroups a dead process left are swept; busy ones and a live owner's are kept") {
  const std::filesystem::path parent =
      std::filesystem::temp_directory_path() / ("ll_sweep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(parent);
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  REQUIRE(dead > 0);
  int status = 0;
  REQUIRE(::waitpid(dead, &status, 0) == dead);
  const auto orphan = parent / ("little_loops-" + std::to_string(dead) + "-3");
  const auto ours = parent / ("little_loops-" + std::to_string(::getpid()) + "-0");
  const auto other = parent / "little_loops-notapid-0";
  const auto busy = parent / ("little_loops-" + std::to_string(dead) + "-4");
  for (const auto& dir : {orphan, ours, other, busy}) std::filesystem::create_directory(dir);
  std::ofstream(busy / "cgroup.procs") << "12345\n";  // a crashed run's action, for its resume
  ll::detail::sweep_orphan_cgroups(parent.string());
  CHECK_FALSE(std::filesystem::exists(orphan));
  CHECK(std::filesystem::exists(ours));
  CHECK(std::filesystem::exists(other));
  CHECK(std::filesystem::exists(busy));
  std::filesystem::remove_all(parent);
}

// little_loops — cgroup v2 containment: one action's processes in a cgroup of their own, killed as one
// SPDX-License-Identifier: MIT
#pragma once

// POSIX only; reached from the opt-in process runner, never from fsm.hpp. On Linux, where
// the cgroup v2 directory of this process is delegated to it (writable), every action runs
// in a child cgroup of it made for that action; at cleanup the whole cgroup is killed
// (cgroup.kill, or freeze and kill each pid on kernels before 5.14) and removed. A process
// that left the action's process group (setsid) cannot leave its cgroup. Elsewhere, and
// whenever the directory cannot be made, the action is held by its process group alone.

#include <little_loops/config.hpp>
#include <little_loops/detail/posix_io.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A mountinfo path with its octal escapes (`\040` for a space, …) decoded.
inline std::string unescape_mount_path(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' &&
        text[i + 2] >= '0' && text[i + 2] <= '7' && text[i + 3] >= '0' && text[i + 3] <= '7') {
      out.push_back(static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

/// The directory of this process's cgroup v2 group, from the text of /proc/self/mountinfo and
/// /proc/self/cgroup (its `0::PATH` line); nullopt without a cgroup2 mount that holds it.
inline std::optional<std::string> cgroup_v2_directory(std::string_view mountinfo, std::string_view proc_cgroup) {
  std::optional<std::string> group;
  std::istringstream cgroups{std::string(proc_cgroup)};
  for (std::string line; std::getline(cgroups, line);)
    if (line.rfind("0::", 0) == 0) group = line.substr(3);
  if (!group || group->empty() || group->front() != '/') return std::nullopt;
  std::istringstream mounts{std::string(mountinfo)};
  for (std::string line; std::getline(mounts, line);) {
    // id parent major:minor root mount-point options [optional fields] - fstype source …
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, mount_point;
    if (!(fields >> id >> parent >> device >> root >> mount_point)) continue;
    root = unescape_mount_path(root);
    mount_point = unescape_mount_path(mount_point);
    // The group must lie under the mount's root (a cgroup namespace or a bind mount shows part).
    if (root != "/" && group->compare(0, root.size(), root) != 0) continue;
    if (root != "/" && group->size() > root.size() && (*group)[root.size()] != '/') continue;
    std::string below = root == "/" ? *group : group->substr(root.size());
    if (below == "/") below.clear();
    return mount_point + below;
  }
  return std::nullopt;
}

/// The whole text of a small file (a /proc or cgroupfs file); empty when it cannot be read.
inline std::string read_small_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// This process's cgroup v2 directory when it is delegated to us: actions may get cgroups
/// below it (the directory and its cgroup.procs writable). Empty otherwise. Found once.
inline const std::string& delegated_cgroup() {
  static const std::string found = [] {
#if defined(__linux__)
    const auto dir = cgroup_v2_directory(read_small_file("/proc/self/mountinfo"),
                                         read_small_file("/proc/self/cgroup"));
    if (dir && ::access(dir->c_str(), W_OK) == 0 && ::access((*dir + "/cgroup.procs").c_str(), W_OK) == 0)
      return *dir;
#endif
    return std::string();
  }();
  return found;
}

/// Writes `text` into the cgroup file `dir/name`; false when it cannot be written.
inline bool write_cgroup_file(const std::string& dir, const char* name, std::string_view text) noexcept {
  const unique_fd fd = open_fd((dir + "/" + name).c_str(), O_WRONLY);
  return fd.valid() && write_all(fd.get(), text);
}

/// The pids in the cgroup `dir` (its cgroup.procs).
inline std::string cgroup_procs(const std::string& dir) { return read_small_file((dir + "/cgroup.procs").c_str()); }

/// Kills every process in the cgroup `dir`: one write to cgroup.kill where the kernel has it
/// (Linux 5.14), else freezes the cgroup (nothing in it can fork while its pids are read),
/// kills each pid and thaws it so that the signals are taken. `use_kill_file` false takes
/// the second way (tests reach it on kernels with cgroup.kill).
inline void kill_cgroup(const std::string& dir, bool use_kill_file = true) {
  if (use_kill_file && write_cgroup_file(dir, "cgroup.kill", "1")) return;
  for (int round = 0; round < 16; ++round) {
    const bool frozen = write_cgroup_file(dir, "cgroup.freeze", "1");
    if (frozen) {
      // The freeze completes asynchronously; cgroup.events says `frozen 1` once it has.
      for (int wait = 0; wait < 200 && read_small_file((dir + "/cgroup.events").c_str()).find("frozen 1") ==
                                           std::string::npos; ++wait)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    std::istringstream pids(cgroup_procs(dir));
    bool any = false;
    for (long pid = 0; pids >> pid;) {
      if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
      any = true;
    }
    if (frozen) write_cgroup_file(dir, "cgroup.freeze", "0");
    if (!any || frozen) return;  // (unfrozen, a process may have forked between read and kill)
  }
}

/// Removes the empty action cgroups below `parent` that a process which no longer exists
/// left behind (it was killed before its cleanup ran). One that still holds processes stays:
/// they are a crashed run's, which its `resume` finds and stops (then the next sweep removes
/// the cgroup). A cgroup of a live process, ours or another run's, is left alone.
inline void sweep_orphan_cgroups(const std::string& parent) {
  DIR* listing = ::opendir(parent.c_str());
  if (listing == nullptr) return;
  constexpr std::string_view prefix = "little_loops-";
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name.substr(0, prefix.size()) != prefix) continue;
    const std::string_view rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    long owner = 0;
    for (const char c : rest.substr(0, dash)) {
      if (c < '0' || c > '9' || owner > 4'194'304) {
        owner = 0;
        break;
      }
      owner = owner * 10 + (c - '0');
    }
    if (owner <= 0 || dash == std::string_view::npos) continue;
    if (::kill(static_cast<pid_t>(owner), 0) == 0 || errno != ESRCH) continue;  // still there
    (void)::rmdir((parent + "/" + std::string(name)).c_str());  // EBUSY while not empty
  }
  ::closedir(listing);
}

/// One action's cgroup: made by `create`, killed by `kill`, removed when destroyed (its
/// processes are killed first, so that nothing outlives the action).
class action_cgroup {
 public:
  action_cgroup() = default;
  action_cgroup(const action_cgroup&) = delete;
  action_cgroup& operator=(const action_cgroup&) = delete;
  action_cgroup(action_cgroup&& other) noexcept
      : dir_(std::move(other.dir_)), dir_fd_(std::move(other.dir_fd_)), procs_(std::move(other.procs_)) {
    other.dir_.clear();
  }
  action_cgroup& operator=(action_cgroup&&) = delete;
  ~action_cgroup() { remove(); }

  /// A new cgroup below `parent` (empty: none, the action has its process group alone).
  static action_cgroup create(const std::string& parent) {
    action_cgroup made;
    static std::atomic<bool> refused{false};
    static std::atomic<unsigned long> serial{0};
    static std::atomic<bool> swept{false};
    if (parent.empty() || refused.load(std::memory_order_relaxed)) return made;
    if (!swept.exchange(true, std::memory_order_relaxed)) sweep_orphan_cgroups(parent);
    const std::string prefix = parent + "/little_loops-" + std::to_string(::getpid()) + "-";
    for (int attempt = 0; attempt < 4; ++attempt) {
      std::string dir = prefix + std::to_string(serial.fetch_add(1, std::memory_order_relaxed));
      if (::mkdir(dir.c_str(), 0755) != 0) {
        if (errno == EEXIST) continue;  // left by an earlier process of the same pid
        if (errno == EACCES || errno == EPERM || errno == EROFS) refused.store(true, std::memory_order_relaxed);
        return made;
      }
      made.dir_fd_ = open_fd(dir.c_str(), O_RDONLY | O_DIRECTORY);
      made.procs_ = open_fd((dir + "/cgroup.procs").c_str(), O_WRONLY);
      made.dir_ = std::move(dir);
      if (!made.procs_.valid() || !made.dir_fd_.valid()) made.remove();
      return made;
    }
    return made;
  }

  /// Whether the action is to run in this cgroup.
  [[nodiscard]] bool active() const noexcept { return !dir_.empty(); }
  /// The cgroup's directory (empty when none).
  [[nodiscard]] const std::string& directory() const noexcept { return dir_; }
  /// The cgroup's directory, open (for clone3's CLONE_INTO_CGROUP; -1 when none).
  [[nodiscard]] int directory_fd() const noexcept { return dir_fd_.get(); }
  /// The cgroup's cgroup.procs, open for writing: where clone3 cannot be used, the child
  /// writes "0" to it before its exec (-1 when none).
  [[nodiscard]] int procs_fd() const noexcept { return procs_.get(); }

  /// Kills every process in the cgroup.
  void kill() const {
    if (active()) kill_cgroup(dir_);
  }

  /// Kills what is left in the cgroup and removes it; the killed processes take a moment to
  /// leave it, so removal is retried (for at most about two seconds).
  void remove() noexcept {
    if (dir_.empty()) return;
    procs_.reset();
    dir_fd_.reset();
    try {
      for (int attempt = 0; attempt < 2000; ++attempt) {
        if (::rmdir(dir_.c_str()) == 0 || errno != EBUSY) break;
        if (attempt % 50 == 0) kill_cgroup(dir_);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    } catch (...) {  // (allocation failed: the directory stays; its processes were killed)
    }
    dir_.clear();
  }

 private:
  std::string dir_;
  unique_fd dir_fd_;
  unique_fd procs_;
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — the runner's own spawn on Linux x86-64/glibc: clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD)
// SPDX-License-Identifier: MIT
#pragma once

// POSIX only; reached from the opt-in process runner, never from fsm.hpp.

#include <little_loops/config.hpp>
#include <little_loops/detail/posix_io.hpp>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sched.h>
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

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

#if LITTLE_LOOPS_CLONE_SPAWN
// The runner's own spawn: clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) on a stack kept per
// thread. It does what posix_spawn with the runner's attributes does in the child (default
// dispositions for every signal, a process group of its own, stdin/stdout/stderr, the working
// directory, an empty signal mask, exec), places the child in the action's cgroup (when it has
// one), and the pidfd comes with the clone: no pidfd_open(), and no child stack mapped and unmapped per action (about 13 µs of a 650 µs
// `/bin/sh -c true` on the machine it was measured on). Only a program given by path is
// started here, and only when it starts: anything else (clone refused, a failed chdir or
// exec) is reaped and left to posix_spawnp, which starts it or reports the failure.
struct clone_spawn_job {
  const char* path;
  char* const* argv;
  char* const* envp;
  int in, out, err;
  const char* cwd;
  int cgroup_dir;    // the action's cgroup directory (clone3's CLONE_INTO_CGROUP); -1: none
  int cgroup_procs;  // its cgroup.procs, open for writing (the child writes itself in); -1: none
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
  // Into the action's cgroup before the exec ("0" names the writer): the program and all it
  // starts are in it from their first instruction, and the parent, suspended until the
  // exec, sees the child only once it is there.
  if ((job->cgroup_procs >= 0 && ::syscall(SYS_write, job->cgroup_procs, "0", 1) != 1) ||
      ::syscall(SYS_setpgid, 0, 0) != 0 || ::syscall(SYS_dup2, job->in, 0) < 0 ||
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

/// clone3()'s arguments (struct clone_args of Linux 5.7, with `cgroup`).
struct clone3_args {
  std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
      set_tid_size, cgroup;
};

/// clone3(`args`) with the child running `fn(arg)` on the stack the arguments give, then
/// exiting with its result: the parent gets the pid or -errno. In assembly, as glibc's
/// clone(): the child must not return into C code, whose frame is on the parent's stack.
__attribute__((noinline, no_sanitize("address", "undefined"))) inline long clone3_run(clone3_args* args,
                                                                                     int (*fn)(void*),
                                                                                     void* arg) noexcept {
  long result = 435;  // SYS_clone3
  register void* child_fn asm("r12") = reinterpret_cast<void*>(fn);
  register void* child_arg asm("r13") = arg;
  asm volatile(
      "syscall\n\t"
      "testq %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xorl %%ebp, %%ebp\n\t"  // the child, on its stack: fn(arg), then exit
      "movq %%r13, %%rdi\n\t"
      "callq *%%r12\n\t"
      "movl %%eax, %%edi\n\t"
      "movl $60, %%eax\n\t"  // SYS_exit
      "syscall\n\t"
      "ud2\n\t"
      "1:\n\t"
      : "+a"(result)
      : "D"(args), "S"(sizeof(clone3_args)), "r"(child_fn), "r"(child_arg)
      : "rcx", "r11", "rdx", "r8", "r9", "r10", "memory", "cc");
  return result;
}

/// Starts `job` in its cgroup with clone3(CLONE_INTO_CGROUP) (Linux 5.7): the child is
/// created there, which costs nothing, while writing it into cgroup.procs is a migration
/// (a synchronize_rcu() of the kernel's: 1-15 ms on the machine measured). The pid, or
/// -errno when clone3 refused (the caller then uses clone() and the write).
inline long clone3_into_cgroup(clone_spawn_job& job, clone_spawn_stack& stack, int* pidfd) noexcept {
  clone3_args args{};
  args.flags = CLONE_VM | CLONE_VFORK | 0x00001000 /* CLONE_PIDFD */ | 0x200000000ULL /* CLONE_INTO_CGROUP */;
  args.pidfd = reinterpret_cast<std::uint64_t>(pidfd);
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<std::uint64_t>(stack.base + clone_spawn_stack::guard);
  args.stack_size = clone_spawn_stack::size;
  args.cgroup = static_cast<std::uint64_t>(job.cgroup_dir);
  const int procs = job.cgroup_procs;
  job.cgroup_procs = -1;  // (placed by the kernel)
  const long pid = clone3_run(&args, clone_spawn_child, &job);
  job.cgroup_procs = procs;
  return pid;
}

/// Starts `job` (see above): the child's pid when the program runs, with `*pidfd` (-1 on a
/// kernel without CLONE_PIDFD); 0 when it could not get to the program (it is reaped:
/// posix_spawnp is to try); -1 when clone() cannot be used here at all (then never again in
/// this process).
inline pid_t clone_spawn(clone_spawn_job& job, int* pidfd) noexcept {
  static std::atomic<bool> unusable{false};
  if (unusable.load(std::memory_order_relaxed)) return -1;
  static std::atomic<bool> no_clone3{false};  // (a kernel before 5.7, a seccomp filter)
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
  pid_t pid = -1;
  int clone_errno = 0;
  if (job.cgroup_dir >= 0 && !no_clone3.load(std::memory_order_relaxed)) {
    const long placed = clone3_into_cgroup(job, stack, pidfd);
    if (placed >= 0)
      pid = static_cast<pid_t>(placed);
    else if (placed == -ENOSYS || placed == -EINVAL || placed == -E2BIG || placed == -EPERM)
      no_clone3.store(true, std::memory_order_relaxed);
  }
  if (pid < 0) {
    pid = ::clone(clone_spawn_child, stack.base + clone_spawn_stack::size + clone_spawn_stack::guard,
                  CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &job, pidfd);
    clone_errno = errno;
  }
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

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

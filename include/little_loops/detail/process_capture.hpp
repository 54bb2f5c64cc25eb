// little_loops — supervising one action's process: capped capture, stdin, timeouts, stop, group kill
// SPDX-License-Identifier: MIT
#pragma once

// POSIX only; reached from the opt-in process runner, never from fsm.hpp.

#include <little_loops/config.hpp>
#include <little_loops/detail/posix_io.hpp>
#include <little_loops/detail/process_spawn.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/eventfd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

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

/// A stop request of one action, registered for its whole supervision. On every way out:
/// deregister, then empty the wake-up descriptor if a stop may have written to it (the next
/// action must not see this one's stop).
struct stop_registration {
  stop_wakeup& wakeup;
  const std::stop_token& token;
  std::optional<std::stop_callback<stop_notifier>> callback;

  stop_registration(stop_wakeup& w, const std::stop_token& t) : wakeup(w), token(t) {
    if (token.stop_possible() && wakeup.ready()) callback.emplace(token, stop_notifier{wakeup.write_fd()});
  }
  stop_registration(const stop_registration&) = delete;
  stop_registration& operator=(const stop_registration&) = delete;
  ~stop_registration() { reset(); }

  /// The descriptor poll() watches for the stop; -1 when none is registered.
  [[nodiscard]] int fd() const noexcept { return callback ? wakeup.read_fd() : -1; }
  void reset() noexcept {
    if (!callback) return;
    callback.reset();
    if (token.stop_requested()) wakeup.drain();
  }
};

/// Readies a started child's descriptors for supervision: how its exit is seen, which write
/// ends stay here, a non-blocking stdin (or none when there is nothing to feed).
inline void prepare_capture(const process_request& req, process_pipes& pipes, spawned_child& child) noexcept {
  // With a pidfd the exit is seen there, and the output pipes' write ends stay open here
  // until it is: the pipes cannot reach end-of-file while the child is exiting, so the end
  // of an action is one wake-up (as for a plain wait) rather than one per pipe plus one
  // for the exit. Without a pidfd they are closed now and end-of-file is watched for.
  if (!child.exit_fd.valid()) child.exit_fd.reset(open_exit_fd(child.pid));
  if (!child.exit_fd.valid()) {
    pipes.out_w.reset();
    pipes.err_w.reset();
  }
  pipes.in_r.reset();
  // The output pipes stay blocking: they are read only after poll() reports them ready,
  // when read() does not wait.
  if (pipes.in_w.valid()) {
    set_nonblocking(pipes.in_w.get());
    if (req.stdin_data->empty()) pipes.in_w.reset();
  }
}

/// Why an action was stopped before it ended by itself.
enum class stop_reason { none, wall, idle, cancel };

/// The supervision of one started child: captures stdout/stderr (capped), feeds stdin,
/// enforces the deadline / idle timeout / stop request (TERM to the group, KILL after the
/// grace period) and, once the child has exited, abandons pipes its descendants hold after
/// drain_window. The child is left unreaped.
class process_supervisor {
 public:
  using clock = std::chrono::steady_clock;
  using milliseconds = std::chrono::milliseconds;

  process_supervisor(const process_request& req, spawned_child& child, process_pipes& pipes,
                     stop_registration& stop, clock::time_point start)
      : req_(req), pid_(child.pid), exit_fd_(child.exit_fd), pipes_(pipes), stop_(stop),
        out_buf_(req.output_limit), err_buf_(req.output_limit), last_output_(start) {}

  /// Supervises until the child has exited and its pipes ended (or drain_window passed). An
  /// error when poll() fails: the group is then killed and the child reaped.
  expected<void, error> run() {
    for (;;) {
      const auto now = clock::now();
      enforce_limits(now);
      if (finished(now)) return {};
      poll_set set = watched();
      const int ready = ::poll(set.fds, set.count, poll_timeout(now));
      if (ready < 0) {
        if (errno == EINTR) continue;
        ::kill(-pid_, SIGKILL);  // cannot supervise any more: do not leave it running
        int status;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        return unexpected(error{errc::io_error, "poll failed: " + errno_text(errno)});
      }
      if (ready > 0) serve(set, clock::now());
    }
  }

  [[nodiscard]] stop_reason reason() const noexcept { return reason_; }
  capped_buffer& out() noexcept { return out_buf_; }
  capped_buffer& err() noexcept { return err_buf_; }

 private:
  struct poll_set {
    pollfd fds[5]{};
    nfds_t count = 0;
    int out_i = -1, err_i = -1, in_i = -1, exit_i = -1, stop_i = -1;
  };

  void begin_stop(stop_reason why, clock::time_point now) {
    reason_ = why;
    ::kill(-pid_, SIGTERM);
    kill_at_ = now + req_.kill_grace;
  }

  // Starts the stop a limit or a stop request calls for, and the KILL its grace period ends in.
  void enforce_limits(clock::time_point now) {
    if (!exited_ && reason_ == stop_reason::none) {
      if (req_.stop.stop_requested())
        begin_stop(stop_reason::cancel, now);
      else if (req_.deadline && now >= *req_.deadline)
        begin_stop(stop_reason::wall, now);
      else if (req_.idle_timeout && now - last_output_ >= *req_.idle_timeout)
        begin_stop(stop_reason::idle, now);
    }
    if (kill_at_ && !killed_hard_ && !exited_ && now >= *kill_at_) {
      ::kill(-pid_, SIGKILL);
      killed_hard_ = true;
    }
  }

  // True once the child has exited and its pipes ended, or the drain window is over.
  bool finished(clock::time_point now) {
    // (Gone counts as exited: its pipes end, and the status check after supervision reports it.)
    if (!exited_ && !exit_fd_.valid()) exited_ = peek_child(pid_) != child_state::running;
    if (exited_ && !drain_until_) drain_until_ = now + req_.drain_window;
    return exited_ && ((!pipes_.out_r.valid() && !pipes_.err_r.valid()) || now >= *drain_until_);
  }

  // The poll() timeout: sleep until something happens or the nearest deadline.
  int poll_timeout(clock::time_point now) const {
    std::optional<clock::time_point> wake;
    auto consider = [&](clock::time_point t) {
      if (!wake || t < *wake) wake = t;
    };
    if (!exited_ && reason_ == stop_reason::none) {
      if (req_.deadline) consider(*req_.deadline);
      if (req_.idle_timeout) consider(last_output_ + *req_.idle_timeout);
    }
    if (kill_at_ && !killed_hard_ && !exited_) consider(*kill_at_);
    if (drain_until_) consider(*drain_until_);
    if (!exited_ && !exit_fd_.valid()) consider(now + milliseconds(20));  // no pidfd: poll
    if (!wake) return -1;
    const auto left = std::chrono::ceil<milliseconds>(*wake - now).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
  }

  // The descriptors to wait on: the open pipes, the exit and the stop request.
  poll_set watched() const {
    poll_set s;
    auto add = [&s](int fd, short events) {
      s.fds[s.count] = {fd, events, 0};
      return static_cast<int>(s.count++);
    };
    if (pipes_.out_r.valid()) s.out_i = add(pipes_.out_r.get(), POLLIN);
    if (pipes_.err_r.valid()) s.err_i = add(pipes_.err_r.get(), POLLIN);
    if (pipes_.in_w.valid()) s.in_i = add(pipes_.in_w.get(), POLLOUT);
    if (exit_fd_.valid() && !exited_) s.exit_i = add(exit_fd_.get(), POLLIN);
    if (const int stop_fd = stop_.fd(); stop_fd >= 0 && reason_ == stop_reason::none && !exited_)
      s.stop_i = add(stop_fd, POLLIN);
    return s;
  }

  // Handles what poll() reported ready.
  void serve(const poll_set& s, clock::time_point now) {
    serve_output(s, s.out_i, pipes_.out_r, out_buf_, now);
    serve_output(s, s.err_i, pipes_.err_r, err_buf_, now);
    if (s.in_i >= 0 && s.fds[s.in_i].revents != 0) feed_stdin(s.fds[s.in_i].revents);
    if (s.exit_i >= 0 && s.fds[s.exit_i].revents != 0) {
      exited_ = true;
      // Our write ends go: the pipes now end as soon as no descendant holds them (usually
      // at once; the next poll() sees it).
      pipes_.out_w.reset();
      pipes_.err_w.reset();
    }
    if (s.stop_i >= 0 && s.fds[s.stop_i].revents != 0 && reason_ == stop_reason::none) {
      if (req_.stop.stop_requested())
        begin_stop(stop_reason::cancel, now);
      else
        stop_.wakeup.drain();  // not this action's stop (e.g. a forked host shares the descriptor)
    }
  }

  // A pipe that reports hang-up without data is at its end: closed without a read().
  void serve_output(const poll_set& s, int i, unique_fd& fd, capped_buffer& buf, clock::time_point now) {
    if (i < 0 || s.fds[i].revents == 0) return;
    if ((s.fds[i].revents & (POLLIN | POLLERR | POLLNVAL)) == 0 && (s.fds[i].revents & POLLHUP) != 0)
      fd.reset();
    else
      read_into(fd, buf, now);
  }

  void read_into(unique_fd& fd, capped_buffer& buf, clock::time_point now) {
    char chunk[65536];
    ssize_t n;
    do {
      n = ::read(fd.get(), chunk, sizeof chunk);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      buf.append(chunk, static_cast<std::size_t>(n));
      last_output_ = now;
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
      fd.reset();
    }
  }

  void feed_stdin(short revents) {
    if ((revents & POLLOUT) == 0) {
      pipes_.in_w.reset();  // reader gone
      return;
    }
    const std::string& data = *req_.stdin_data;
    const ssize_t n = write_no_sigpipe(pipes_.in_w.get(), data.data() + stdin_offset_,
                                       std::min<std::size_t>(data.size() - stdin_offset_, 65536));
    if (n > 0) stdin_offset_ += static_cast<std::size_t>(n);
    if ((n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || stdin_offset_ >= data.size())
      pipes_.in_w.reset();
  }

  const process_request& req_;
  pid_t pid_;
  unique_fd& exit_fd_;
  process_pipes& pipes_;
  stop_registration& stop_;
  capped_buffer out_buf_, err_buf_;
  stop_reason reason_ = stop_reason::none;
  std::optional<clock::time_point> kill_at_;
  bool killed_hard_ = false;
  bool exited_ = false;
  std::optional<clock::time_point> drain_until_;
  clock::time_point last_output_;
  std::size_t stdin_offset_ = 0;
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

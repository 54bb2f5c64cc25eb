// little_loops — ll-loop: terminal output (progress display, colours, messages, durations)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/events.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/text.hpp>  // UTF-8 and float text for display.cpp and loading.cpp

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
#include <functional>
#include <iterator>
#include <set>

namespace ll_loop {

namespace ll = little_loops;

/// ANSI styling that is active only on a terminal with NO_COLOR unset or empty.
struct style {
  bool enabled = false;

  /// Colour decision for a stream: isatty(fd) and NO_COLOR unset/empty.
  static style for_stream(std::FILE* stream);

  [[nodiscard]] std::string bold(std::string_view s) const;
  [[nodiscard]] std::string dim(std::string_view s) const;
  [[nodiscard]] std::string green(std::string_view s) const;
  [[nodiscard]] std::string red(std::string_view s) const;
  [[nodiscard]] std::string yellow(std::string_view s) const;
  [[nodiscard]] std::string cyan(std::string_view s) const;
};

/// `text` made safe to print on a terminal, whatever wrote it (a loop file, an action, an
/// LLM's reply): C0 control characters and DEL in caret notation (ESC → `^[`), C1 controls
/// (U+0080–U+009F) and ill-formed UTF-8 as U+FFFD — nothing printed can move the cursor,
/// retitle the window or hide text. `keep_lines`: newlines and tabs stay as they are.
/// `keep_sgr`: colour sequences (`ESC [ digits/; m`) stay too (for a message styled by
/// `style` on a colour terminal).
std::string terminal_safe(std::string_view text, bool keep_lines = false, bool keep_sgr = false);

/// Messages in the Python original's wording: success/info on stdout, errors on stderr.
/// Each goes through terminal_safe (lines kept; colour sequences only when the stream gets
/// colour).
void say(std::string_view message);
void say_error(std::string_view message);
void say_warning(std::string_view message);
/// A plain line on stderr (no prefix): what follows an error, or a note that must keep
/// stdout clean (`--json`).
void say_note(std::string_view message);

/// `0.4s`, `12.0s`, `3m 5s` (the Python original's run summary format).
std::string format_duration_summary(std::int64_t ms);
/// `12ms`, `1.5s`, `2m 3s`: short form for per-action durations.
std::string format_duration_short(std::int64_t ms);
/// One display line: newlines and tabs → spaces, other control characters as by
/// terminal_safe, cut to `max` bytes (on a character boundary) with "..." appended.
std::string one_line(std::string_view text, std::size_t max);
/// A throttle event in one line: `throttle_warn: fix ran 8 actions (warn_max 8, hard_max 12)`,
/// `throttle_hard: … → escalate`, `throttle_stop: … (hard_max 12): the run ends`.
std::string throttle_line(const ll::throttle_event& e);
/// A learning event in one line: `proven: Anthropic SDK streaming`, `stale (missing):
/// X`, `exploring X (attempt 1)`, `refuted: X`, `blocked on X (retries_exhausted)`,
/// `complete: A, B`.
std::string learning_line(const ll::learning_event& e);
/// `value` as Python's repr() prints the same data after json.loads: `{'from': 'a', 'n': 2,
/// 'ok': True, 'x': None, 'l': [1.0, 'b']}` (the original's `ll-loop history` prints event
/// details so). Strings are quoted and escaped as repr does (`\n`, `\x1b`, `\u2028`…),
/// which also keeps them safe on a terminal.
std::string python_repr(const ll::json& value);

/// `value` as JSON text (`indent` < 0: one line). Text that is not UTF-8 (an action's raw
/// output) is written with U+FFFD in place of the bad bytes, never an exception.
inline std::string json_text(const ll::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, ll::json::error_handler_t::replace);
}
/// True for verdicts shown with ✓ (success, target, progress).
bool is_positive_verdict(std::string_view verdict);

/// @brief The live progress display of `ll-loop run` / `resume` / `simulate` (an EventSink).
///
/// ```
/// [1/6] check → grep -qx 'mode=ready' demo.conf
///        ✗ failure (3ms)
///        → fix
/// ```
/// On a terminal, an action running for more than a second gets a live elapsed-time line
/// (`… 3.2s`) that is erased when it ends.
///
/// Output is written with one write() each time the loop is about to wait (an action
/// starts, the evaluator runs, a backoff sleep, a state without an action) or stop, not per
/// event: a step of a loop whose states have actions costs one write, so a terminal is woken
/// once per step (`✓ done (3ms)` / `→ next` / `[2/6] next → cmd` arrive together). Anything
/// else that writes to `out` meanwhile must call flush() first.
class progress_display {
 public:
  /// `loop`: its max_iterations (shown as `[i/N]`), its backoff and which states have no
  /// action (the display flushes before those waits).
  progress_display(std::FILE* out, style s, const ll::fsm_loop& loop);
  progress_display(const progress_display&) = delete;
  progress_display& operator=(const progress_display&) = delete;
  ~progress_display();

  /// Shows every action's output (the tail of stdout and stderr) under its result line;
  /// without it only a failed action's stderr tail is shown.
  void set_verbose(bool verbose) noexcept { verbose_ = verbose; }

  void on_event(const ll::loop_event& event) noexcept;
  /// Writes what the display holds (before other output to the same stream).
  void flush() noexcept;

 private:
  void handle(const ll::loop_event& event);
  // One line (or part of one) per kind of event; kinds not shown have no overload.
  void show(const ll::loop_resume_event& e);
  void show(const ll::loop_start_event& e);
  void show(const ll::state_enter_event& e);
  void show(const ll::action_start_event& e);
  void show(const ll::action_complete_event& e);
  void show(const ll::evaluate_event& e);
  void show(const ll::route_event& e);
  void show(const ll::error_event& e);
  void show(const ll::handoff_event& e);
  void show(const ll::max_iterations_event& e);
  void show(const ll::loop_complete_event& e);
  void show(const ll::resilience_event& e);
  void show(const ll::throttle_event& e);
  void show(const ll::learning_event& e);
  void show(const ll::guard_event& e);
  template <class Event>
  void show(const Event&) {}
  [[nodiscard]] bool waits_after(const ll::loop_event& event) const;
  void write_out() noexcept;
  /// Formats into the buffer write_out() writes.
  template <class... Args>
  void put(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), format, std::forward<Args>(args)...);
  }
  void flush_pending_action();
  void erase_ticker();
  void tick();

  bool live_ = false;             // a terminal: show the elapsed-time ticker
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
  bool quit_ = false;
  bool action_running_ = false;
  bool ticker_shown_ = false;
  std::chrono::steady_clock::time_point action_started_;

  std::FILE* out_;
  std::string buf_;               // written at the next wait (write_out)
  style style_;
  std::int64_t max_iterations_;
  bool backoff_ = false;          // the loop sleeps after each route
  std::set<std::string, std::less<>> no_action_;  // states that go to their evaluator directly
  bool line_open_ = false;        // "[i/N] state" printed, waiting for " → action"
  bool action_pending_ = false;   // action_complete seen, no verdict line printed yet
  int pending_exit_ = 0;
  std::int64_t pending_ms_ = 0;
  bool pending_abnormal_ = false;
  std::string pending_note_;
  std::string pending_cut_;  // "output cut at 16 MiB; use --output-limit", or empty
  std::string pending_stdout_;  // the tail of the action's stdout (verbose only)
  std::string pending_stderr_;  // the tail of the action's stderr
  bool verbose_ = false;
  void put_output_tail(bool failed);
};

/// The last `max_lines` non-blank lines of `text` (at most the last 4 KiB of it), each made
/// safe for a terminal.
std::vector<std::string> last_lines(std::string_view text, std::size_t max_lines);

}  // namespace ll_loop

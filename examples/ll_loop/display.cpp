// little_loops — ll-loop: terminal output (progress display, colours, messages, durations)
// SPDX-License-Identifier: MIT
#include "display.hpp"

#include <little_loops/results.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <unistd.h>

namespace ll_loop {

style style::for_stream(std::FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  style s;
  s.enabled = ::isatty(::fileno(stream)) == 1 && (no_color == nullptr || *no_color == '\0');
  return s;
}

namespace {
std::string wrap(bool on, std::string_view code, std::string_view s) {
  if (!on) return std::string(s);
  return fmt::format("\033[{}m{}\033[0m", code, s);
}
}  // namespace

std::string style::bold(std::string_view s) const { return wrap(enabled, "1", s); }
std::string style::dim(std::string_view s) const { return wrap(enabled, "2", s); }
std::string style::green(std::string_view s) const { return wrap(enabled, "32", s); }
std::string style::red(std::string_view s) const { return wrap(enabled, "31", s); }
std::string style::yellow(std::string_view s) const { return wrap(enabled, "33", s); }
std::string style::cyan(std::string_view s) const { return wrap(enabled, "36", s); }

std::string terminal_safe(std::string_view text, bool keep_lines, bool keep_sgr) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    if (c == 0x1B && keep_sgr && text.size() - i >= 3 && text[i + 1] == '[') {
      std::size_t q = i + 2;
      while (q < text.size() && ((text[q] >= '0' && text[q] <= '9') || text[q] == ';')) ++q;
      if (q < text.size() && text[q] == 'm') {  // select graphic rendition: colour, bold, reset
        out += text.substr(i, q + 1 - i);
        i = q + 1;
        continue;
      }
    }
    if (c < 0x20 || c == 0x7F) {
      if (keep_lines && (c == '\n' || c == '\t')) {
        out += static_cast<char>(c);
      } else {
        out += '^';
        out += static_cast<char>(c == 0x7F ? '?' : c + 0x40);
      }
      ++i;
      continue;
    }
    const std::size_t n = ll::utf8_char_length(text, i);
    if (n == 0 || (n == 2 && c == 0xC2 && byte(i + 1) < 0xA0)) {  // ill-formed, or a C1 control
      out += "\xEF\xBF\xBD";
      i += n == 0 ? 1 : n;
      continue;
    }
    out += text.substr(i, n);
    i += n;
  }
  return out;
}

namespace {

// Code points Python's str.isprintable() refuses beyond the C0/C1 controls: separators
// other than the space (Zs, Zl, Zp), format characters (Cf) and private use (Co), the
// ranges a loop's output may plausibly hold.
bool python_printable(char32_t c) {
  if (c == 0xA0 || c == 0xAD || c == 0x61C || c == 0x1680 || c == 0x180E || c == 0x3000 ||
      c == 0xFEFF)
    return false;
  if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
      (c >= 0x205F && c <= 0x206F) || (c >= 0xFFF9 && c <= 0xFFFB) ||
      (c >= 0xE000 && c <= 0xF8FF) || (c >= 0xE0000 && c <= 0xE007F) || c >= 0xF0000)
    return false;
  return true;
}

void append_python_str(std::string& out, std::string_view text) {
  // repr() quotes with ' unless the text holds ' and no ".
  const bool has_single = text.find('\'') != std::string_view::npos;
  const char quote = has_single && text.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\\' || c == static_cast<unsigned char>(quote)) {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7F) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    const std::size_t n = ll::utf8_char_length(text, i);
    if (n == 0) {  // not UTF-8 (json.loads would have refused it): the replacement character
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    const char32_t cp = ll::utf8_char_at(text, i, n);
    if (cp < 0x100 && (cp < 0xA0 || !python_printable(cp)))
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    else if (!python_printable(cp))
      out += cp <= 0xFFFF ? fmt::format("\\u{:04x}", static_cast<unsigned>(cp))
                          : fmt::format("\\U{:08x}", static_cast<unsigned>(cp));
    else
      out += text.substr(i, n);
    i += n;
  }
  out += quote;
}

void append_python_repr(std::string& out, const ll::json& v) {
  switch (v.type()) {
    case ll::json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        append_python_str(out, it.key());
        out += ": ";
        append_python_repr(out, it.value());
      }
      out += '}';
      break;
    }
    case ll::json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ", ";
        first = false;
        append_python_repr(out, e);
      }
      out += ']';
      break;
    }
    case ll::json::value_t::string: append_python_str(out, v.get_ref<const std::string&>()); break;
    case ll::json::value_t::boolean: out += v.get<bool>() ? "True" : "False"; break;
    case ll::json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); break;
    case ll::json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); break;
    case ll::json::value_t::number_float: out += ll::python_float_repr(v.get<double>()); break;
    default: out += "None"; break;  // null (and the unused binary/discarded kinds)
  }
}

}  // namespace

std::string python_repr(const ll::json& value) {
  std::string out;
  append_python_repr(out, value);
  return out;
}

void say(std::string_view raw) {
  const std::string message = terminal_safe(raw, true, style::for_stream(stdout).enabled);
  std::fwrite(message.data(), 1, message.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void say_error(std::string_view message) {
  const style s = style::for_stream(stderr);
  std::string line =
      fmt::format("{} {}\n", s.red("error:"), terminal_safe(message, true, s.enabled));
  std::fflush(stdout);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void say_warning(std::string_view message) {
  const style s = style::for_stream(stderr);
  std::string line =
      fmt::format("{} {}\n", s.yellow("warning:"), terminal_safe(message, true, s.enabled));
  std::fflush(stdout);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void say_note(std::string_view message) {
  std::string line = terminal_safe(message, true, false);
  line += '\n';
  std::fflush(stdout);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

std::string format_duration_summary(std::int64_t ms) {
  const double seconds = static_cast<double>(ms) / 1000.0;
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const auto minutes = ms / 60000;
  const double rest = static_cast<double>(ms % 60000) / 1000.0;
  return fmt::format("{}m {:.0f}s", minutes, rest);
}

std::string format_duration_short(std::int64_t ms) {
  if (ms < 1000) return fmt::format("{}ms", ms);
  if (ms < 60000) return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0);
  return fmt::format("{}m {}s", ms / 60000, (ms % 60000) / 1000);
}

std::string throttle_line(const ll::throttle_event& e) {
  std::string line = fmt::format("{}: {} ran {} actions in this visit", e.name, e.state, e.count);
  if (e.name == "throttle_warn")
    line += fmt::format(" (warn_max {}, hard_max {})", e.warn_max, e.hard_max);
  else if (e.name == "throttle_hard")
    line += fmt::format(" (hard_max {}) \u2192 {}", e.hard_max, e.next.empty() ? "no target: goes on" : e.next);
  else
    line += fmt::format(" (beyond hard_max {}): the run ends", e.hard_max);
  return one_line(line, 200);
}

std::string learning_line(const ll::learning_event& e) {
  std::string line;
  if (e.name == "learning_target_proven")
    line = fmt::format("proven: {}", e.target);
  else if (e.name == "learning_target_stale")
    line = fmt::format("stale ({}): {}", e.detail, e.target);
  else if (e.name == "learning_explore_invoked")
    line = fmt::format("exploring {} (attempt {})", e.target, e.attempt);
  else if (e.name == "learning_target_refuted")
    line = fmt::format("refuted: {}", e.target);
  else if (e.name == "learning_blocked")
    line = fmt::format("blocked on {} ({})", e.target, e.detail);
  else
    line = fmt::format("complete: {}", e.targets != nullptr ? fmt::format("{}", fmt::join(*e.targets, ", ")) : "");
  return one_line(line, 200);
}

std::string one_line(std::string_view raw, std::size_t max) {
  // Newlines and tabs become spaces; every other control character is made visible.
  std::string flat(raw);
  for (char& c : flat)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  const std::string safe = terminal_safe(flat);
  const std::string_view text = safe;
  std::string out;
  out.reserve(std::min(text.size(), max + 3));
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c == ' ') {
      if (space) continue;
      space = true;
    } else {
      space = false;
    }
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > max) {
    out.resize(ll::utf8_boundary(out, max));  // not cutting a UTF-8 sequence in half
    out += "...";
  }
  return out;
}

bool is_positive_verdict(std::string_view verdict) {
  return verdict == "success" || verdict == "target" || verdict == "progress";
}

progress_display::progress_display(std::FILE* out, style s, const ll::fsm_loop& loop)
    : out_(out), style_(s), max_iterations_(loop.max_iterations),
      backoff_(loop.backoff && *loop.backoff > 0) {
  for (const auto& [name, state] : loop.states)
    if (!state.action) no_action_.insert(name);
  const char* term = std::getenv("TERM");
  live_ = ::isatty(::fileno(out)) == 1 && !(term != nullptr && std::string_view(term) == "dumb");
}

progress_display::~progress_display() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  write_out();
}

void progress_display::flush() noexcept {
  std::lock_guard lock(mutex_);
  write_out();
}

void progress_display::write_out() noexcept {
  if (buf_.empty()) return;
  std::fflush(out_);  // whatever reached the stream through stdio goes first
  const int fd = ::fileno(out_);
  std::string_view left = buf_;
  while (!left.empty()) {
    const ssize_t n = ::write(fd, left.data(), left.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // a closed or failing stream: the display is dropped, the run goes on
    left.remove_prefix(static_cast<std::size_t>(n));
  }
  buf_.clear();
}

// Whether the loop may wait (or end) after `event` before the next one: then the display
// is written out. A state with an action goes on to action_start, an evaluation to its
// route, a route to the next state (unless the loop backs off) — all without waiting.
bool progress_display::waits_after(const ll::loop_event& event) const {
  return std::visit(
      [&](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, ll::state_enter_event>)
          return no_action_.find(e.state) != no_action_.end();
        else if constexpr (std::is_same_v<E, ll::evaluate_event>)
          return false;
        else if constexpr (std::is_same_v<E, ll::route_event>)
          return backoff_;
        else
          return true;
      },
      event);
}

void progress_display::tick() {
  std::unique_lock lock(mutex_);
  while (!quit_) {
    wake_.wait_for(lock, std::chrono::milliseconds(200));
    if (quit_ || !action_running_) continue;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - action_started_)
                        .count();
    if (ms < 1000) continue;
    put("\r       {} {}\033[K", style_.dim("\u2026"), format_duration_short(ms));
    write_out();
    ticker_shown_ = true;
  }
}

void progress_display::erase_ticker() {
  if (!ticker_shown_) return;
  buf_ += "\r\033[K";
  ticker_shown_ = false;
}

void progress_display::on_event(const ll::loop_event& event) noexcept {
  try {
    std::unique_lock lock(mutex_);
    erase_ticker();
    action_running_ = false;
    handle(event);
    if (live_ && std::holds_alternative<ll::action_start_event>(event)) {
      action_running_ = true;
      action_started_ = std::chrono::steady_clock::now();
      if (!ticker_.joinable()) ticker_ = std::thread([this] { tick(); });
    }
    if (waits_after(event)) write_out();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a display failure must not stop the run
  }
}

void progress_display::flush_pending_action() {
  if (!action_pending_) return;
  action_pending_ = false;
  std::string line;
  const std::string cut = pending_cut_.empty() ? std::string() : ", " + pending_cut_;
  if (pending_abnormal_ || pending_exit_ != 0)
    line = fmt::format("       {} {} ({}{})", style_.red("\u2717"),
                       pending_note_.empty() ? fmt::format("exit {}", pending_exit_)
                                             : pending_note_,
                       format_duration_short(pending_ms_), cut);
  else
    line = fmt::format("       {} done ({}{})", style_.green("\u2713"),
                       format_duration_short(pending_ms_), cut);
  put("{}\n", line);
  put_output_tail(pending_abnormal_ || pending_exit_ != 0);
}

void progress_display::handle(const ll::loop_event& event) {
  const bool continues_line = std::holds_alternative<ll::action_start_event>(event);
  if (line_open_ && !continues_line) {
    buf_ += '\n';
    line_open_ = false;
  }
  std::visit([&](const auto& e) { show(e); }, event);
}

void progress_display::show(const ll::loop_resume_event& e) {
  put("Resuming {} at {} (iteration {})\n", style_.bold(terminal_safe(e.loop)),
      style_.cyan(terminal_safe(e.from_state)), e.iteration);
}

// A sub-loop's child starting (the top loop's start is the header): `  ↳ sub-loop NAME`,
// indented by its depth, as are its states.
void progress_display::show(const ll::loop_start_event& e) {
  if (e.depth == 0) return;
  put("{}{} {}\n", std::string(2 * e.depth, ' '), style_.dim("\u21b3 sub-loop"), style_.bold(terminal_safe(e.loop)));
}

void progress_display::show(const ll::state_enter_event& e) {
  action_pending_ = false;
  put("{}{} {}", std::string(2 * e.depth, ' '), style_.dim(fmt::format("[{}/{}]", e.iteration, max_iterations_)),
      style_.bold(style_.cyan(terminal_safe(e.state))));
  line_open_ = true;
}

void progress_display::show(const ll::action_start_event& e) {
  put("{}\u2192 {}{}\n", line_open_ ? " " : "       ", e.is_prompt ? "(prompt) " : "",
      one_line(e.action, 70));
  line_open_ = false;
}

void progress_display::show(const ll::action_complete_event& e) {
  action_pending_ = true;
  pending_exit_ = e.exit_code;
  pending_ms_ = e.duration_ms;
  pending_abnormal_ = e.timed_out || e.cancelled || e.signal != 0;
  pending_note_.clear();
  if (e.timed_out) pending_note_ = "timed out";
  else if (e.cancelled) pending_note_ = "cancelled";
  else if (e.signal != 0) pending_note_ = fmt::format("killed by signal {}", e.signal);
  pending_cut_ = e.truncated ? ll::output_cut_text(e.output_limit) + "; use --output-limit" : std::string();
  constexpr std::size_t keep = 4096;  // enough for the lines shown
  pending_stderr_.assign(e.stderr_output.substr(e.stderr_output.size() - std::min(e.stderr_output.size(), keep)));
  if (verbose_) pending_stdout_.assign(e.output.substr(e.output.size() - std::min(e.output.size(), keep)));
}

std::vector<std::string> last_lines(std::string_view text, std::size_t max_lines) {
  std::vector<std::string> lines;
  while (!text.empty() && lines.size() < max_lines) {
    const std::size_t nl = text.find_last_of('\n', text.size() - 1);
    const std::string_view line = nl == std::string_view::npos ? text : text.substr(nl + 1);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos)
      lines.push_back(one_line(line, 200));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(0, nl);
  }
  return {lines.rbegin(), lines.rend()};
}

// Under a result line: a failed action's last stderr lines; with --verbose, every action's
// output and stderr.
void progress_display::put_output_tail(bool failed) {
  const std::size_t max_lines = verbose_ ? 20 : 5;
  if (verbose_)
    for (const auto& line : last_lines(pending_stdout_, max_lines))
      put("       {} {}\n", style_.dim("\u2502"), line);
  if (verbose_ || failed)
    for (const auto& line : last_lines(pending_stderr_, max_lines))
      put("       {} {}\n", style_.dim("stderr:"), line);
  pending_stdout_.clear();
  pending_stderr_.clear();
}

void progress_display::show(const ll::evaluate_event& e) {
  const bool had_action = action_pending_;
  action_pending_ = false;
  const bool ok = is_positive_verdict(e.verdict);
  std::string mark = ok ? style_.green("\u2713") : style_.red("\u2717");
  std::string extra;
  if (e.details != nullptr && e.details->is_object()) {
    if (auto c = e.details->find("confidence"); c != e.details->end() && c->is_number())
      extra += fmt::format(", confidence {:.2f}", c->template get<double>());
  }
  if (had_action && !pending_note_.empty()) extra += ", " + pending_note_;
  else if (had_action && pending_exit_ != 0) extra += fmt::format(", exit {}", pending_exit_);
  if (had_action && !pending_cut_.empty()) extra += ", " + pending_cut_;
  std::string reason;
  if (!ok && e.details != nullptr && e.details->is_object()) {
    for (const char* key : {"error", "reason"}) {
      auto r = e.details->find(key);
      if (r != e.details->end() && r->is_string() && !r->template get<std::string>().empty()) {
        reason = fmt::format(" \u2014 {}", one_line(r->template get<std::string>(), 120));
        break;
      }
    }
  }
  if (had_action)
    put("       {} {} ({}{}){}\n", mark, terminal_safe(e.verdict),
        format_duration_short(pending_ms_), extra, reason);
  else if (!extra.empty())
    put("       {} {} ({}){}\n", mark, terminal_safe(e.verdict), extra.substr(2), reason);
  else
    put("       {} {}{}\n", mark, terminal_safe(e.verdict), reason);
  if (had_action) put_output_tail(!ok || pending_exit_ != 0 || pending_abnormal_);
}

void progress_display::show(const ll::route_event& e) {
  flush_pending_action();
  if (e.reason.empty())
    put("       {} {}\n", style_.dim("\u2192"), terminal_safe(e.to));
  else
    put("       {} {} ({})\n", style_.dim("\u2192"), terminal_safe(e.to), terminal_safe(e.reason));
}

void progress_display::show(const ll::error_event& e) {
  put("       {} {}\n", style_.yellow("!"),
      one_line(fmt::format("{} error: {}", e.kind, e.message), 200));
}

void progress_display::show(const ll::handoff_event& e) {
  flush_pending_action();
  put("       {} context handoff: {}\n", style_.yellow("\u21bb"), one_line(e.continuation, 200));
}

void progress_display::show(const ll::max_iterations_event& e) {
  put("{} max iterations ({}) reached, running {}\n", style_.yellow("!"), e.iterations,
      terminal_safe(e.summary_state));
}

void progress_display::show(const ll::resilience_event& e) {
  flush_pending_action();
  std::string what(e.kind);
  if (!e.error_class.empty()) what += " (" + std::string(e.error_class) + ")";
  if (e.kind == "retry")
    what += fmt::format(": attempt {} after {:.1f}s", e.attempt, static_cast<double>(e.delay_ms) / 1000.0);
  else if (!e.message.empty())
    what += ": " + std::string(e.message);
  if (!e.target.empty() && e.kind != "retry") what += " \u2192 " + std::string(e.target);
  put("       {} {}\n", style_.yellow("\u21bb"), one_line(terminal_safe(what), 200));
}

void progress_display::show(const ll::throttle_event& e) {
  flush_pending_action();
  put("       {} {}\n", style_.yellow("!"), throttle_line(e));
}

void progress_display::show(const ll::learning_event& e) {
  flush_pending_action();
  put("       {} {}\n", style_.dim("\u2022"), learning_line(e));
}

void progress_display::show(const ll::guard_event& e) {
  flush_pending_action();
  std::string what(e.kind);
  if (e.kind == "tamper_guard")
    what += fmt::format(" ({}): {} test file(s) changed{}", e.policy, e.findings,
                        e.reverted != 0 ? fmt::format(", {} reverted", e.reverted) : std::string());
  else if (!e.verdict.empty())
    what += fmt::format(" ({}): {}", e.policy, e.verdict);
  if (!e.branch.empty()) what += fmt::format(": {} at {}", e.branch, e.path);
  if (!e.message.empty()) what += ": " + std::string(e.message);
  if (!e.target.empty()) what += " \u2192 " + std::string(e.target);
  put("       {} {}\n", style_.yellow("!"), one_line(terminal_safe(what), 200));
}

void progress_display::show(const ll::loop_complete_event&) { flush_pending_action(); }

}  // namespace ll_loop

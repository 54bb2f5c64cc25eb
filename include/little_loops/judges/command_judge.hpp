// little_loops — command judge: an llm_structured JudgeBackend that runs a CLI (default `claude -p`)
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::posix); fsm.hpp never includes it.

#include <little_loops/config.hpp>
#include <little_loops/evaluators/llm_judge.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/runners/posix_process_runner.hpp>

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Settings of a command_judge.
struct command_judge_options {
  /// argv of the judge command; the prompt goes to its stdin. In every argument the
  /// placeholders `{model}`, `{schema}` (compact JSON) and `{max_tokens}` are replaced by the
  /// request's values. The default is the original's Claude CLI call (structured JSON
  /// output, the loop's model, the response schema, no session persistence).
  std::vector<std::string> command{"claude",
                                   "-p",
                                   "--output-format",
                                   "json",
                                   "--model",
                                   "{model}",
                                   "--json-schema",
                                   "{schema}",
                                   "--dangerously-skip-permissions",
                                   "--no-session-persistence"};
  /// Working directory of the judge command; empty inherits the host's.
  std::string working_directory;
  /// Variables set (or overridden) in the judge command's environment.
  std::vector<std::pair<std::string, std::string>> environment;
  bool inherit_environment = true;
  /// Overrides the request's timeout (`llm.timeout`) when set.
  std::optional<std::chrono::milliseconds> timeout;
  /// SIGTERM → SIGKILL grace period on timeout or cancellation.
  std::chrono::milliseconds kill_grace{2000};
  /// Largest reply accepted (bytes of stdout); a longer one is a `malformed` error.
  std::size_t max_reply_bytes = std::size_t{4} << 20;
  /// When stdout (or its last line) is a CLI envelope `{"is_error": true, "result": ...}`,
  /// fail with its text.
  bool check_error_envelope = true;
  /// Cancels a running judge command (e.g. the host's Ctrl-C); it then fails.
  std::stop_token stop;
};

/// An llm_structured judge backend (models JudgeBackend) that runs a command with the
/// judge prompt on stdin and returns its stdout for the library's tolerant parser. Runs
/// through the POSIX process runner's machinery (own process group, timeout with TERM then
/// KILL, bounded capture). Failures are typed: program not found → `unavailable`, timeout →
/// `timeout`, blank stdout → `empty_output`, non-zero exit / error envelope (`"is_error"`
/// truthy, in stdout or its last line) / cancellation → `failed`, oversized reply →
/// `malformed`.
class command_judge {
 public:
  command_judge() : command_judge(command_judge_options{}) {}
  explicit command_judge(command_judge_options options)
      : options_(std::move(options)), runner_(runner_options(options_)) {}

  /// Asks the judge command; returns its raw stdout.
  [[nodiscard]] expected<std::string, judge_error> ask(const judge_request& request) const {
    if (options_.command.empty())
      return unexpected(judge_error{judge_errc::unavailable, "no judge command configured"});
    detail::process_request proc = detail::make_process_request(runner_, options_.stop);
    const std::string schema_text = request.schema != nullptr ? request.schema->dump() : "{}";
    const std::string max_tokens = std::to_string(request.max_tokens);
    proc.argv.reserve(options_.command.size());
    for (const auto& arg : options_.command)
      proc.argv.push_back(substitute(arg, request.model, schema_text, max_tokens));
    const std::string prompt(request.prompt);
    proc.stdin_data = &prompt;
    proc.idle_timeout.reset();
    proc.output_limit = options_.max_reply_bytes + 1;  // one byte more: detect oversize
    proc.deadline = std::chrono::steady_clock::now() + options_.timeout.value_or(request.timeout);

    auto ran = detail::run_process(proc);
    if (!ran) return unexpected(judge_error{judge_errc::failed, ran.error().message});
    return judge_reply(*ran, proc.argv.front(), options_.timeout.value_or(request.timeout));
  }

  /// The options this judge was built with.
  [[nodiscard]] const command_judge_options& options() const noexcept { return options_; }

 private:
  command_judge_options options_;
  posix_process_runner runner_;

  // The judge's reply in `r` (a finished run of `program`), or the typed failure it shows.
  [[nodiscard]] expected<std::string, judge_error> judge_reply(
      const action_result& r, const std::string& program, std::chrono::milliseconds timeout) const {
    if (r.timed_out)
      return unexpected(judge_error{
          judge_errc::timeout,
          fmt::format("{} did not answer within {} ms", program, timeout.count())});
    if (r.cancelled) return unexpected(judge_error{judge_errc::failed, "judge command cancelled"});
    if ((r.exit_code == 127 || r.exit_code == 126) &&
        r.stderr_output.rfind("little_loops: cannot run", 0) == 0) {
      // The original's words for a missing Claude CLI, then why.
      const std::string base = program.substr(program.find_last_of('/') + 1);
      std::string message = base == "claude"
                                ? std::string("claude CLI not found. Install from "
                                              "https://docs.anthropic.com/en/docs/claude-code")
                                : base + " CLI not found";
      message += " (" + r.stderr_output.substr(14) + ")";
      return unexpected(judge_error{judge_errc::unavailable, std::move(message)});
    }
    if (r.exit_code != 0) {
      std::string message = fmt::format("{} exited with status {}", program, r.exit_code);
      const std::string err = trimmed(r.stderr_output, 500);
      if (!err.empty()) message += ": " + err;
      return unexpected(judge_error{judge_errc::failed, std::move(message)});
    }
    if (r.truncated || r.output.size() > options_.max_reply_bytes)
      return unexpected(judge_error{
          judge_errc::malformed,
          fmt::format("reply larger than {} bytes", options_.max_reply_bytes)});
    if (trimmed(r.output, 1).empty()) {
      std::string message = fmt::format("{} returned empty output", program);
      const std::string err = trimmed(r.stderr_output, 200);
      if (!err.empty()) message += " (stderr: " + err + ")";
      return unexpected(judge_error{judge_errc::empty_output, std::move(message)});
    }
    if (options_.check_error_envelope)
      if (auto err = envelope_error(r.output))
        return unexpected(judge_error{judge_errc::failed, "judge reported an error: " + *err});
    return r.output;
  }

  // The error text of a CLI error envelope: the whole of stdout, else its last non-blank
  // line (a JSONL stream ends with the envelope).
  static std::optional<std::string> envelope_error(std::string_view text) {
    json envelope = detail::parse_json_or_discarded(text);
    if (envelope.is_discarded()) {
      const std::string last = trimmed(last_line(text), std::string::npos);
      envelope = detail::parse_json_or_discarded(last);
    }
    if (envelope.is_discarded()) return std::nullopt;
    return detail::error_envelope_text(envelope);
  }

  static posix_runner_options runner_options(const command_judge_options& o) {
    posix_runner_options r;
    r.working_directory = o.working_directory;
    r.environment = o.environment;
    r.inherit_environment = o.inherit_environment;
    r.kill_grace = o.kill_grace;
    r.output_limit = o.max_reply_bytes + 1;
    r.truncation_marker = "";
    r.idle_timeout.reset();
    return r;
  }

  static std::string substitute(std::string_view arg, std::string_view model,
                                std::string_view schema, std::string_view max_tokens) {
    std::string out;
    out.reserve(arg.size());
    std::size_t i = 0;
    while (i < arg.size()) {
      if (arg[i] == '{') {
        if (arg.substr(i, 7) == "{model}") {
          out += model;
          i += 7;
          continue;
        }
        if (arg.substr(i, 8) == "{schema}") {
          out += schema;
          i += 8;
          continue;
        }
        if (arg.substr(i, 12) == "{max_tokens}") {
          out += max_tokens;
          i += 12;
          continue;
        }
      }
      out += arg[i++];
    }
    return out;
  }

  // The last line of `text` that is not blank.
  static std::string_view last_line(std::string_view text) {
    const auto end = text.find_last_not_of(" \t\r\n");
    if (end == std::string_view::npos) return {};
    const auto nl = text.rfind('\n', end);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    return text.substr(begin, end + 1 - begin);
  }

  // Whitespace-trimmed text, cut to at most `max` bytes.
  static std::string trimmed(std::string_view text, std::size_t max) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    text = text.substr(first, last - first + 1);
    if (text.size() > max) text = text.substr(0, max);
    return std::string(text);
  }
};

static_assert(JudgeBackend<command_judge>);
static_assert(JudgeBackend<const command_judge>);

LITTLE_LOOPS_NAMESPACE_END

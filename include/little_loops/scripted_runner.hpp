// little_loops — scripted_runner: an ActionRunner that replays scripted results (simulation, tests)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/concepts.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// One scripted outcome: either an action result or a runner error ("could not run").
struct scripted_response {
  action_result result;        ///< what the action "did"
  std::optional<error> failure;  ///< set: the runner reports this error instead

  scripted_response() = default;
  scripted_response(action_result r) : result(std::move(r)) {}  // NOLINT: implicit on purpose
  scripted_response(error e) : failure(std::move(e)) {}          // NOLINT: implicit on purpose

  /// An action that exited with `exit_code` and printed `output`.
  static scripted_response exit(int exit_code, std::string output = {},
                                std::string stderr_output = {});
  /// An action stopped by its timeout (exit code 124, `timed_out`).
  static scripted_response timeout(std::string output = {});
};

/// What a scripted_runner was asked to run (copied from the request).
struct recorded_call {
  std::string state;
  std::string text;
  action_kind kind = action_kind::shell;
  std::optional<std::chrono::milliseconds> timeout;
  bool had_deadline = false;

  friend bool operator==(const recorded_call&, const recorded_call&) = default;
};

/// @brief An ActionRunner that replays scripted results; it never runs anything.
///
/// Lookup order for the k-th call (0-based) of the run:
///  1. the call-index script (`by_index`), if it has an entry k;
///  2. the script for the exact action text (`on_action`): the n-th call with that text gets
///     the n-th entry, the last entry repeats;
///  3. the default (`otherwise`; initially exit code 0 with empty output).
///
/// Every call is recorded (`calls()`, `last_action()`). A hook (`on_call`) may run first, e.g.
/// to request a stop or advance a fake clock. `ll-loop simulate --responses FILE` maps onto
/// `from_json`.
///
/// @code
/// ll::scripted_runner runner;
/// runner.on_action("pytest", {ll::scripted_response::exit(1), ll::scripted_response::exit(0)})
///       .otherwise(ll::scripted_response::exit(0));
/// @endcode
class scripted_runner {
 public:
  // Special members are defined with the rest (compiled mode: in the library, so a host does
  // not compile the destruction and copies of the script's maps and vectors).
  scripted_runner();
  ~scripted_runner();
  scripted_runner(const scripted_runner&);
  scripted_runner(scripted_runner&&) noexcept;
  scripted_runner& operator=(const scripted_runner&);
  scripted_runner& operator=(scripted_runner&&) noexcept;

  /// Results by global call index (call k gets entry k; beyond the end the other rules apply).
  scripted_runner& by_index(std::vector<scripted_response> responses);
  /// Results for one exact (interpolated) action text; the last entry repeats.
  scripted_runner& on_action(std::string text, std::vector<scripted_response> responses);
  /// Convenience: one result for an action text, returned for every call.
  scripted_runner& on_action(std::string text, scripted_response response);
  /// The result when no other rule applies.
  scripted_runner& otherwise(scripted_response response);
  /// A hook called with each request before the scripted result is chosen.
  scripted_runner& on_call(std::function<void(const action_request&)> hook);
  /// Whether calls are recorded (default true; turn off for benchmarks).
  scripted_runner& record(bool on) {
    record_ = on;
    return *this;
  }

  /// The ActionRunner entry point.
  expected<action_result, error> run(const action_request& request);

  /// Every call so far, in order.
  [[nodiscard]] const std::vector<recorded_call>& calls() const noexcept { return calls_; }
  /// Whether `by_index` or `on_action` answered the last call (false: the default did).
  [[nodiscard]] bool last_call_scripted() const noexcept { return last_scripted_; }
  /// The number of calls so far (counted even when recording is off).
  [[nodiscard]] std::size_t call_count() const noexcept { return call_count_; }
  /// The text of the last call ("" before the first).
  [[nodiscard]] std::string_view last_action() const noexcept {
    return calls_.empty() ? std::string_view{} : std::string_view{calls_.back().text};
  }
  /// Forget the calls and restart every script from its first entry.
  void reset();

  /// @brief Build a runner from JSON (the `--responses` file of `ll-loop simulate`).
  ///
  /// Shape: `{"by_index": [R...], "by_action": {"<text>": R | [R...]}, "default": R}` where
  /// `R = {"output": str, "stderr": str, "exit_code": int, "duration_ms": int,
  /// "timed_out": bool, "signal": int, "error": str}` (all optional; `error` makes the runner
  /// fail with that message). A bare integer R is an exit code. Unknown keys are errors.
  static expected<scripted_runner, error> from_json(const json& doc);

 private:
  struct per_action_entry {
    std::vector<scripted_response> responses;
    std::size_t next = 0;
  };

  // An integer JSON value between `min` and INT_MAX (never wrapped).
  static expected<int, error> int_in_range(const json& v, const std::string& path, int min);

  static expected<scripted_response, error> parse_response(const json& j, const std::string& path);

  std::vector<scripted_response> sequence_;
  std::map<std::string, per_action_entry, std::less<>> per_action_;
  scripted_response default_;
  std::function<void(const action_request&)> hook_;
  std::vector<recorded_call> calls_;
  std::size_t call_count_ = 0;
  bool record_ = true;
  bool last_scripted_ = false;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

LITTLE_LOOPS_INLINE scripted_runner::scripted_runner() = default;
LITTLE_LOOPS_INLINE scripted_runner::~scripted_runner() = default;
LITTLE_LOOPS_INLINE scripted_runner::scripted_runner(const scripted_runner&) = default;
LITTLE_LOOPS_INLINE scripted_runner::scripted_runner(scripted_runner&&) noexcept = default;
LITTLE_LOOPS_INLINE scripted_runner& scripted_runner::operator=(const scripted_runner&) = default;
LITTLE_LOOPS_INLINE scripted_runner& scripted_runner::operator=(scripted_runner&&) noexcept =
    default;

LITTLE_LOOPS_INLINE scripted_response scripted_response::exit(int exit_code, std::string output,
                                                         std::string stderr_output) {
  action_result r;
  r.exit_code = exit_code;
  r.output = std::move(output);
  r.stderr_output = std::move(stderr_output);
  return r;
}

LITTLE_LOOPS_INLINE scripted_response scripted_response::timeout(std::string output) {
  action_result r;
  r.exit_code = 124;
  r.timed_out = true;
  r.output = std::move(output);
  return r;
}

LITTLE_LOOPS_INLINE scripted_runner& scripted_runner::by_index(std::vector<scripted_response> responses) {
  sequence_ = std::move(responses);
  return *this;
}

LITTLE_LOOPS_INLINE scripted_runner& scripted_runner::on_action(std::string text, std::vector<scripted_response> responses) {
  per_action_[std::move(text)] = per_action_entry{std::move(responses), 0};
  return *this;
}

LITTLE_LOOPS_INLINE scripted_runner& scripted_runner::on_action(std::string text, scripted_response response) {
  return on_action(std::move(text), std::vector<scripted_response>{std::move(response)});
}

LITTLE_LOOPS_INLINE scripted_runner& scripted_runner::otherwise(scripted_response response) {
  default_ = std::move(response);
  return *this;
}

LITTLE_LOOPS_INLINE scripted_runner& scripted_runner::on_call(std::function<void(const action_request&)> hook) {
  hook_ = std::move(hook);
  return *this;
}

LITTLE_LOOPS_INLINE auto scripted_runner::run(const action_request& request) -> expected<action_result, error> {
  if (hook_) hook_(request);
  if (record_)
    calls_.push_back(recorded_call{std::string(request.state), std::string(request.text),
                                   request.kind, request.timeout,
                                   request.deadline.has_value()});
  const std::size_t index = call_count_++;
  const scripted_response* chosen = &default_;
  // A per-action list is indexed by the action's own call count (its k-th entry on its k-th
  // call), which counts the calls `by_index` answered too.
  const scripted_response* by_action = nullptr;
  if (auto it = per_action_.find(request.text); it != per_action_.end()) {
    auto& entry = it->second;
    if (!entry.responses.empty()) {
      const std::size_t n = entry.next < entry.responses.size() ? entry.next
                                                                : entry.responses.size() - 1;
      ++entry.next;
      by_action = &entry.responses[n];
    }
  }
  if (index < sequence_.size())
    chosen = &sequence_[index];
  else if (by_action != nullptr)
    chosen = by_action;
  last_scripted_ = chosen != &default_;
  if (chosen->failure) return unexpected(*chosen->failure);
  return chosen->result;
}

LITTLE_LOOPS_INLINE auto scripted_runner::reset() -> void {
  calls_.clear();
  call_count_ = 0;
  last_scripted_ = false;
  for (auto& [text, entry] : per_action_) entry.next = 0;
}

LITTLE_LOOPS_INLINE auto scripted_runner::from_json(const json& doc) -> expected<scripted_runner, error> {
  if (!doc.is_object())
    return unexpected(error{errc::parse_error, "responses must be a JSON object"});
  scripted_runner runner;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    if (key == "by_index") {
      if (!it.value().is_array())
        return unexpected(error{errc::parse_error, "must be an array", "by_index"});
      std::size_t i = 0;
      for (const auto& item : it.value()) {
        auto r = parse_response(item, "by_index." + std::to_string(i++));
        if (!r) return unexpected(r.error());
        runner.sequence_.push_back(std::move(*r));
      }
    } else if (key == "by_action") {
      if (!it.value().is_object())
        return unexpected(error{errc::parse_error, "must be an object", "by_action"});
      for (auto a = it.value().begin(); a != it.value().end(); ++a) {
        std::vector<scripted_response> list;
        const std::string path = "by_action." + a.key();
        if (a.value().is_array()) {
          if (a.value().empty())
            return unexpected(error{errc::parse_error,
                                    "must not be an empty list (give at least one response)",
                                    path});
          std::size_t i = 0;
          for (const auto& item : a.value()) {
            auto r = parse_response(item, path + "." + std::to_string(i++));
            if (!r) return unexpected(r.error());
            list.push_back(std::move(*r));
          }
        } else {
          auto r = parse_response(a.value(), path);
          if (!r) return unexpected(r.error());
          list.push_back(std::move(*r));
        }
        runner.on_action(a.key(), std::move(list));
      }
    } else if (key == "default") {
      auto r = parse_response(it.value(), "default");
      if (!r) return unexpected(r.error());
      runner.default_ = std::move(*r);
    } else {
      return unexpected(error{errc::parse_error,
                              "unknown key \"" + key + "\" (expected by_index, by_action, default)",
                              key});
    }
  }
  return runner;
}

LITTLE_LOOPS_INLINE auto scripted_runner::int_in_range(const json& v, const std::string& path, int min) -> expected<int, error> {
  const bool fits = v.is_number_unsigned()
                        ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)
                        : v.get<std::int64_t>() >= min && v.get<std::int64_t>() <= INT_MAX;
  if (!fits)
    return unexpected(error{errc::parse_error,
                            fmt::format("{} is out of range ({} to {})", v.dump(), min, INT_MAX),
                            path});
  return static_cast<int>(v.get<std::int64_t>());
}

LITTLE_LOOPS_INLINE auto scripted_runner::parse_response(const json& j, const std::string& path) -> expected<scripted_response, error> {
  if (j.is_number_integer()) {
    auto code = int_in_range(j, path, INT_MIN);
    if (!code) return unexpected(code.error());
    return scripted_response::exit(*code);
  }
  if (!j.is_object())
    return unexpected(error{errc::parse_error, "must be an object or an exit code", path});
  scripted_response out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    const std::string where = path + "." + k;
    if (k == "output" || k == "stderr" || k == "error") {
      if (!v.is_string()) return unexpected(error{errc::parse_error, "must be a string", where});
      if (k == "output") out.result.output = v.get<std::string>();
      else if (k == "stderr") out.result.stderr_output = v.get<std::string>();
      else out.failure = error{errc::action_failed, v.get<std::string>()};
    } else if (k == "exit_code" || k == "signal" || k == "duration_ms") {
      if (!v.is_number_integer())
        return unexpected(error{errc::parse_error, "must be an integer", where});
      auto n = int_in_range(v, where, k == "exit_code" ? INT_MIN : 0);
      if (!n) return unexpected(n.error());
      if (k == "exit_code") out.result.exit_code = *n;
      else if (k == "signal") out.result.signal = *n;
      else out.result.duration = std::chrono::milliseconds(*n);
    } else if (k == "timed_out") {
      if (!v.is_boolean()) return unexpected(error{errc::parse_error, "must be a boolean", where});
      out.result.timed_out = v.get<bool>();
    } else {
      return unexpected(error{errc::parse_error,
                              "unknown key \"" + k +
                                  "\" (expected output, stderr, exit_code, duration_ms, "
                                  "timed_out, signal, error)",
                              where});
    }
  }
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

static_assert(ActionRunner<scripted_runner>);

LITTLE_LOOPS_NAMESPACE_END

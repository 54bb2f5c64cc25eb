// little_loops — the stall evaluators, judged by the executor from the run's memory
// SPDX-License-Identifier: MIT
#pragma once

// `diff_stall`, `score_stall`, `open_question_stall`, `action_stall` (design §6.6, the
// reference's evaluators.py). What they read comes through the host's ActionRunner as a
// probe (stall_probe(): `git diff --stat -- <scope>`, or the history file printed by `cat`),
// so the core spawns nothing and reads no file; what they remember between rounds is kept
// here, by the reference's keys (the sorted scope, the sorted tracked keys), and goes into
// the snapshot with the rest of the resilience memory.

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/detail/utf8.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions sort
#  include <algorithm>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A POSIX shell word for `text` (single-quoted).
LITTLE_LOOPS_INLINE std::string shell_word(std::string_view text);

/// The history file of score_stall / open_question_stall (rendered; as the reference, the
/// text as written when it cannot be rendered).
LITTLE_LOOPS_INLINE std::string history_path(const evaluate_config& c, const interpolation_context& ctx);

/// The probe command a stall evaluator reads, or nullopt (action_stall reads none).
LITTLE_LOOPS_INLINE std::optional<std::string> stall_probe(const evaluate_config& c,
                                                           const interpolation_context& ctx);

/// The numbers of a history file, one per line (blank and unreadable lines skipped).
LITTLE_LOOPS_INLINE std::vector<double> history_numbers(std::string_view text);

/// score_stall (higher is better) and open_question_stall (lower is better): the rounds
/// since the best-so-far last moved by more than epsilon.
LITTLE_LOOPS_INLINE evaluation_result judge_history(const evaluate_config& c, std::string_view text);

/// The text action_stall compares: `key=value|…` over the tracked keys, each looked up as
/// written when it has a dot, else as `context.`, `captured.`, `prev.`, `result.` KEY.
LITTLE_LOOPS_INLINE std::string tracked_values(const evaluate_config& c, const interpolation_context& ctx);

/// The remembered side of diff_stall and action_stall.
class stall_memory {
 public:
  void clear();

  /// Judges `c` (a stall evaluator). `probe` is the probe's result (null: none was run, or
  /// it could not be run: `error` text in `probe_error`).
  evaluation_result judge(const evaluate_config& c, const interpolation_context& ctx,
                          const action_result* probe, std::string_view probe_error);

  [[nodiscard]] json to_json() const;

  void restore(const json& j);

 private:
  struct slot {
    std::string previous;
    int count = 0;
  };

  static std::string sorted_key(const std::optional<std::vector<std::string>>& names,
                                std::string_view none);

  // The first round remembers and says `yes`; then the same text `limit` rounds in a row is
  // `no`, a different one starts again.
  evaluation_result compare(const std::string& key, std::string current, int limit,
                            const char* limit_name, const char* changed_name);

  std::map<std::string, slot> slots_;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::string shell_word(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

LITTLE_LOOPS_INLINE std::string history_path(const evaluate_config& c, const interpolation_context& ctx) {
  std::string path = c.stall.history_file.value_or(
      c.type == evaluator_type::score_stall ? "${context.run_dir}/.score_history"
                                            : "${context.run_dir}/.open_questions_history");
  if (auto rendered = interpolate(path, ctx)) return *rendered;
  return path;
}

LITTLE_LOOPS_INLINE std::optional<std::string> stall_probe(const evaluate_config& c,
                                                           const interpolation_context& ctx) {
  if (c.type == evaluator_type::diff_stall) {
    std::string cmd = "git diff --stat";
    if (c.stall.scope && !c.stall.scope->empty()) {
      cmd += " --";
      for (const auto& p : *c.stall.scope) cmd += " " + shell_word(p);
    }
    return cmd;
  }
  if (c.type == evaluator_type::action_stall) return std::nullopt;
  return "cat -- " + shell_word(history_path(c, ctx)) + " 2>/dev/null || true";
}

LITTLE_LOOPS_INLINE std::vector<double> history_numbers(std::string_view text) {
  std::vector<double> out;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string token(trim_py(text.substr(0, end)));
    text.remove_prefix(std::min(end + 1, text.size()));
    if (token.empty()) continue;
    try {
      std::size_t used = 0;
      const double v = std::stod(token, &used);
      if (used == token.size()) out.push_back(v);
    } catch (...) {  // NOLINT(bugprone-empty-catch): not a number, skipped as the reference does
    }
  }
  return out;
}

LITTLE_LOOPS_INLINE evaluation_result judge_history(const evaluate_config& c, std::string_view text) {
  const bool lower = c.type == evaluator_type::open_question_stall;
  const int max_stall = c.stall.max_stall.value_or(1);
  const double epsilon = c.stall.epsilon.value_or(lower ? 0.0 : 0.5);
  const std::vector<double> v = history_numbers(text);
  evaluation_result r;
  json details = {{"stall_count", 0}, {"max_stall", max_stall}, {"epsilon", number_json(epsilon)},
                  {"rounds", v.size()}, {"best", v.empty() ? json() : number_json(v.back())}};
  if (v.size() < 2) {
    r.verdict = "yes";
    r.details = std::move(details);
    return r;
  }
  double best = v.front();
  int stall = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const bool progress = lower ? v[i] < best - epsilon : v[i] > best + epsilon;
    if (!progress) ++stall;
    else stall = 0;
    best = lower ? std::min(best, v[i]) : std::max(best, v[i]);
  }
  details["stall_count"] = stall;
  details["best"] = number_json(best);
  r.verdict = stall >= max_stall ? "no" : "yes";
  r.details = std::move(details);
  return r;
}

LITTLE_LOOPS_INLINE std::string tracked_values(const evaluate_config& c, const interpolation_context& ctx) {
  static const std::vector<std::string> default_track{"action"};
  const std::vector<std::string>& track = c.stall.track ? *c.stall.track : default_track;
  std::string out;
  for (const auto& key : track) {
    std::string value;
    const auto lookup = [&](const std::string& name) {
      auto v = interpolate("${" + name + "}", ctx);
      if (v) value = std::move(*v);
      return v.has_value();
    };
    if (key.find('.') != std::string::npos) {
      lookup(key);
    } else {
      for (const char* ns : {"context.", "captured.", "prev.", "result."})
        if (lookup(ns + key)) break;
    }
    out += (out.empty() ? "" : "|") + key + "=" + value;
  }
  return out;
}

LITTLE_LOOPS_INLINE auto stall_memory::clear() -> void { slots_.clear(); }

LITTLE_LOOPS_INLINE auto stall_memory::judge(const evaluate_config& c, const interpolation_context& ctx, const action_result* probe, std::string_view probe_error) -> evaluation_result {
  if (c.type == evaluator_type::score_stall || c.type == evaluator_type::open_question_stall)
    return judge_history(c, probe ? std::string_view(probe->output) : std::string_view());
  if (c.type == evaluator_type::action_stall)
    return compare("action:" + sorted_key(c.stall.track, "action"), tracked_values(c, ctx),
                   c.stall.max_repeat.value_or(2), "max_repeat", "hash_changed");
  if (!probe || probe->exit_code != 0 || probe->timed_out) {
    const std::string why = !probe ? std::string(probe_error)
                            : probe->timed_out ? std::string("git diff timed out")
                                               : "git diff failed: " + std::string(utf8_prefix(probe->stderr_output, 200));
    return error_result(why);
  }
  return compare("diff:" + sorted_key(c.stall.scope, "_root_"), probe->output,
                 c.stall.max_stall.value_or(1), "max_stall", "diff_changed");
}

LITTLE_LOOPS_INLINE auto stall_memory::to_json() const -> json {
  if (slots_.empty()) return nullptr;
  json out = json::object();
  for (const auto& [key, s] : slots_) out[key] = {{"previous", s.previous}, {"count", s.count}};
  return out;
}

LITTLE_LOOPS_INLINE auto stall_memory::restore(const json& j) -> void {
  clear();
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it->is_object())
      slots_[it.key()] = slot{it->value("previous", std::string{}), it->value("count", 0)};
}

LITTLE_LOOPS_INLINE auto stall_memory::sorted_key(const std::optional<std::vector<std::string>>& names, std::string_view none) -> std::string {
  if (!names || names->empty()) return std::string(none);
  std::vector<std::string> sorted = *names;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& n : sorted) out += (out.empty() ? "" : "|") + n;
  return out;
}

LITTLE_LOOPS_INLINE auto stall_memory::compare(const std::string& key, std::string current, int limit, const char* limit_name, const char* changed_name) -> evaluation_result {
  evaluation_result r;
  const auto found = slots_.find(key);
  bool changed = true;
  int count = 0;
  if (found != slots_.end() && found->second.previous == current) {
    changed = false;
    count = ++found->second.count;
  } else {
    slots_[key] = slot{std::move(current), 0};
  }
  r.verdict = !changed && count >= limit ? "no" : "yes";
  r.details = json{{"stall_count", count}, {limit_name, limit}, {changed_name, changed}};
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Judges the stall evaluator `req` asks for: runs its probe through `run` (an ActionRunner
/// call: a shell request marked `probe`, 30 s at most), then asks `memory`.
template <class Run>
evaluation_result judge_stall(stall_memory& memory, const evaluation_request& req,
                              std::optional<std::chrono::steady_clock::time_point> deadline,
                              std::stop_token stop, Run&& run) {
  const evaluate_config& cfg = *req.config;
  std::optional<expected<action_result, error>> probe;
  if (auto text = stall_probe(cfg, *req.context)) {
    action_request probe_req;
    probe_req.state = req.state;
    probe_req.text = *text;
    probe_req.timeout = std::chrono::seconds(30);
    probe_req.deadline = deadline;
    probe_req.stop = std::move(stop);
    probe_req.probe = true;
    probe = run(probe_req);
  }
  const action_result* answer = probe && *probe ? &**probe : nullptr;
  return memory.judge(cfg, *req.context, answer,
                      probe && !*probe ? std::string_view(probe->error().message) : "");
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

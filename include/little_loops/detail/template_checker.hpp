// little_loops — the template rules of validate(): every templated field of a loop checked
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/foreign_keys.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/detail/template_parser.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

LITTLE_LOOPS_INLINE void check_loop_templates(const fsm_loop& loop, diagnostics& out,
                                              parsed_templates* keep = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Classifies a compile_template() failure for its diagnostic code.
inline std::string_view template_error_code(const std::string& message) {
  if (message.find("bash operator") != std::string::npos) return "template-bash-operator";
  if (message.find("Unknown namespace: ") != std::string::npos) return "template-unknown-namespace";
  if (message.find("Unknown state property: ") != std::string::npos ||
      message.find("Unknown loop property: ") != std::string::npos)
    return "template-unknown-key";
  return "template-syntax";
}

/// Context keys a host sets for every run (ll-loop: executor_options::injected_context).
inline constexpr std::array<std::string_view, 3> host_context_keys{"run_dir", "input_hash",
                                                                   "max_steps"};

struct template_checker {
  const std::vector<std::string>* captures = nullptr;
  const std::vector<std::string>* context_keys = nullptr;  // the loop's, the input's, the host's
  diagnostics* out = nullptr;
  parsed_templates* keep = nullptr;  // every template that parses, by its text (optional)
  // Names of sub-loop states: `captured.<state>` is then the child's record, whose keys are
  // the child's captures, `output` and the outcome fields.
  const std::vector<std::string>* subloop_records = nullptr;

  void add(std::string path, std::string code, std::string message,
           severity level = severity::error) const {
    out->push_back(diagnostic{level, std::move(path), sanitize_utf8(message), std::move(code)});
  }

  // Parses `text` (reporting syntax problems) and checks its references; the parts, or
  // nullopt when the text does not parse.
  std::optional<std::vector<template_part>> check(std::string_view text, const std::string& path) const {
    std::vector<template_part> parts;
    const auto parsed = parse_template(text, parts);
    if (!parsed) {
      add(path, std::string(template_error_code(parsed.error().message)), parsed.error().message);
      return std::nullopt;
    }
    for (const auto& part : parts) {
      if (!part.is_variable || part.optional || part.default_value) continue;
      check_record_key(part, path);
      check_capture(part, path);
      check_context_key(part, path);
    }
    if (keep != nullptr && keep->find(text) == keep->end())
      keep->emplace(std::string(text), parsed_template{parts, *parsed});
    return parts;
  }

  // `${captured.X}` where no state captures X. A reference with a fallback (`?` or
  // `:default=`) may read a capture that never happens, so it is not checked (design §3.8).
  // A warning, as in the original (which checks nothing at load, and later warns): the
  // reference fails only if the state runs, as the `error` verdict.
  void check_capture(const template_part& part, const std::string& path) const {
    if (part.ns != template_namespace::captured) return;
    const std::string& name = part.path.front().key;
    for (const auto& c : *captures)
      if (c == name) return;
    const std::string names = join_names(*captures);
    add(path, "template-unknown-capture",
        fmt::format("${{{}}} reads captured.{}, but no state captures \"{}\" (captured: {})",
                    part.text, name, name, names.empty() ? std::string("none") : names),
        severity::warning);
  }

  // `${context.X}` where the loop defines no X but a key close to it (`targte` for
  // `target`): an error with a did-you-mean, since a run would stop there with the `error`
  // verdict. A key not close to any may come from `--context`; a guarded reference (`?`,
  // `:default=`) is not checked.
  void check_context_key(const template_part& part, const std::string& path) const {
    if (part.ns != template_namespace::context || part.path.empty() || context_keys == nullptr) return;
    const std::string& key = part.path.front().key;
    if (names_contain(*context_keys, key)) return;
    const auto close = closest_match(key, *context_keys);
    if (!close) return;
    add(path, "template-unknown-context",
        fmt::format("${{{}}} reads context.{}, which the loop does not define (did you mean "
                    "\"{}\"?); write ${{{}?}} or ${{{}:default=…}} if it is optional",
                    part.text, key, *close, part.text, part.text));
  }

  // `prev`, `result` and a capture are records with fixed keys: a reference to another key
  // (a typo: `${prev.outptu}`) can never resolve. A warning, as for an unknown capture: it
  // fails only if the state runs, as the `error` verdict.
  void check_record_key(const template_part& part, const std::string& path) const {
    auto warn = [&](std::string_view key, const auto& known, std::string_view record) {
      if (contains_name(known, key)) return;
      add(path, "template-unknown-key",
          fmt::format("${{{}}} reads the key \"{}\", which {} never has (it has {}){}", part.text,
                      key, record, join_names(known), did_you_mean(key, known)),
          severity::warning);
    };
    if (part.ns == template_namespace::prev && !part.path.empty())
      warn(part.path[0].key, template_prev_keys, "prev");
    else if (part.ns == template_namespace::result && !part.path.empty())
      warn(part.path[0].key, template_result_keys, "result");
    else if (part.ns == template_namespace::captured && part.path.size() >= 2 &&
             !reads_subloop_record(part))
      warn(part.path[1].key, template_captured_keys, "a capture");
  }

  bool reads_subloop_record(const template_part& part) const {
    return subloop_records != nullptr &&
           std::find(subloop_records->begin(), subloop_records->end(), part.path[0].key) !=
               subloop_records->end();
  }

  // True for a `${captured.…}`, `${prev.…}` or `${result.…}` reference to text an action or
  // a judge produced (not an exit code, a duration or a state name).
  static bool is_run_output(const template_part& part) {
    if (part.ns != template_namespace::captured && part.ns != template_namespace::prev &&
        part.ns != template_namespace::result)
      return false;
    const std::size_t field = part.ns == template_namespace::captured ? 1 : 0;
    if (part.path.size() <= field) return true;
    const std::string& key = part.path[field].key;
    return key != "exit_code" && key != "duration_ms" && key != "state";
  }

  // Warns about `${context.…}` pasted into shell text outside any quotes, and about
  // `${captured.…}`, `${prev.…}`, `${result.…}` output anywhere in it, without `:shell`.
  void check_shell_quoting(std::string_view src, const std::vector<template_part>& parts,
                           const std::string& path) const {
    char quote = 0;  // 0, '\'' or '"'
    std::size_t pos = 0;
    auto scan = [&](std::size_t end) {
      for (; pos < end; ++pos) {
        const char c = src[pos];
        if (quote == '\'') {
          if (c == '\'') quote = 0;
        } else if (c == '\\') {
          ++pos;
        } else if (quote == '"') {
          if (c == '"') quote = 0;
        } else if (c == '\'' || c == '"') {
          quote = c;
        }
      }
    };
    if (parts.size() == 1 && parts.front().is_variable) return;  // the whole command
    for (const auto& part : parts) {
      if (!part.is_variable) continue;
      scan(part.offset);
      pos = part.offset + part.length;
      if (part.shell) continue;
      if (part.ns == template_namespace::context && quote == 0) {
        add(path, "template-unquoted-context",
            fmt::format("${{{}}} is pasted into the shell command unquoted; a value with "
                        "spaces or metacharacters changes the command: write ${{{}:shell}}",
                        part.text, part.text),
            severity::warning);
      } else if (is_run_output(part)) {
        add(path, "template-unquoted-output",
            fmt::format("${{{}}} pastes what an action printed into the shell command; quotes do "
                        "not protect it (a `$(…)` or a quote in it runs as shell): write "
                        "${{{}:shell}}",
                        part.text, part.text),
            severity::warning);
      }
    }
  }

  // The action (with its shell quoting), `next`, route targets and on_<verdict> targets.
  void check_state(const std::string& name, const state_config& state) const {
    const std::string base = member_path("states", name);
    if (state.action) {
      const std::string path = join_path(base, "action");
      auto parts = check(*state.action, path);
      if (parts && !runs_prompt_action(state)) check_shell_quoting(*state.action, *parts, path);
    }
    if (state.next) check(*state.next, join_path(base, "next"));
    if (state.route) {
      const std::string route = join_path(base, "route");
      for (const auto& [verdict, target] : state.route->routes) check(target, member_path(route, verdict));
      if (state.route->default_target) check(*state.route->default_target, join_path(route, "_"));
      if (state.route->error_target) check(*state.route->error_target, join_path(route, "_error"));
    }
    for (const auto& [verdict, target] : state.on) check(target, member_path(base, "on_" + verdict));
    if (state.evaluate) check_evaluator(*state.evaluate, join_path(base, "evaluate"));
    if (state.loop) check(*state.loop, join_path(base, "loop"));
    if (state.worktree) check(*state.worktree, join_path(base, "worktree"));
    for (const auto& [key, value] : state.with) check_value(value, member_path(join_path(base, "with"), key));
    for (const auto& [key, value] : state.output)
      check_value(value, member_path(join_path(base, "output"), key));
    if (state.host.params) check_value(*state.host.params, join_path(base, "params"));
  }

  // Every string inside a `with:`, `output:` or `params:` value.
  void check_value(const json& value, const std::string& path) const {
    if (value.is_string()) {
      check(value.get_ref<const std::string&>(), path);
    } else if (value.is_object()) {
      for (auto it = value.begin(); it != value.end(); ++it) check_value(it.value(), member_path(path, it.key()));
    } else if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) check_value(value[i], fmt::format("{}[{}]", path, i));
    }
  }

  // The evaluator's string fields (`target` and `tolerance` when they are strings).
  void check_evaluator(const evaluate_config& e, const std::string& ev) const {
    auto field = [&](const std::optional<std::string>& v, std::string_view key) {
      if (v) check(*v, join_path(ev, key));
    };
    auto json_field = [&](const std::optional<json>& v, std::string_view key) {
      if (v && v->is_string()) check(v->get_ref<const std::string&>(), join_path(ev, key));
    };
    json_field(e.target, "target");
    json_field(e.tolerance, "tolerance");
    field(e.pattern, "pattern");
    field(e.path, "path");
    field(e.prompt, "prompt");
    field(e.source, "source");
    field(e.previous, "previous");
  }
};

// The same diagnostic (level, path, code and message) from `out[first]` on is kept once,
// where it first appeared, saying how often it was found: a variable used 1,000 times in
// one field is one warning, "(found 1000 times)", not 1,000 lines.
inline void merge_repeated_diagnostics(diagnostics& out, std::size_t first) {
  std::unordered_map<std::string, std::size_t> seen;  // key → index of the kept one
  std::vector<std::size_t> counts;
  std::size_t kept = first;
  for (std::size_t i = first; i < out.size(); ++i) {
    const diagnostic& d = out[i];
    std::string key = fmt::format("{}\n{}\n{}\n{}", static_cast<int>(d.level), d.path, d.code, d.message);
    const auto [it, fresh] = seen.try_emplace(std::move(key), kept);
    if (!fresh) {
      ++counts[it->second - first];
      continue;
    }
    if (kept != i) out[kept] = std::move(out[i]);
    counts.push_back(1);
    ++kept;
  }
  out.resize(kept);
  for (std::size_t i = first; i < kept; ++i)
    if (counts[i - first] > 1) out[i].message += fmt::format(" (found {} times)", counts[i - first]);
}

// Checks every templated field of `loop` (see validate_templates).
LITTLE_LOOPS_INLINE void check_loop_templates(const fsm_loop& loop, diagnostics& out, parsed_templates* keep) {
  std::vector<std::string> captures;
  std::vector<std::string> subloops;
  for (const auto& entry : loop.states) {
    if (entry.second.capture) captures.push_back(*entry.second.capture);
    if (entry.second.loop) {
      captures.push_back(entry.first);
      subloops.push_back(entry.first);
    }
  }
  std::vector<std::string> context_keys(host_context_keys.begin(), host_context_keys.end());
  if (loop.context.is_object())
    for (auto it = loop.context.begin(); it != loop.context.end(); ++it) context_keys.push_back(it.key());
  context_keys.push_back(loop.input_key);
  for (const auto& key : loop.required_inputs) context_keys.push_back(key);
  const std::size_t first = out.size();
  const template_checker checker{&captures, &context_keys, &out, keep, &subloops};
  for (const auto& [name, state] : loop.states) checker.check_state(name, state);
  merge_repeated_diagnostics(out, first);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

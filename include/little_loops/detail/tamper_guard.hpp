// little_loops — the tamper guard: test files snapshotted when a state starts, compared when it ends
// SPDX-License-Identifier: MIT
#pragma once

// `tamper_guard:` (guards.hpp; the reference's executor and its test_tamper_guard module).
// Before a guarded state's action runs, the test files (the host's test-file patterns) and
// the pytest configuration the working directory reads are hashed; after it, the same files
// and every test file git sees changed or untracked are hashed again. A difference is a
// finding (`modified`, `deleted`, `added`; `is_config` for the pytest configuration). The
// policy then acts: `revert` restores the tracked files modified or deleted (`git
// checkout`), `fail` sends the run to its failure terminal (failure_target()), `allow`
// only records. Every check appends its record to `${context._tamper_guard}`.
//
// All of it runs as probes of the host's ActionRunner (shell requests marked `probe`), so
// the core spawns nothing and reads no file: a simulating host answers them with nothing,
// and a state then has nothing to find.

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/events.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/guards.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/stall_memory.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A guard's policy for `st`: its own value, else the loop's; nullopt when neither is one of
/// `values` (unset, or a value validation warned about).
template <class Values>
std::optional<std::string_view> effective_guard(const std::optional<std::string>& own,
                                                const std::optional<std::string>& loop_default,
                                                const Values& values) {
  const std::optional<std::string>& v = own && !own->empty() ? own : loop_default;
  if (!v) return std::nullopt;
  for (std::string_view name : values)
    if (name == *v) return name;
  return std::nullopt;
}

LITTLE_LOOPS_INLINE bool glob_match(std::string_view pattern, std::string_view path);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Whether `path` matches the glob `pattern`: `*` and `?` stay inside one path segment,
/// `**/` matches any number of leading directories (none included), and any other `**`
/// matches across segments.
LITTLE_LOOPS_INLINE bool glob_match(std::string_view pattern, std::string_view path) {
  if (pattern.empty()) return path.empty();
  if (pattern.substr(0, 3) == "**/") {
    const std::string_view rest = pattern.substr(3);
    while (true) {  // after 0, 1, … leading directories
      if (glob_match(rest, path)) return true;
      const std::size_t slash = path.find('/');
      if (slash == std::string_view::npos) return false;
      path.remove_prefix(slash + 1);
    }
  }
  if (pattern.substr(0, 2) == "**") {
    for (std::size_t i = 0; i <= path.size(); ++i)
      if (glob_match(pattern.substr(2), path.substr(i))) return true;
    return false;
  }
  if (pattern.front() == '*') {
    for (std::size_t i = 0; i <= path.size(); ++i) {
      if (glob_match(pattern.substr(1), path.substr(i))) return true;
      if (i < path.size() && path[i] == '/') return false;
    }
    return false;
  }
  if (path.empty()) return false;
  if (pattern.front() == '?' ? path.front() == '/' : pattern.front() != path.front()) return false;
  return glob_match(pattern.substr(1), path.substr(1));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Whether `path` is a test file by `patterns`.
template <class Patterns>
bool is_test_file(std::string_view path, const Patterns& patterns) {
  return std::any_of(std::begin(patterns), std::end(patterns),
                     [&](const auto& p) { return glob_match(p, path); });
}

/// The line a listing probe marks the pytest configuration with.
inline constexpr std::string_view config_marker = ":pytest-config ";

LITTLE_LOOPS_INLINE std::string config_probe();
LITTLE_LOOPS_INLINE std::string listing_probe(bool entry);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The shell text that prints the pytest configuration pytest reads here, as pytest finds
/// it: `pytest.ini`, else `pyproject.toml` with `[tool.pytest.ini_options]`, else `tox.ini`
/// with `[pytest]`, else `setup.cfg` with `[tool:pytest]`.
LITTLE_LOOPS_INLINE std::string config_probe() {
  const std::string m(config_marker);
  return "if [ -f pytest.ini ]; then echo '" + m + "pytest.ini'; "
         "elif grep -qs '^[[:space:]]*\\[tool\\.pytest\\.ini_options\\]' pyproject.toml; then echo '" + m + "pyproject.toml'; "
         "elif grep -qsF '[pytest]' tox.ini; then echo '" + m + "tox.ini'; "
         "elif grep -qsF '[tool:pytest]' setup.cfg; then echo '" + m + "setup.cfg'; fi";
}

/// The listing probe: the pytest configuration, then every file git tracks or sees
/// untracked (`entry`), or only those changed against HEAD and the untracked ones (exit).
LITTLE_LOOPS_INLINE std::string listing_probe(bool entry) {
  std::string cmd = config_probe() + "; ";
  cmd += entry ? "git -c core.quotepath=off ls-files --cached --others --exclude-standard 2>/dev/null"
               : "git -c core.quotepath=off diff --name-only HEAD 2>/dev/null; "
                 "git -c core.quotepath=off ls-files --others --exclude-standard 2>/dev/null";
  return cmd;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// A listing probe's answer.
struct guard_listing {
  std::vector<std::string> paths{};
  std::optional<std::string> config{};  ///< the pytest configuration, if any
};

LITTLE_LOOPS_INLINE guard_listing parse_listing(std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE guard_listing parse_listing(std::string_view text) {
  guard_listing out;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.substr(0, config_marker.size()) == config_marker)
      out.config = std::string(line.substr(config_marker.size()));
    else
      out.paths.emplace_back(line);
  }
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE std::string hash_probe(const std::vector<std::string>& paths);
LITTLE_LOOPS_INLINE std::string revert_probe(const std::vector<std::string>& paths);
LITTLE_LOOPS_INLINE std::optional<std::vector<std::string>> answer_lines(std::string_view text,
                                                            std::size_t expected);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The hashing probe: one line per path, its git blob hash or `-` when it is no file. The
/// pytest section of `pyproject.toml` is hashed alone (edits elsewhere in it are no finding).
LITTLE_LOOPS_INLINE std::string hash_probe(const std::vector<std::string>& paths) {
  std::string cmd = "for f in";
  for (const auto& p : paths) {
    cmd += ' ';
    cmd += shell_word(p);
  }
  cmd += "; do if [ ! -f \"$f\" ]; then echo -; "
         "elif [ \"$f\" = pyproject.toml ]; then awk '/^[[:space:]]*\\[/{s=($0 ~ "
         "/^[[:space:]]*\\[tool\\.pytest\\.ini_options\\]/)} s' \"$f\" | git hash-object --stdin; "
         "else git hash-object -- \"$f\" || echo '?'; fi; done";
  return cmd;
}

/// The revert probe: restores each path git tracks (`git checkout --`); one line per path,
/// `+` when restored, `-` when not (untracked: nothing to restore from).
LITTLE_LOOPS_INLINE std::string revert_probe(const std::vector<std::string>& paths) {
  std::string cmd = "for f in";
  for (const auto& p : paths) {
    cmd += ' ';
    cmd += shell_word(p);
  }
  cmd += "; do if git ls-files --error-unmatch -- \"$f\" >/dev/null 2>&1 && "
         "git checkout -- \"$f\" 2>/dev/null; then echo +; else echo -; fi; done";
  return cmd;
}

/// The lines of a probe's answer, one per path asked about (nullopt: another count).
LITTLE_LOOPS_INLINE std::optional<std::vector<std::string>> answer_lines(std::string_view text,
                                                            std::size_t expected) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  if (lines.size() != expected) return std::nullopt;
  return lines;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Hashes of test files by path (nullopt: no such file).
using tamper_snapshot = std::map<std::string, std::optional<std::string>>;

/// One difference between two snapshots.
struct tamper_finding {
  std::string path{};
  std::string_view kind{};  ///< modified, deleted, added
  bool is_config = false;
};

LITTLE_LOOPS_INLINE std::vector<tamper_finding> compare_snapshots(const tamper_snapshot& before,
                                                     const tamper_snapshot& after,
                                                     const std::optional<std::string>& config);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::vector<tamper_finding> compare_snapshots(const tamper_snapshot& before,
                                                     const tamper_snapshot& after,
                                                     const std::optional<std::string>& config) {
  std::set<std::string> paths;
  for (const auto& e : before) paths.insert(e.first);
  for (const auto& e : after) paths.insert(e.first);
  std::vector<tamper_finding> out;
  for (const auto& p : paths) {
    const auto b = before.find(p);
    const auto a = after.find(p);
    const std::optional<std::string> bh = b == before.end() ? std::nullopt : b->second;
    const std::optional<std::string> ah = a == after.end() ? std::nullopt : a->second;
    if (bh == ah) continue;
    out.push_back({p, !bh ? "added" : !ah ? "deleted" : "modified", config && *config == p});
  }
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// The probes of the test guards for one state, through `run` (the host's runner): the
/// tamper guard's snapshot taken on entry and its check on exit, and ask() for any other.
template <class Run>
class guard_probes {
 public:
  guard_probes(Run run, std::string_view state, std::stop_token stop,
               std::optional<std::chrono::steady_clock::time_point> deadline)
      : run_(std::move(run)), state_(state), stop_(std::move(stop)), deadline_(deadline) {}

  /// Hashes the test files and the pytest configuration as they are now.
  template <class Patterns>
  tamper_snapshot snapshot_entry(const Patterns& patterns) {
    const guard_listing l = list(true);
    std::vector<std::string> paths;
    for (const auto& p : l.paths)
      if (is_test_file(p, patterns)) paths.push_back(p);
    if (l.config) paths.push_back(*l.config);
    return hash(paths);
  }

  /// Compares `before` with now and applies `policy`: the record appended to
  /// `${context._tamper_guard}` (state, policy, passed, findings, reverted).
  template <class Patterns>
  json check_exit(const tamper_snapshot& before, std::string_view policy, const Patterns& patterns) {
    const guard_listing l = list(false);
    std::vector<std::string> paths;
    for (const auto& e : before) paths.push_back(e.first);
    for (const auto& p : l.paths)
      if (is_test_file(p, patterns)) paths.push_back(p);
    if (l.config) paths.push_back(*l.config);
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    const std::vector<tamper_finding> findings = compare_snapshots(before, hash(paths), l.config);
    json record = {{"state", state_}, {"policy", policy}, {"passed", true},
                   {"findings", json::array()}, {"reverted", json::array()}};
    std::vector<std::string> revertable;
    for (const auto& f : findings) {
      record["findings"].push_back({{"path", f.path}, {"kind", f.kind}, {"is_config", f.is_config}});
      if (f.kind != "added") revertable.push_back(f.path);
    }
    if (findings.empty() || policy == "allow") return record;
    if (policy == "fail") {
      record["passed"] = false;
      return record;
    }
    const json reverted = revert(revertable);
    record["passed"] = reverted.size() == revertable.size();
    record["reverted"] = reverted;
    return record;
  }

  /// The output of the probe `text` (nullopt: it could not be run, or timed out).
  std::optional<std::string> ask(const std::string& text) {
    action_request req;
    req.state = state_;
    req.text = text;
    req.timeout = std::chrono::seconds(30);
    req.deadline = deadline_;
    req.stop = stop_;
    req.probe = true;
    expected<action_result, error> r = run_(req);
    if (!r || r->timed_out || r->cancelled) return std::nullopt;
    return std::move(r->output);
  }

 private:
  guard_listing list(bool entry) {
    auto text = ask(listing_probe(entry));
    return text ? parse_listing(*text) : guard_listing{};
  }

  // A path whose hash cannot be read counts as no file (the reference's unreadable file).
  tamper_snapshot hash(const std::vector<std::string>& paths) {
    tamper_snapshot out;
    if (paths.empty()) return out;
    const auto text = ask(hash_probe(paths));
    const auto lines = text ? answer_lines(*text, paths.size()) : std::nullopt;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const bool known = lines && (*lines)[i] != "-" && (*lines)[i] != "?" && !(*lines)[i].empty();
      out[paths[i]] = known ? std::optional<std::string>((*lines)[i]) : std::nullopt;
    }
    return out;
  }

  json revert(const std::vector<std::string>& paths) {
    json out = json::array();
    if (paths.empty()) return out;
    const auto text = ask(revert_probe(paths));
    const auto lines = text ? answer_lines(*text, paths.size()) : std::nullopt;
    for (std::size_t i = 0; lines && i < paths.size(); ++i)
      if ((*lines)[i] == "+") out.push_back(paths[i]);
    return out;
  }

  Run run_;
  std::string_view state_;
  std::stop_token stop_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

LITTLE_LOOPS_INLINE std::optional<std::size_t> failure_target(const compiled_loop& loop,
                                                 const state_config& st);
LITTLE_LOOPS_INLINE void append_guard_record(json& context, std::string_view key, json record);
LITTLE_LOOPS_INLINE guard_event stamped(guard_event e, event_time ts);
LITTLE_LOOPS_INLINE std::optional<std::string_view> tamper_policy_of(const compiled_loop& loop,
                                                        const compiled_state& st);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Where a guard's `fail` policy sends the run from `st` (the reference's rule): its `on_no`
/// when that is a failure terminal, else the first failure terminal by name, else its
/// `on_no`; nullopt when there is none of them (the ordinary routes decide).
LITTLE_LOOPS_INLINE std::optional<std::size_t> failure_target(const compiled_loop& loop,
                                                 const state_config& st) {
  const auto on_no = st.on.find("no");
  std::optional<std::size_t> no;
  if (on_no != st.on.end()) no = loop.find(on_no->second);
  if (no && loop.state(*no).config->terminal && loop.state(*no).config->failure) return no;
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < loop.states().size(); ++i) {
    const compiled_state& s = loop.state(i);
    if (s.config->terminal && s.config->failure && (!first || s.name < loop.state(*first).name))
      first = i;
  }
  return first ? first : no;
}

/// Appends `record` to the list `context[key]` (made a list when it is not one).
LITTLE_LOOPS_INLINE void append_guard_record(json& context, std::string_view key, json record) {
  json& list = context[std::string(key)];
  if (!list.is_array()) list = json::array();
  list.push_back(std::move(record));
}

/// `e` at time `ts`.
LITTLE_LOOPS_INLINE guard_event stamped(guard_event e, event_time ts) {
  e.ts = ts;
  return e;
}

/// The tamper policy of the state `st` in `loop`, if a guard applies to it.
LITTLE_LOOPS_INLINE std::optional<std::string_view> tamper_policy_of(const compiled_loop& loop,
                                                        const compiled_state& st) {
  return effective_guard(st.config->guards.tamper_guard, loop.loop().guards.tamper_guard,
                         tamper_guard_values);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// What a guard decided on a state's exit: where a `fail` policy sends the run, and the
/// event to report (its time stamp left to the executor).
struct guard_decision {
  std::optional<std::size_t> target{};
  guard_event event{};
  bool report = false;  ///< the event is worth reporting
};

/// The tamper guard's exit of `st`: compares with `before`, applies the policy, appends the
/// record to `context._tamper_guard`.
template <class Run, class Patterns>
guard_decision tamper_exit(guard_probes<Run> check, const compiled_loop& loop,
                           const compiled_state& st, const tamper_snapshot& before,
                           const Patterns& patterns, json& context) {
  const std::string_view policy = *tamper_policy_of(loop, st);
  json record = check.check_exit(before, policy, patterns);
  guard_decision d;
  d.event.state = st.name;
  d.event.kind = "tamper_guard";
  d.event.policy = policy;
  d.event.passed = record["passed"].get<bool>();
  d.event.findings = static_cast<std::int64_t>(record["findings"].size());
  d.event.reverted = static_cast<std::int64_t>(record["reverted"].size());
  d.report = d.event.findings != 0;
  if (!d.event.passed && policy == "fail") d.target = failure_target(loop, *st.config);
  if (d.target) d.event.target = loop.state(*d.target).name;
  append_guard_record(context, "_tamper_guard", std::move(record));
  return d;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

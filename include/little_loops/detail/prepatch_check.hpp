// little_loops — the pre-patch check: the cumulative patch of a green exit, judged by the host
// SPDX-License-Identifier: MIT
#pragma once

// `prepatch_check:` (guards.hpp; the reference's executor). On the exit of a guarded state
// whose action succeeded, a probe of the host's runner gives the pre-patch base (`git
// merge-base HEAD <branch>`, else the branch) and the patch since it (`git diff <base>`, and
// a `/dev/null` diff of each untracked file); the host's checker
// (executor_options::prepatch_checker) says whether the candidate tests of that patch passed
// before it too (`flagged`). A red exit records a skip and asks nothing. Each check appends
// its record to `${context._prepatch_check}`; the same (patch, base) within a run reuses the
// verdict (`memoized`). `fail` sends a flagged run to its failure terminal, `warn` reports
// it (a `prepatch_check_flagged` guard event), `allow` only records.

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/guards.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/detail/tamper_guard.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

LITTLE_LOOPS_INLINE std::string prepatch_diff_probe(std::string_view base_branch);
LITTLE_LOOPS_INLINE std::optional<std::string_view> prepatch_policy_of(const compiled_loop& loop,
                                                          const compiled_state& st);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The probe that prints the pre-patch base (first line), then the patch since it.
LITTLE_LOOPS_INLINE std::string prepatch_diff_probe(std::string_view base_branch) {
  const std::string b = shell_word(base_branch);
  return "base=$(git merge-base HEAD " + b + " 2>/dev/null) || base=" + b +
         "; echo \"$base\"; git diff \"$base\" 2>/dev/null; "
         "git -c core.quotepath=off ls-files --others --exclude-standard 2>/dev/null | "
         "while IFS= read -r f; do git diff --no-index -- /dev/null \"$f\"; done; true";
}

/// The prepatch policy of the state `st` in `loop`, if a check applies to it.
LITTLE_LOOPS_INLINE std::optional<std::string_view> prepatch_policy_of(const compiled_loop& loop,
                                                          const compiled_state& st) {
  return effective_guard(st.config->guards.prepatch_check, loop.loop().guards.prepatch_check,
                         prepatch_check_values);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Verdicts of one run by (hash of the patch, base), as the reference memoizes them.
using prepatch_memo = std::map<std::pair<std::uint64_t, std::string>, prepatch_verdict>;

/// The host's verdict on the patch of a green exit (skipped without a checker), through the
/// memo; `memoized` tells whether it was there.
template <class Run>
prepatch_verdict judge_patch(guard_probes<Run>& probes, const compiled_state& st,
                             const executor_options& options, prepatch_memo& memo,
                             std::string& base_ref, bool& memoized) {
  const std::optional<std::string> text = probes.ask(prepatch_diff_probe(options.prepatch_base_branch));
  std::string_view out = text ? std::string_view(*text) : std::string_view();
  const std::size_t eol = std::min(out.find('\n'), out.size());
  base_ref = std::string(out.substr(0, eol));
  if (base_ref.empty()) base_ref = options.prepatch_base_branch;
  const std::string_view diff = out.substr(std::min(eol + 1, out.size()));
  const auto key = std::make_pair(fnv1a_64(diff), base_ref);
  if (const auto found = memo.find(key); found != memo.end()) {
    memoized = true;
    return found->second;
  }
  prepatch_verdict v;
  v.skipped_reason = "no pre-patch checker in this host";
  if (options.prepatch_checker) v = options.prepatch_checker(prepatch_request{st.name, base_ref, diff});
  memo.emplace(key, v);
  return v;
}

/// The pre-patch check of `st` on its exit (`green`: its action succeeded): the record in
/// `context._prepatch_check`, and where a `fail` policy sends a flagged run.
template <class Run>
guard_decision prepatch_exit(guard_probes<Run> probes, const compiled_loop& loop,
                             const compiled_state& st, bool green, const executor_options& options,
                             prepatch_memo& memo, json& context) {
  const std::string_view policy = *prepatch_policy_of(loop, st);
  json record = {{"state", st.name}, {"policy", policy}};
  guard_decision d;
  if (!green) {
    record["verdict"] = "skipped";
    record["skipped_reason"] = "guarded state's action did not succeed (red path)";
    record["memoized"] = false;
    append_guard_record(context, "_prepatch_check", std::move(record));
    return d;
  }
  std::string base_ref;
  bool memoized = false;
  const prepatch_verdict v = judge_patch(probes, st, options, memo, base_ref, memoized);
  record["verdict"] = v.verdict;
  record["base_ref"] = base_ref;
  record["skipped_reason"] = v.verdict == "skipped" ? json(v.skipped_reason) : json();
  record["memoized"] = memoized;
  append_guard_record(context, "_prepatch_check", std::move(record));
  if (v.verdict != "flagged" || policy == "allow") return d;
  d.report = true;
  d.event.state = st.name;
  d.event.kind = "prepatch_check_flagged";
  d.event.policy = policy;
  d.event.verdict = "flagged";
  if (policy == "fail") d.target = failure_target(loop, *st.config);
  if (d.target) d.event.target = loop.state(*d.target).name;
  return d;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

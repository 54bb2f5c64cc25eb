// little_loops — routing: from a state's verdict to the next state (design §3.3)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// One routing decision: the state routed from, its verdict, and what its targets read.
struct route_query {
  const compiled_loop* loop = nullptr;
  std::size_t current = 0;  // the state routed from; `$current` re-enters it
  std::string_view verdict;
  // The action failed (non-zero exit, killed, timed out) or the verdict is `error`: a `next:`
  // state then goes to its on_error, when it has one.
  bool failed_action = false;
  // The state's action could not be run at all: a `next:` state without on_error is unrouted.
  bool unrunnable = false;
  // The evaluation's details: an unrouted `error` verdict names their "error" as its cause.
  const evaluation_details* details = nullptr;
  // What interpolated targets render from, and the buffer they render into.
  const interpolation_context* context = nullptr;
  std::string* text = nullptr;
  // The exit code `retryable_exit_codes` is matched against (a timeout is 124); -1 for a
  // signal death, a cancelled or an unrunnable action, which match nothing.
  int retry_code = -1;
};

// Why routing found no state. `unrenderable`: an interpolated target could not be rendered
// (design §3.4 makes that the verdict `error`, which the caller routes again).
struct route_failure {
  little_loops::error error;
  bool unrenderable = false;
};

using route_outcome = expected<std::size_t, route_failure>;

LITTLE_LOOPS_INLINE expected<std::size_t, little_loops::error> take_static(const compiled_state& st,
                                                              const compiled_target& t,
                                                              std::size_t current);
LITTLE_LOOPS_INLINE route_outcome take_static_route(const compiled_state& st, const compiled_target& t,
                                       std::size_t current);
LITTLE_LOOPS_INLINE route_outcome take(const route_query& q, const compiled_target& t);
LITTLE_LOOPS_INLINE little_loops::error no_transition_error(const compiled_state& st, std::string_view verdict,
                                               const evaluation_details* details);
LITTLE_LOOPS_INLINE const compiled_target* twin_entry(
    const std::vector<std::pair<std::string, compiled_target>>& table, std::string_view twin) noexcept;
LITTLE_LOOPS_INLINE bool not_retryable(const compiled_state& st, int code) noexcept;
LITTLE_LOOPS_INLINE route_outcome take_retry_exhausted(const route_query& q, const compiled_state& st);
LITTLE_LOOPS_INLINE bool routes_abstention(const compiled_state& st, std::string_view verdict) noexcept;
LITTLE_LOOPS_INLINE route_outcome escalate_abstention(const route_query& q);
LITTLE_LOOPS_INLINE route_outcome route(const route_query& q);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Resolves a target that needs no rendering (a state, `$current`, an unknown name) to a state
// index; `st` is the state routed from, `current` its index.
LITTLE_LOOPS_INLINE expected<std::size_t, little_loops::error> take_static(const compiled_state& st,
                                                              const compiled_target& t,
                                                              std::size_t current) {
  switch (t.type) {
    case compiled_target::kind::state: return t.index;
    case compiled_target::kind::current: return current;
    case compiled_target::kind::dynamic: break;
    case compiled_target::kind::unknown:
      return unexpected(little_loops::error{
          errc::unknown_state,
          fmt::format("route target \"{}\" of state \"{}\" is not a state ({})", t.source, st.name,
                      t.path),
          t.path});
  }
  return unexpected(little_loops::error{
      errc::unknown_state,
      fmt::format("route target \"{}\" of state \"{}\" is not resolved", t.source, st.name),
      t.path});
}

// take_static() as a routing outcome.
LITTLE_LOOPS_INLINE route_outcome take_static_route(const compiled_state& st, const compiled_target& t,
                                       std::size_t current) {
  auto to = take_static(st, t, current);
  if (!to) return unexpected(route_failure{std::move(to.error())});
  return *to;
}

// Resolves any compiled target: an interpolated one is rendered into `*q.text` from
// `*q.context`, then names `$current` or a state of the loop.
LITTLE_LOOPS_INLINE route_outcome take(const route_query& q, const compiled_target& t) {
  if (t.type == compiled_target::kind::state) return t.index;  // the common case, inline
  const compiled_state& st = q.loop->state(q.current);
  if (t.type != compiled_target::kind::dynamic) return take_static_route(st, t, q.current);
  std::string& text = *q.text;
  text.clear();
  if (auto r = render_to(t.tmpl, *q.context, text); !r)
    return unexpected(route_failure{
        little_loops::error{r.error().code,
                            fmt::format("route target \"{}\" of state \"{}\": {}", t.source,
                                        st.name, r.error().message),
                            "states." + st.name},
        true});
  if (text == "$current") return q.current;
  if (auto i = q.loop->find(text)) return *i;
  return unexpected(route_failure{little_loops::error{
      errc::unknown_state,
      fmt::format("route target \"{}\" of state \"{}\" resolved to \"{}\", which is not a state",
                  t.source, st.name, text),
      "states." + st.name}});
}

// "No valid transition from state "s" for verdict "v"", followed for the `error` verdict by
// its cause (the details' "error": runner error, interpolation failure, evaluator error,
// timeout, ...) when there is one.
LITTLE_LOOPS_INLINE little_loops::error no_transition_error(const compiled_state& st, std::string_view verdict,
                                               const evaluation_details* details) {
  std::string message =
      fmt::format("No valid transition from state \"{}\" for verdict \"{}\"", st.name, verdict);
  if (verdict == "error" && details) {
    details->visit([&message](const json& d) {
      if (const auto it = d.find("error");
          it != d.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
        message += ": ";
        message += it->get_ref<const std::string&>();
      }
      return 0;
    });
  }
  return little_loops::error{errc::no_transition, std::move(message), "states." + st.name};
}

// The entry of `table` (route keys or on_<verdict> shorthands) for `twin`, the twin of the
// verdict (design §6.2: twin verdicts route alike after the exact key); null when none.
LITTLE_LOOPS_INLINE const compiled_target* twin_entry(
    const std::vector<std::pair<std::string, compiled_target>>& table, std::string_view twin) noexcept {
  if (twin.empty()) return nullptr;
  for (const auto& [key, target] : table)
    if (key == twin) return &target;
  return nullptr;
}

// An error whose exit code the state's `retryable_exit_codes` does not list.
LITTLE_LOOPS_INLINE bool not_retryable(const compiled_state& st, int code) noexcept {
  if (st.retryable_exit_codes.empty() || code < 0) return false;
  return std::find(st.retryable_exit_codes.begin(), st.retryable_exit_codes.end(), code) ==
         st.retryable_exit_codes.end();
}

// `on_retry_exhausted`, else `on_error` (validation makes sure there is one), for an error
// that is not worth retrying.
LITTLE_LOOPS_INLINE route_outcome take_retry_exhausted(const route_query& q, const compiled_state& st) {
  if (st.retry_exhausted) return take_static_route(st, *st.retry_exhausted, q.current);
  return take(q, st.on[*st.on_error].second);
}

// True when the state routes the abstention `verdict` by its own name (design §6.3: then it
// is not held).
LITTLE_LOOPS_INLINE bool routes_abstention(const compiled_state& st, std::string_view verdict) noexcept {
  for (const auto& entry : st.routes)
    if (entry.first == verdict) return true;
  for (const auto& entry : st.on)
    if (entry.first == verdict) return true;
  return false;
}

// The route of an abstention held too long: `_error` with a route table, else `on_error`,
// else unrouted (never `_` or `on_no`).
LITTLE_LOOPS_INLINE route_outcome escalate_abstention(const route_query& q) {
  const compiled_state& st = q.loop->state(q.current);
  const bool has_table = !st.routes.empty() || st.route_default || st.route_error;
  if (has_table && st.route_error) return take(q, *st.route_error);
  if (!has_table && st.on_error) return take(q, st.on[*st.on_error].second);
  return unexpected(route_failure{no_transition_error(st, q.verdict, q.details)});
}

// Design §3.3 and §6.1–6.3: next (happy path) → retryable_exit_codes bypass (an `error`
// whose exit code is not listed) → route key (exact, then twin) → `_error` → `_` →
// on_<verdict> (exact, then twin) → in the current dialect, `no` to `_error`/on_error →
// maintain fallback → error naming state and verdict (and, for `error`, its cause). In a
// `next:` state a failed action goes to on_error when there is one (on_retry_exhausted when
// its exit code is not retryable), else to `next`; an action that could not be run at all
// without on_error is unrouted. The cannot_judge hold is the executor's (it keeps counts).
LITTLE_LOOPS_INLINE route_outcome route(const route_query& q) {
  const compiled_state& st = q.loop->state(q.current);
  if (st.next) {
    if (q.failed_action && st.on_error) {
      if (not_retryable(st, q.retry_code)) return take_retry_exhausted(q, st);
      return take(q, st.on[*st.on_error].second);
    }
    if (!q.unrunnable) return take(q, *st.next);
  } else {
    if (q.verdict == "error" && not_retryable(st, q.retry_code)) return take_retry_exhausted(q, st);
    for (const auto& [key, target] : st.routes)
      if (key == q.verdict) return take(q, target);
    if (!st.routes.empty())
      if (const auto* t = twin_entry(st.routes, twin_verdict(q.verdict))) return take(q, *t);
    if (st.route_error && q.verdict == "error") return take(q, *st.route_error);
    if (st.route_default) return take(q, *st.route_default);
    for (const auto& [key, target] : st.on)
      if (key == q.verdict) return take(q, target);
    if (const auto* t = twin_entry(st.on, twin_verdict(q.verdict))) return take(q, *t);
    // The current dialect: an unrouted `no` takes the error route.
    if (q.loop->dialect() == loop_dialect::current && (q.verdict == "no" || q.verdict == "failure")) {
      if (st.route_error) return take(q, *st.route_error);
      if (st.on_error) return take(q, st.on[*st.on_error].second);
    }
  }
  if (q.loop->loop().maintain) return take_static_route(st, st.maintain_target, q.current);
  return unexpected(route_failure{no_transition_error(st, q.verdict, q.details)});
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

// little_loops — the worktree of a sub-loop state: the child's actions run in a scratch checkout
// SPDX-License-Identifier: MIT
#pragma once

// Part of the sub-loop frames (subloop_frames.hpp): a `loop:` state's `worktree:` renders to
// a branch name; the host attaches a scratch git worktree to that existing branch
// (executor_options::attach_worktree) and every action and probe of the child, and of its
// own children, runs there (action_request::working_dir); when the child ends, or the run
// ends inside it, the host detaches it (its branch stays). Rendered empty: no worktree.

#include <little_loops/config.hpp>
#include <little_loops/events.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/strings.hpp>

#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A worktree attached for a child loop.
struct attached_worktree {
  std::string branch{};
  std::string path{};
};

LITTLE_LOOPS_INLINE expected<std::optional<attached_worktree>, std::string> attach_subloop_worktree(
    const std::string& text, const interpolation_context& ctx, json& child_context,
    const executor_options& options);
LITTLE_LOOPS_INLINE void detach_subloop_worktree(const attached_worktree& w, const executor_options& options) noexcept;
LITTLE_LOOPS_INLINE guard_event worktree_event(event_time ts, std::string_view state, std::string_view kind,
                                  std::string_view branch, std::string_view path,
                                  std::string_view message = {});
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// Attaches the worktree of a sub-loop state whose `worktree:` is `text`: nullopt when it
/// renders empty, else the worktree, or why there is none.
LITTLE_LOOPS_INLINE expected<std::optional<attached_worktree>, std::string> attach_subloop_worktree(
    const std::string& text, const interpolation_context& ctx, json& child_context,
    const executor_options& options) {
  auto rendered = interpolate(text, ctx);
  if (!rendered) return unexpected("worktree: " + rendered.error().message);
  const std::string branch(trim_py(*rendered));
  if (branch.empty()) return std::optional<attached_worktree>();
  if (!options.attach_worktree)
    return unexpected("worktree \"" + branch + "\": the host attaches no worktrees");
  std::optional<expected<std::string, std::string>> path;
  try {
    path = options.attach_worktree(branch, child_context);
  } catch (const std::exception& e) {
    return unexpected("worktree \"" + branch + "\": " + e.what());
  }
  if (!*path) return unexpected("worktree \"" + branch + "\": " + path->error());
  return std::optional<attached_worktree>(attached_worktree{branch, std::move(**path)});
}

/// Detaches `w` through the host (a failure to detach is the host's to report).
LITTLE_LOOPS_INLINE void detach_subloop_worktree(const attached_worktree& w, const executor_options& options) noexcept {
  try {
    if (options.detach_worktree) options.detach_worktree(w.path);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a leaked scratch worktree must not end the run
  }
}

/// The guard event of a worktree (`sub_loop_worktree_attached`, `_detached`, `_error`).
LITTLE_LOOPS_INLINE guard_event worktree_event(event_time ts, std::string_view state, std::string_view kind,
                                  std::string_view branch, std::string_view path,
                                  std::string_view message) {
  guard_event e;
  e.ts = ts;
  e.state = state;
  e.kind = kind;
  e.branch = branch;
  e.path = path;
  e.message = message;
  return e;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

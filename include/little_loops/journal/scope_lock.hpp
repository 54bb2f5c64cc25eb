// little_loops — journal: scope claims, so that loops whose scopes overlap do not run at once
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/journal/detail/scope_claims.hpp>
#include <little_loops/journal/files.hpp>
#include <little_loops/journal/scope.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

// Scope claims: which paths running loops work on (a loop's `scope:`), so that two loops
// whose scopes overlap do not run at once — the original's LockManager, in the same files.
// A run's claim is written into its journal's `NAME.lock` (the file loop_journal holds an
// flock() on while it is open) as `{"loop_name","scope","pid","started_at"}`; an empty
// scope claims the working directory (the whole project). Claims are made one at a time
// under an flock() of `DIR/.acquire.lock`, so two loops started together cannot both
// claim overlapping paths. A claim is released (the file emptied) when the journal closes;
// the claim of a process that is gone (journal_process_alive() with its `started_at`) is
// stale and ignored. Lock files are never removed: a run may be about to lock one.

/// The claims of the live runs in `dir` (stale claims and files that hold none are
/// skipped), except the one in `except` (a run's own lock file), in file-name order.
inline std::vector<scope_claim> list_scope_claims(const std::filesystem::path& dir,
                                                  const std::filesystem::path& except = {}) {
  std::vector<scope_claim> out;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    const std::string name = p.filename().string();
    if (name.empty() || name.front() == '.' || p.extension() != ".lock") continue;
    if (!except.empty() && p.filename() == except.filename()) continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  for (const auto& p : files)
    if (auto claim = detail::read_scope_claim(p); claim && journal_process_alive(claim->pid, claim->started_at))
      out.push_back(std::move(*claim));
  return out;
}

/// The first live claim in `dir` (except `except`'s) that overlaps `scope` (normalised
/// paths; see normalize_scope_path()), or, when `singleton`, that is a singleton claim of the
/// loop `name` whatever its scope (design §6.3: one running instance per singleton loop).
inline std::optional<scope_claim> find_scope_conflict(const std::filesystem::path& dir,
                                                      const std::vector<std::string>& scope,
                                                      const std::filesystem::path& except = {},
                                                      std::string_view name = {},
                                                      bool singleton = false) {
  for (auto& claim : list_scope_claims(dir, except))
    if (scopes_overlap(scope, claim.scope) || (singleton && claim.singleton && claim.loop_name == name))
      return std::move(claim);
  return std::nullopt;
}

LITTLE_LOOPS_NAMESPACE_END

// little_loops — test guards: the tamper guard and the pre-patch check of a state or a loop
// SPDX-License-Identifier: MIT
#pragma once

// The reference's `tamper_guard:` and `prepatch_check:` keys (design §6.3). A loop-level
// value is the default of every state; a state's own value overrides it. schema.hpp holds
// them in its records; the reader is detail/guard_fields.hpp; the executor applies them
// (detail/tamper_guard.hpp, detail/prepatch_check.hpp) through probes of the host's runner.

#include <little_loops/config.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The values of `tamper_guard:`: `revert` restores tracked test files an action changed,
/// `fail` sends a run with a finding to its failure terminal, `allow` only records.
inline constexpr std::array<std::string_view, 3> tamper_guard_values{"revert", "fail", "allow"};
/// The values of `prepatch_check:`: `fail` sends a flagged run to its failure terminal,
/// `warn` emits a `prepatch_check_flagged` guard event, `allow` only records.
inline constexpr std::array<std::string_view, 3> prepatch_check_values{"fail", "warn", "allow"};

/// The test guards of a state or a loop, as written. A value outside the lists above is
/// kept: validation warns about it (`unknown-tamper-guard`, `unknown-prepatch-check`) and
/// the guard is off, as in the reference.
struct test_guards {
  std::optional<std::string> tamper_guard{};
  std::optional<std::string> prepatch_check{};

  friend bool operator==(const test_guards&, const test_guards&) = default;
};

/// What the executor asks the host's pre-patch checker (executor_options::prepatch_checker)
/// on the green exit of a state with `prepatch_check:`.
struct prepatch_request {
  std::string_view state{};      ///< the guarded state
  std::string_view base_ref{};   ///< the pre-patch base (`git merge-base HEAD <base branch>`)
  std::string_view step_diff{};  ///< `git diff <base_ref>` and a diff of each untracked file
};

/// The host's answer: `clean` (every candidate test failed before the patch), `flagged` (one
/// passed before it too: it proves nothing), or `skipped` (nothing to check, or the check is
/// off), with the reason of a skip.
struct prepatch_verdict {
  std::string verdict = "skipped";
  std::string skipped_reason{};
};

/// The test-file patterns of the reference's project defaults (`project.test_patterns`):
/// the files the tamper guard watches and the pre-patch check runs.
inline constexpr std::array<std::string_view, 5> default_test_file_patterns{
    "**/test_*.py", "**/*_test.py", "**/tests/**", "conftest.py", "**/conftest.py"};

LITTLE_LOOPS_NAMESPACE_END

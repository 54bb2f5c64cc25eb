// little_loops — learning states (`type: learning`, `learning:`) and the host's registry
// SPDX-License-Identifier: MIT
#pragma once

// A learning state proves a list of targets (APIs, SDKs) against the host's learning-test
// registry before the run goes on (the reference's `_execute_learning_state`): a proven
// target passes; a missing or stale one makes the state invoke `/ll:explore-api <target>`
// through the ActionRunner (a slash command) and look again, up to `max_retries` times; a
// refuted one blocks. All proven: the `yes` verdict (`on_yes`); blocked: `on_blocked`, else
// `on_no`. The core reads no file: the registry is the host's (executor_options::
// learning_registry; ll-loop reads `.ll/learning-tests/<slug>.md`).

#include <little_loops/config.hpp>
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definition makes slugs
#  include <little_loops/detail/slugify.hpp>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// A state's `learning:` as written.
struct learning_config {
  std::vector<std::string> targets;            ///< the targets, in order
  std::optional<std::string> targets_csv;      ///< a template rendering comma-separated targets
  int max_retries = 2;                         ///< explorations per target (≥ 0)
  std::optional<std::string> max_retries_expr;  ///< a template rendering max_retries; wins

  friend bool operator==(const learning_config&, const learning_config&) = default;
};

/// What the registry holds for a target, as the reference's executor sees it: a record that
/// is `proven` but too old (the host's staleness rule) reads as `missing`; a status other
/// than `stale` or `refuted` reads as `proven`.
enum class learning_status { missing, proven, stale, refuted };

/// `"missing"`, `"proven"`, `"stale"`, `"refuted"`.
constexpr std::string_view to_string(learning_status s) noexcept {
  switch (s) {
    case learning_status::missing: return "missing";
    case learning_status::proven: return "proven";
    case learning_status::stale: return "stale";
    case learning_status::refuted: return "refuted";
  }
  return "missing";
}

/// The registry's name of a target, as the reference's `slugify`: characters other than
/// word characters, whitespace and `-` dropped, runs of whitespace and `-` made one `-`,
/// `-` trimmed, lower-cased. `"Anthropic SDK streaming"` → `"anthropic-sdk-streaming"`.
LITTLE_LOOPS_INLINE std::string learning_slug(std::string_view target);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::string learning_slug(std::string_view target) {
  return detail::slugify(target, std::numeric_limits<std::size_t>::max());
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END

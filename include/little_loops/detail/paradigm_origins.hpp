// little_loops — where a compiled paradigm loop's parts came from, and its findings in spec terms
// SPDX-License-Identifier: MIT
#pragma once

// Part of validation.hpp (validate_loop() of a paradigm's loop_draft): validate() judges
// the compiled loop; its findings are moved back into the spec, so that they name (and the
// loaders place) what the user wrote.

#include <little_loops/config.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/error.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format and dedupe
#  include <fmt/format.h>
#  include <unordered_set>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// Where the compiled loop's parts came from in the spec: each compiled path (`states.fix.action`)
/// with the spec path it was made from (`tools[1]`).
class paradigm_origins {
 public:
  /// `compiled` (and every path below it) came from `spec`.
  void add(std::string compiled, std::string spec);

  /// `states.<state>.<field>` came from `spec`.
  void add_state_field(std::string_view state, std::string_view field, std::string spec);

  /// Rewrites `path` by its longest recorded prefix (whole dotted segments); unchanged when
  /// none is recorded.
  void map(std::string& path) const;

 private:
  struct text_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept {
      return std::hash<std::string_view>{}(text);
    }
  };
  std::unordered_map<std::string, std::string, text_hash, std::equal_to<>> origins_;
};

/// Appends the compiled loop's findings `checked` to the spec's `found`, each at the spec
/// path `origins` gives. Two compiled parts may come from one spec value (a goal's single
/// tool is both the check and the fix): its finding is reported once.
LITTLE_LOOPS_INLINE void add_spec_findings(diagnostics checked, const paradigm_origins& origins,
                                           diagnostics& found);

/// errc::invalid_spec for the `title` paradigm's spec with the error-level findings in
/// `found` (every finding in error::details): the error's own message when there is one,
/// else a count and the first; error::path is the error's path when there is one.
LITTLE_LOOPS_INLINE error invalid_spec_error(std::string_view title, diagnostics found);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

LITTLE_LOOPS_INLINE void paradigm_origins::add(std::string compiled, std::string spec) {
  origins_.insert_or_assign(std::move(compiled), std::move(spec));
}

LITTLE_LOOPS_INLINE void paradigm_origins::add_state_field(std::string_view state,
                                                           std::string_view field,
                                                           std::string spec) {
  add(member_path(member_path("states", state), field), std::move(spec));
}

LITTLE_LOOPS_INLINE void paradigm_origins::map(std::string& path) const {
  std::size_t end = path.size();
  while (end != 0) {
    if (const auto it = origins_.find(std::string_view(path).substr(0, end));
        it != origins_.end()) {
      path = it->second + path.substr(end);
      return;
    }
    end = path.rfind('.', end - 1);
    if (end == std::string::npos) return;
  }
}

LITTLE_LOOPS_INLINE void add_spec_findings(diagnostics checked, const paradigm_origins& origins,
                                           diagnostics& found) {
  std::unordered_set<std::string> seen;
  for (auto& d : checked) {
    origins.map(d.path);
    if (seen.insert(fmt::format("{}\n{}\n{}\n{}", static_cast<int>(d.level), d.path, d.code,
                                d.message))
            .second)
      found.push_back(std::move(d));
  }
}

LITTLE_LOOPS_INLINE error invalid_spec_error(std::string_view title, diagnostics found) {
  std::size_t errors = 0;
  const diagnostic* first = nullptr;
  for (const auto& d : found)
    if (d.level == severity::error && ++errors == 1) first = &d;
  std::string message =
      errors == 1 ? first->message
                  : fmt::format("invalid {} paradigm spec: {} errors, first: {}", title, errors,
                                first->message);
  std::string where = errors == 1 ? first->path : std::string();
  return error{errc::invalid_spec, std::move(message), std::move(where), std::move(found)};
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END

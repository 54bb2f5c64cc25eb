// little_loops — what composition found wrong, each finding with its own file's position
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp. Composition reads several documents; a finding about a parent's
// `from:` or a library's fragment is located in that document, so each finding carries
// its position, collected in one source_map keyed by the finding's path.

#include <little_loops/config.hpp>
#include <little_loops/document.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/json_fields.hpp>

#include <fmt/format.h>

#include <string>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A document being composed: its value and the position of each value.
struct composing {
  json value;
  source_map positions;
};

/// Findings of one composition and where each is.
struct compose_findings {
  diagnostics list;
  source_map positions;
  errc code = errc::composition_failed;

  /// Records a finding about `path` of the document whose positions are `in`.
  void add(const source_map& in, std::string path, std::string code_name, std::string message,
           severity level = severity::error) {
    if (const auto at = in.locate(path)) positions.add(path, *at);
    report(list, std::move(path), code_name, std::move(message), level);
  }

  /// Takes the findings in `found` (reported at paths of the document `in`).
  void take(diagnostics& found, const source_map& in) {
    for (auto& d : found) {
      if (const auto at = in.locate(d.path)) positions.add(d.path, *at);
      list.push_back(std::move(d));
    }
    found.clear();
  }

  /// A resolver's failure for a name written at `path` of `in`.
  void not_found(const source_map& in, std::string path, const error& why) {
    code = why.code == errc::reference_not_found ? errc::reference_not_found : code;
    add(in, std::move(path), why.code == errc::reference_not_found ? "not-found" : "unreadable",
        why.message);
  }

  [[nodiscard]] bool failed() const noexcept { return count_errors(list) > 0; }

  /// The findings as an error: its message is the first error, with its position.
  [[nodiscard]] error to_error() const {
    const diagnostic* first = nullptr;
    for (const auto& d : list)
      if (first == nullptr && d.level == severity::error) first = &d;
    std::string message = first == nullptr ? std::string("composition failed")
                                            : format_diagnostic(*first, &positions);
    return error{code, std::move(message), first == nullptr ? std::string() : first->path, list};
  }
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
